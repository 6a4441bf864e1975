//! A job's views read back by real consumers: a 20-step job (two steps
//! overlapping, a gap, one step exiting 3, the last interrupted, a hostile
//! name) as Markdown (pulldown-cmark), HTML (headless Chromium: the step
//! table's 20 DOM rows equal to the job file), a Chrome trace (JSON:
//! lanes, the machine's samples once, the gap), SVG (roxmltree) and
//! OpenMetrics (prometheus_client); groups and cached steps in every view.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::chromium::{Chromium, chromium_or_skip};
use common::job::{end_with, entries_of, line, sample_lines, sample_with, start, sys};
use common::markdown::read_markdown;
use jiff::{SignedDuration, Timestamp};
use serde_json::Value;
use stepmon_export::Format;
use stepmon_export::job as views;
use stepmon_model::job::Record;
use stepmon_report::job::{self, Entry, StepStatus};

const T0: &str = "2026-12-01T10:00:00Z";
const STEPS: usize = 20;
/// The steps' wall time, s.
const WALL: f64 = 1.5;

fn at(offset: f64) -> Timestamp {
    common::job::ts(T0).checked_add(SignedDuration::from_secs_f64(offset)).unwrap()
}

/// Where step `i` starts, s after T0: each when the one before ends, but
/// step 6 half a second after step 5 starts (they overlap), and step 10
/// 5.5 s after step 9 ends (a gap).
fn offset(i: usize) -> f64 {
    match i {
        0..=5 => WALL * i as f64,
        6..=9 => 8.0 + WALL * (i - 6) as f64,
        _ => 14.0 + 5.5 + WALL * (i - 10) as f64,
    }
}

fn name(i: usize) -> String {
    if i == 2 { "a|b <script>x</script>".to_owned() } else { format!("step-{i:02}") }
}

/// The shared machine sample of the overlapping steps 5 and 6 (recorded by
/// both: it must count once).
fn shared_sys() -> Value {
    sys(at(8.5), 85.0, 85.0, 16 * 1024 * 1024, 8, 0)
}

/// The 20-step job record.
fn twenty() -> String {
    let mut text = String::new();
    for i in 0..STEPS {
        let s = offset(i);
        let step = start(100 + i as u32, &at(s).to_string(), &name(i));
        let samples: Vec<_> = [0.0, 0.75, WALL]
            .iter()
            .map(|d| sample_with(at(s + d), (d * 5e8) as u64, (64 + i as u64) << 20, 0))
            .collect();
        text += &line(Record::StepStart(step.clone()));
        text += &sample_lines(&step, &samples);
        if i + 1 == STEPS {
            continue; // interrupted: no end
        }
        let mut machine = vec![sys(at(s), 10.0 * s, 10.0 * s, 16 * 1024 * 1024, 8, 0)];
        if i == 5 || i == 6 {
            machine.push(shared_sys());
        }
        machine.push(sys(at(s + WALL), 10.0 * (s + WALL), 10.0 * (s + WALL), 16 * 1024 * 1024, 8, 0));
        text += &end_with(&step, at(s + WALL), if i == 3 { 3 } else { 0 }, &samples, &machine);
    }
    text
}

fn entries() -> Vec<Entry> {
    entries_of(&twenty())
}

#[test]
fn markdown_of_a_20_step_job_reads_back() {
    let entries = entries();
    let md = views::markdown::render(&entries, &["job.jsonl: line 99 lost".to_owned()]);
    let read = read_markdown(&md);
    assert!(read.html.is_empty(), "a name became HTML: {:?}", read.html);
    assert_eq!(read.headings, ["stepmon job"]);
    let (head, rows) = read.rows.split_first().unwrap();
    assert_eq!(head[1], "step");
    assert_eq!(rows.len(), STEPS, "{md}");
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row[0], (i + 1).to_string());
        assert_eq!(row[1], name(i), "row {i}");
        let exit = match i {
            3 => "3",
            19 => "—",
            _ => "0",
        };
        assert_eq!(row[10], exit, "row {i}");
    }
    assert_eq!(rows[19][9], "INTERRUPTED");
    assert_eq!(rows[19][3], "1.50 s", "its wall so far");
    assert!(read.items.iter().any(|i| i.starts_with("interrupted: step-19 (job.jsonl)")), "{:?}", read.items);
    assert!(read.items.iter().any(|i| i.starts_with("gap: +14.00 s to +19.50 s (5.50 s)")), "{:?}", read.items);
    assert!(read.items.iter().any(|i| i == "job.jsonl: line 99 lost"), "{:?}", read.items);
    assert!(read.items.iter().any(|i| i.starts_with("the job used ")), "the job's verdict: {:?}", read.items);
}

/// Reads the job table and the parts of the page as laid out.
const MEASURE: &str = r"<script>
(function () {
  const rows = Array.from(document.querySelectorAll('table.job-steps tbody tr')).map(tr =>
    ({ status: tr.dataset.status, cells: Array.from(tr.cells).map(td => td.textContent) }));
  const timeline = document.querySelector('figure.timeline svg.stepmon-timeline');
  const result = { rows, sections: document.querySelectorAll('section.step').length,
    statuses: Array.from(document.querySelectorAll('section.step p.status')).map(p => p.textContent),
    timelineNs: timeline && timeline.namespaceURI, timelineWidth: timeline && timeline.getBoundingClientRect().width,
    bars: Array.from(document.querySelectorAll('svg.stepmon-timeline rect.bar')).map(r => r.getBBox().width),
    gaps: document.querySelectorAll('svg.stepmon-timeline rect.gap').length,
    charts: document.querySelectorAll('svg.stepmon-chart').length, scripts: document.querySelectorAll('script').length };
  const pre = document.createElement('pre');
  pre.id = 'stepmon-check';
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
})();
</script>";

#[test]
fn html_of_a_20_step_job_in_chromium() {
    let test = "html_of_a_20_step_job_in_chromium";
    let Some(binary) = chromium_or_skip(test) else { return };
    let tmp = tempfile::Builder::new().prefix("stepmon-job-html-").tempdir().unwrap();
    let chromium = Chromium::new(binary, tmp.path().join("profile"));
    let text = twenty();
    let page = views::html::render(&entries_of(&text), &[]);
    // The page as written: no script of its own, the hostile name as text.
    let plain = tmp.path().join("job.html");
    std::fs::write(&plain, &page).unwrap();
    let dom = chromium.dump_dom(&plain);
    assert!(!dom.contains("<script"), "a name became a script");
    assert!(dom.contains("a|b &lt;script&gt;x&lt;/script&gt;"));
    // A copy with the measuring script (and without the CSP that blocks it).
    let result = common::measured(&chromium, &page, MEASURE, tmp.path());
    // The rows equal the job file: its steps by start, their exit codes.
    let record = job::read(&text);
    let mut steps: Vec<_> = record.steps.iter().collect();
    steps.sort_by_key(|s| s.start.as_ref().map(|s| s.start));
    let rows = result["rows"].as_array().unwrap();
    assert_eq!(rows.len(), STEPS, "{result}");
    for (row, step) in rows.iter().zip(&steps) {
        let cells: Vec<&str> = row["cells"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        let start = step.start.as_ref().unwrap();
        assert_eq!(cells[1], start.name);
        let (status, exit) = match step.status() {
            StepStatus::Ended { exit_code } => ("ended", exit_code.to_string()),
            StepStatus::Interrupted { .. } => ("interrupted", "—".to_owned()),
            other => panic!("{other:?}"),
        };
        assert_eq!((row["status"].as_str().unwrap(), cells[10]), (status, exit.as_str()), "{}", start.name);
        assert_eq!(cells[2], format!("+{}", stepmon_report::units::seconds(offset(start.name_index()))));
    }
    assert_eq!(result["sections"], STEPS);
    assert_eq!(result["charts"], STEPS);
    assert_eq!(result["timelineNs"], "http://www.w3.org/2000/svg");
    assert!(result["timelineWidth"].as_f64().unwrap() >= 700.0, "{result}");
    let bars = result["bars"].as_array().unwrap();
    assert_eq!(bars.len(), STEPS);
    assert!(bars.iter().all(|w| w.as_f64().unwrap() > 1.0), "every bar laid out: {bars:?}");
    assert_eq!(result["gaps"], 1);
    let statuses = result["statuses"].as_array().unwrap();
    assert!(statuses[19].as_str().unwrap().starts_with("interrupted: step-19"), "{statuses:?}");
}

/// The index of a step of [`twenty`] by its name.
trait NameIndex {
    fn name_index(&self) -> usize;
}

impl NameIndex for stepmon_model::job::StepStart {
    fn name_index(&self) -> usize {
        (0..STEPS).find(|i| name(*i) == self.name).unwrap()
    }
}

fn slices(trace: &Value) -> Vec<&Value> {
    trace["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X" && e["cat"] == "step").collect()
}

#[test]
fn trace_of_the_job_reads_back() {
    let entries = entries();
    let trace: Value = serde_json::from_str(&views::trace::render(&entries)).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let slices = slices(&trace);
    assert_eq!(slices.len(), STEPS);
    let slice = |i: usize| *slices.iter().find(|s| s["args"]["step"] == name(i).as_str()).unwrap();
    // Every step on process 1; only the overlapping step 6 off the first lane.
    for i in 0..STEPS {
        assert_eq!(slice(i)["pid"], 1, "{i}");
        assert_eq!(slice(i)["tid"], if i == 6 { 2 } else { 1 }, "{i}");
        let ts = slice(i)["ts"].as_f64().unwrap();
        assert!((ts - offset(i) * 1e6).abs() < 1.0, "{i}: {ts}");
        assert!((slice(i)["dur"].as_f64().unwrap() - WALL * 1e6).abs() < 1.0, "{i}");
    }
    assert_eq!(slice(19)["args"]["status"], "interrupted");
    assert_eq!(slice(19)["cname"], "terrible");
    assert_eq!(slice(3)["args"]["exitCode"], 3);
    // The machine: its own process, its samples once.
    let machine_pid = events
        .iter()
        .find(|e| e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "machine")
        .map(|e| e["pid"].clone())
        .unwrap();
    let busy: Vec<f64> = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == "machine cpu busy")
        .map(|e| {
            assert_eq!(e["pid"], machine_pid);
            e["ts"].as_f64().unwrap()
        })
        .collect();
    // Each distinct reading once (steps back to back share their boundary
    // reading, steps 5 and 6 one more): an interval between each two.
    let readings: std::collections::BTreeSet<Timestamp> =
        entries.iter().flat_map(|e| e.step.usage.sys_usage.iter().map(|s| s.timestamp)).collect();
    let recorded: usize = entries.iter().map(|e| e.step.usage.sys_usage.len()).sum();
    assert!(readings.len() < recorded, "the job has readings several steps recorded");
    assert_eq!(busy.len(), readings.len() - 1, "{busy:?}");
    assert!(busy.windows(2).all(|w| w[0] < w[1]), "once each, in time order: {busy:?}");
    assert!(events.iter().filter(|e| e["ph"] == "C").all(|e| !e["name"].as_str().unwrap().contains(": machine")));
    let gaps: Vec<&Value> = events.iter().filter(|e| e["cat"] == "gap").collect();
    assert_eq!(gaps.len(), 1);
    assert!(
        (gaps[0]["ts"].as_f64().unwrap() - 14e6).abs() < 1.0 && (gaps[0]["dur"].as_f64().unwrap() - 5.5e6).abs() < 1.0
    );
    assert_eq!(trace["otherData"]["interrupted"], serde_json::json!(["step-19"]));
    assert_eq!(trace["otherData"]["gaps"], 1);
}

#[test]
fn a_group_is_one_process_and_a_cached_step_reads_cached_everywhere() {
    let mut entries = entries();
    for e in entries.iter_mut().take(4) {
        *e = e.clone().in_group("buildkit: app".to_owned());
    }
    entries[1].status = StepStatus::Cached;
    let trace: Value = serde_json::from_str(&views::trace::render(&entries)).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let group_pid = events
        .iter()
        .find(|e| e["ph"] == "M" && e["args"]["name"] == "group: buildkit: app")
        .map(|e| e["pid"].clone())
        .expect("the group's process");
    let slices = slices(&trace);
    for (i, s) in slices.iter().enumerate() {
        let pid = if i < 4 { group_pid.clone() } else { Value::from(1) };
        assert_eq!(s["pid"], pid, "{}", s["name"]);
    }
    assert_eq!(slices[1]["args"]["status"], "cached");
    assert_eq!(trace["otherData"]["cached"], serde_json::json!(["step-01"]));
    for (format, name) in Format::ALL.iter().map(|(n, f)| (*f, *n)) {
        let text = views::render(format, &entries, &[]);
        assert!(text.contains("cached"), "{name} does not say cached");
        assert!(text.contains("interrupted"), "{name} does not say interrupted");
        if !matches!(format, Format::OpenMetrics | Format::Prometheus | Format::Trace | Format::Svg | Format::Json) {
            assert!(text.contains("buildkit: app"), "{name} does not name the group");
        }
    }
}

#[test]
fn svg_of_the_job_is_one_document() {
    let svg = views::svg::render(&entries());
    let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
    let class =
        |n: &roxmltree::Node<'_, '_>, c: &str| n.attribute("class").is_some_and(|a| a.split(' ').any(|x| x == c));
    let steps: Vec<_> = doc.descendants().filter(|n| class(n, "step") && n.tag_name().name() == "g").collect();
    assert_eq!(steps.len(), STEPS);
    assert_eq!(steps[19].attribute("data-status"), Some("interrupted"));
    assert_eq!(doc.descendants().filter(|n| class(n, "gap")).count(), 1);
    assert_eq!(doc.descendants().filter(|n| class(n, "stepmon-chart")).count(), STEPS);
    let marks: Vec<_> = doc.descendants().filter(|n| class(n, "status") && class(n, "interrupted")).collect();
    assert_eq!(marks.len(), 1);
    assert!(marks[0].text().unwrap().starts_with("interrupted: the record ends at 2026-12-01T10:00:"));
}

/// A parsed sample's value (the checker writes Python's `repr`).
fn value(sample: &Value) -> f64 {
    sample["value"].as_str().unwrap().parse().unwrap()
}

#[test]
fn openmetrics_of_the_job_parse_with_each_steps_status() {
    let Some(python) = common::openmetrics_python_or_skip("openmetrics_of_the_job_parse_with_each_steps_status") else {
        return;
    };
    let text = views::metrics::openmetrics(&entries());
    let checker = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/check_openmetrics.py");
    let (ok, stdout, stderr) = common::pipe(&python, &[checker], &text);
    assert!(ok, "rejected: {stderr}\n{text}");
    let parsed: Value = serde_json::from_slice(&stdout).unwrap();
    let family = |name: &str| {
        parsed["families"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))
            .clone()
    };
    let status = family("stepmon_job_step_status");
    assert_eq!(status["type"], "stateset");
    let on: Vec<(String, String)> = status["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| value(s) == 1.0)
        .map(|s| {
            let l = &s["labels"];
            (l["step"].as_str().unwrap().to_owned(), l["stepmon_job_step_status"].as_str().unwrap().to_owned())
        })
        .collect();
    assert_eq!(on.len(), STEPS, "one state true per step");
    assert_eq!(on[19], ("step-19".to_owned(), "interrupted".to_owned()));
    assert!(on[..19].iter().all(|(_, s)| s == "ended"));
    // The interrupted step has no exit code sample: absent, never a 0.
    let exits = family("stepmon_step_exit_code");
    assert_eq!(exits["samples"].as_array().unwrap().len(), STEPS - 1);
    let steps = family("stepmon_job_steps");
    assert_eq!(value(&steps["samples"][0]), STEPS as f64);
    let cpu = family("stepmon_job_cpu_usage_seconds");
    assert_eq!(cpu["type"], "counter");
    // 20 steps × 0.75 s of CPU.
    assert!((value(&cpu["samples"][0]) - 15.0).abs() < 1e-6, "{cpu}");
}

#[test]
fn gitlab_metrics_of_the_job_parse_with_stable_labels_and_each_steps_status() {
    let name = "gitlab_metrics_of_the_job_parse_with_stable_labels_and_each_steps_status";
    let Some(python) = common::openmetrics_python_or_skip(name) else { return };
    let mut entries = entries();
    // Two steps of one name stay two metrics.
    entries[3].step.name = entries[2].step.name.clone();
    // A number measured where stepmon's rights reached says so.
    entries[5].step.sources.cpu = Some(stepmon_model::source::Source::upper_bound(
        stepmon_model::source::Rung::EnclosingCgroup,
        "the cgroup stepmon runs in",
    ));
    let text = views::gitlab::render(&entries);
    let checker = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/check_openmetrics.py");
    let (ok, stdout, stderr) = common::pipe(&python, &[checker], &text);
    assert!(ok, "rejected: {stderr}\n{text}");
    let parsed: Value = serde_json::from_slice(&stdout).unwrap();
    let families = parsed["families"].as_array().unwrap();
    let names: Vec<&str> = families.iter().map(|f| f["name"].as_str().unwrap()).collect();
    for wanted in [
        "stepmon_step_wall_seconds",
        "stepmon_step_cpu_usage_seconds",
        "stepmon_job_step_status",
        "stepmon_job_wall_seconds",
        "stepmon_job_cpu_usage_seconds",
        "stepmon_job_memory_peak_bytes",
    ] {
        assert!(names.contains(&wanted), "no {wanted} in {names:?}");
    }
    for family in families {
        for sample in family["samples"].as_array().unwrap() {
            for key in sample["labels"].as_object().unwrap().keys() {
                assert!(
                    ["step", "group", "resource", "stepmon_job_step_status", "rung", "bound"].contains(&key.as_str()),
                    "{key} would change from run to run or is not the step's: {sample}"
                );
            }
        }
    }
    let walls: Vec<&str> = families.iter().find(|f| f["name"] == "stepmon_step_wall_seconds").unwrap()["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["labels"]["step"].as_str().unwrap())
        .collect();
    assert_eq!(walls.len(), STEPS);
    assert_eq!(walls[3], format!("{} (2)", walls[2]));
    let cpu = families.iter().find(|f| f["name"] == "stepmon_step_cpu_usage_seconds").unwrap();
    let qualified: Vec<&Value> =
        cpu["samples"].as_array().unwrap().iter().filter(|s| s["labels"].get("rung").is_some()).collect();
    assert_eq!(qualified.len(), 1, "{cpu}");
    assert_eq!(qualified[0]["labels"]["step"], walls[5]);
    assert_eq!(qualified[0]["labels"]["rung"], "enclosingCgroup");
    assert_eq!(qualified[0]["labels"]["bound"], "upperBound");
    let status = families.iter().find(|f| f["name"] == "stepmon_job_step_status").unwrap();
    let interrupted: Vec<&Value> = status["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| value(s) == 1.0 && s["labels"]["stepmon_job_step_status"] == "interrupted")
        .collect();
    assert_eq!(interrupted.len(), 1);
    assert_eq!(interrupted[0]["labels"]["step"], "step-19");
}
