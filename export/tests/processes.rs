//! The step's per-process records in the exports: the table of the top
//! commands in the Markdown and HTML (read back by a CommonMark and an XML
//! parser, labels escaped), and a trace track per top process.

use stepmon_model::document::RunDocument;
use stepmon_model::processes::{CpuTime, Keep, ProcessRecord, Processes};
use stepmon_report::Step;

fn process(command: &str, pid: u32, cpu: f64, rss: u64, written: u64) -> ProcessRecord {
    ProcessRecord {
        command: command.to_owned(),
        pid,
        start_unix_seconds: u64::from(pid),
        threads: 1,
        cpu_seconds: cpu,
        cpu_time: Some(CpuTime::Exact),
        peak_rss_bytes: Some(rss),
        read_bytes: Some(0),
        write_bytes: Some(written),
        ..ProcessRecord::default()
    }
}

fn with_args(mut p: ProcessRecord, line: &str) -> ProcessRecord {
    p.args = line.split(' ').map(str::to_owned).collect();
    p
}

/// A run document with these processes and memory samples from the step's cgroup.
fn run_with(processes: Option<Processes>) -> Step {
    let json = r#"{"resourceUsage": {"samples": [
        {"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {"usageNanos": 0}, "memoryStat": {"peak": 1000}, "pidsStat": {}},
        {"timestamp": "2026-11-30T10:00:02Z", "cpuStat": {"usageNanos": 1500000000}, "memoryStat": {"peak": 200000000}, "pidsStat": {}}]},
      "sysUsage": [],
      "stepmon": {"command": ["make"], "exitCode": 0,
        "start": "2026-11-30T10:00:00Z", "end": "2026-11-30T10:00:02Z"}}"#;
    let mut document: RunDocument = serde_json::from_str(json).unwrap();
    document.stepmon.as_mut().unwrap().processes = processes;
    Step::from_run(&document)
}

#[test]
fn the_markdown_has_a_table_of_the_top_commands() {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let p = Processes::build(
        vec![process("cc1|plus", 8841, 0.75, 150 << 20, 0), process("ld", 9, 0.25, 20 << 20, 1 << 20)],
        Keep::default(),
        2,
        0,
    );
    let markdown = stepmon_export::markdown::render(&[run_with(Some(p))]);
    // Read it back with a CommonMark + GFM tables parser: the last table's rows, cell by cell.
    let (mut tables, mut row, mut cell, mut in_cell) = (Vec::new(), Vec::new(), String::new(), false);
    for event in Parser::new_ext(&markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Table(_)) => tables.push(Vec::new()),
            Event::Start(Tag::TableCell) => (in_cell, cell) = (true, String::new()),
            Event::End(TagEnd::TableCell) => {
                in_cell = false;
                row.push(std::mem::take(&mut cell));
            }
            Event::End(TagEnd::TableRow | TagEnd::TableHead) => {
                tables.last_mut().unwrap().push(std::mem::take(&mut row))
            }
            Event::Text(t) | Event::Code(t) if in_cell => cell.push_str(&t),
            _ => {}
        }
    }
    let table = tables.last().unwrap();
    assert_eq!(table[0][0], "Command");
    assert_eq!(table[1], ["cc1|plus", "1", "750.0 ms", "50.0%", "150.0 MiB (pid 8841)", "0 B", "0 B"], "{markdown}");
    assert_eq!(table[2][0], "ld");
    assert_eq!(table[2][6], "1.0 MiB");
}

#[test]
fn the_trace_has_a_track_per_top_process_with_its_lifetime_and_peak() {
    let start: jiff::Timestamp = "2026-11-30T10:00:00Z".parse().unwrap();
    let mut cc = process("cc1plus", 8841, 1.0, 150 << 20, 0);
    (cc.start_unix_seconds, cc.elapsed_seconds) = (u64::try_from(start.as_second()).unwrap() + 1, 0.5);
    let mut ld = process("ld", 9, 0.2, 20 << 20, 4096);
    (ld.start_unix_seconds, ld.elapsed_seconds) = (u64::try_from(start.as_second()).unwrap(), 1.5);
    let step = run_with(Some(Processes::build(vec![cc, ld], Keep::default(), 2, 0)));
    let trace: serde_json::Value = serde_json::from_str(&stepmon_export::trace::render(&[step])).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let slices: Vec<_> = events.iter().filter(|e| e["cat"] == "process").collect();
    assert_eq!(slices.len(), 2, "each process once though it is in several top lists: {slices:#?}");
    let (ld, cc) = (slices[0], slices[1]);
    assert_eq!(
        (ld["name"].as_str(), ld["ph"].as_str(), ld["pid"].as_u64(), ld["tid"].as_u64()),
        (Some("ld"), Some("X"), Some(2), Some(9))
    );
    assert_eq!(
        (ld["ts"].as_f64(), ld["dur"].as_f64(), ld["args"]["writeBytes"].as_u64()),
        (Some(0.0), Some(1.5e6), Some(4096))
    );
    assert_eq!((cc["name"].as_str(), cc["ts"].as_f64(), cc["dur"].as_f64()), (Some("cc1plus"), Some(1e6), Some(0.5e6)));
    assert_eq!(cc["args"]["peakRssBytes"].as_u64(), Some(150 << 20));
    let named = |name: &str, tid: u64| {
        events
            .iter()
            .find(|e| e["ph"] == "M" && e["name"] == name && e["pid"] == 2 && e["tid"] == tid)
            .map(|e| e["args"].clone())
    };
    assert_eq!(named("process_name", 0).unwrap()["name"], "1: make processes");
    assert_eq!(named("thread_name", 8841).unwrap()["name"], "cc1plus 8841");
    // A sub-second lifetime (its fork event's stamp) is drawn to the microsecond.
    let mut forked = process("cc1plus", 8842, 1.0, 150 << 20, 0);
    let at = |ms: i64| start.checked_add(jiff::SignedDuration::from_millis(ms)).unwrap();
    (forked.start, forked.end) = (Some(at(1_250)), Some(at(1_750)));
    forked.lifetime = Some(stepmon_model::processes::Lifetime::ForkEvent);
    (forked.start_unix_seconds, forked.elapsed_seconds) = (u64::try_from(start.as_second()).unwrap() + 1, 0.5);
    let step = run_with(Some(Processes::build(vec![forked], Keep::default(), 1, 0)));
    let trace: serde_json::Value = serde_json::from_str(&stepmon_export::trace::render(&[step])).unwrap();
    let slice = trace["traceEvents"].as_array().unwrap().iter().find(|e| e["cat"] == "process").unwrap().clone();
    assert_eq!((slice["ts"].as_f64(), slice["dur"].as_f64()), (Some(1.25e6), Some(0.5e6)), "{slice:#}");
    // Without processes, no such track.
    let bare: serde_json::Value = serde_json::from_str(&stepmon_export::trace::render(&[run_with(None)])).unwrap();
    assert!(!bare["traceEvents"].as_array().unwrap().iter().any(|e| e["pid"] == 2));
}

#[test]
fn the_html_has_a_table_of_the_top_commands() {
    let p = Processes::build(
        vec![process("cc1<plus>", 8841, 0.75, 150 << 20, 0), process("ld", 9, 0.25, 20 << 20, 1 << 20)],
        Keep::default(),
        2,
        0,
    );
    let html = stepmon_export::html::render(&[run_with(Some(p))]);
    // The table is well-formed XML: read it back with an XML parser, cell by cell.
    let start = html.find("<table class=\"processes\">").unwrap_or_else(|| panic!("no processes table: {html}"));
    let end = start + html[start..].find("</table>").unwrap() + "</table>".len();
    let doc = roxmltree::Document::parse(&html[start..end]).unwrap();
    let rows: Vec<Vec<String>> = doc
        .descendants()
        .filter(|n| n.has_tag_name("tr"))
        .map(|tr| tr.children().filter(|c| c.is_element()).map(|c| c.text().unwrap_or("").to_owned()).collect())
        .collect();
    assert_eq!(rows[0][0], "Command");
    assert_eq!(rows[1], ["cc1<plus>", "1", "750.0 ms", "50.0%", "150.0 MiB (pid 8841)", "0 B", "0 B"], "{html}");
    assert_eq!((rows[2][0].as_str(), rows[2][6].as_str()), ("ld", "1.0 MiB"));
    let caption = doc.descendants().find(|n| n.has_tag_name("caption")).and_then(|n| n.text());
    assert_eq!(caption, Some("2 processes, none lost"));
    assert!(!stepmon_export::html::render(&[run_with(None)]).contains("class=\"processes\""));
}

#[test]
fn labels_are_escaped_in_the_markdown_and_html_tables() {
    let markdown_cells = |markdown: &str| -> Vec<Vec<String>> {
        use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
        let (mut rows, mut row, mut cell, mut in_cell) = (Vec::new(), Vec::new(), String::new(), false);
        for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
            match event {
                Event::Start(Tag::Table(_)) => rows.clear(),
                Event::Start(Tag::TableCell) => (in_cell, cell) = (true, String::new()),
                Event::End(TagEnd::TableCell) => {
                    in_cell = false;
                    row.push(std::mem::take(&mut cell));
                }
                Event::End(TagEnd::TableRow | TagEnd::TableHead) => rows.push(std::mem::take(&mut row)),
                Event::Text(t) | Event::Code(t) if in_cell => cell.push_str(&t),
                _ => {}
            }
        }
        rows
    };
    let p = Processes::build(
        vec![with_args(process("cc1plus", 8841, 0.75, 150 << 20, 0), "cc1plus src/a|<b>*_c`.cpp")],
        Keep::default(),
        1,
        0,
    );
    let step = run_with(Some(p));
    let rows = markdown_cells(&stepmon_export::markdown::render(std::slice::from_ref(&step)));
    assert_eq!(rows[1][4], "150.0 MiB (pid 8841, a|<b>*_c`.cpp)", "{rows:?}");
    let html = stepmon_export::html::render(&[step]);
    let start = html.find("<table class=\"processes\">").unwrap();
    let end = start + html[start..].find("</table>").unwrap() + "</table>".len();
    let doc = roxmltree::Document::parse(&html[start..end]).unwrap();
    let cells: Vec<&str> = doc.descendants().filter(|n| n.has_tag_name("td")).filter_map(|n| n.text()).collect();
    assert!(cells.contains(&"150.0 MiB (pid 8841, a|<b>*_c`.cpp)"), "{cells:?}");
}

#[test]
fn the_trace_names_the_largest_process_by_its_input() {
    let big = with_args(process("cc1plus", 8841, 0.5, 150 << 20, 0), "cc1plus -quiet src/foo.cpp -o /tmp/foo.s");
    let small = with_args(process("cc1plus", 8842, 0.25, 10 << 20, 0), "cc1plus -quiet src/bar.cpp -o /tmp/bar.s");
    let unread = process("ld", 9, 0.1, 1 << 20, 0);
    let step = run_with(Some(Processes::build(vec![big, small, unread], Keep::default(), 3, 0)));
    let trace: serde_json::Value = serde_json::from_str(&stepmon_export::trace::render(&[step])).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let named = |tid: u64| events.iter().find(|e| e["name"] == "thread_name" && e["pid"] == 2 && e["tid"] == tid);
    assert_eq!(named(8841).unwrap()["args"]["name"], "cc1plus 8841 foo.cpp");
    assert_eq!(named(9).unwrap()["args"]["name"], "ld 9");
    let slice = events.iter().find(|e| e["cat"] == "process" && e["tid"] == 8841).unwrap();
    assert_eq!(slice["args"]["args"][2], "src/foo.cpp");
}
