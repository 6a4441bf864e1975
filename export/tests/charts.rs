//! The SVG chart and the Markdown export of every recorded run, read back by
//! real parsers: roxmltree for the SVG (well-formed XML in the SVG
//! namespace, one polyline per recorded series with one vertex per point,
//! finite coordinates, tick labels) and pulldown-cmark with GitHub's table
//! extension for the Markdown (table values equal to the summary, verdicts
//! as list items, hostile step names staying text).
//!
//! Set `STEPMON_REPORT_OUT=DIR` to also write each run's `.svg`, `.md` and
//! `.html` there for a look.

mod common;

use std::path::Path;

use common::markdown::{Read, read_markdown};
use stepmon_export::{html, markdown, svg};
use stepmon_report::series::StepSeries;
use stepmon_report::{Step, units};

const SVG_NS: &str = "http://www.w3.org/2000/svg";

fn run(stem: &str) -> Step {
    common::runs::load(stem)
}

fn has_class(node: &roxmltree::Node<'_, '_>, class: &str) -> bool {
    node.attribute("class").is_some_and(|c| c == class)
}

fn texts_with_class(doc: &roxmltree::Document<'_>, class: &str) -> Vec<String> {
    doc.descendants()
        .filter(|n| n.has_tag_name((SVG_NS, "text")) && has_class(n, class))
        .map(|n| n.text().unwrap_or_default().to_owned())
        .collect()
}

/// Checks that `svg` is well-formed SVG whose coordinates are all finite and
/// inside its viewBox; returns the parsed document's text for more checks.
fn parse_svg(svg: &str) -> roxmltree::Document<'_> {
    let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("not XML: {e}\n{svg}"));
    let root = doc.root_element();
    assert!(root.has_tag_name((SVG_NS, "svg")), "root is {:?}", root.tag_name());
    assert_eq!(root.attribute("class"), Some("stepmon-chart"));
    let number = |v: &str| v.parse::<f64>().unwrap_or_else(|_| panic!("not a number: {v:?}"));
    let (width, height) = (number(root.attribute("width").unwrap()), number(root.attribute("height").unwrap()));
    for node in doc.descendants().filter(roxmltree::Node::is_element) {
        for attr in node.attributes() {
            let value = attr.value();
            if ["x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "width", "height"].contains(&attr.name()) {
                let v = number(value);
                assert!(v.is_finite() && v >= 0.0, "{} {}={value}", node.tag_name().name(), attr.name());
                let limit = if attr.name().starts_with('y') || attr.name() == "height" { height } else { width };
                assert!(v <= limit, "{} {}={value} outside {width}×{height}", node.tag_name().name(), attr.name());
            }
            if attr.name() == "points" {
                for pair in value.split(' ') {
                    let (x, y) = pair.split_once(',').expect("x,y");
                    let (x, y) = (number(x), number(y));
                    assert!((0.0..=width).contains(&x) && (0.0..=height).contains(&y), "point {pair}");
                }
            }
        }
    }
    doc
}

#[test]
fn every_chart_is_svg_with_one_polyline_per_recorded_series() {
    let mut drawn = 0;
    for (stem, step) in common::runs::runs() {
        let svg = svg::chart(&step);
        let doc = parse_svg(&svg);
        let series = StepSeries::of(&step);
        for (class, points) in common::series_by_class(&series) {
            let lines: Vec<_> = doc
                .descendants()
                .filter(|n| n.has_tag_name((SVG_NS, "polyline")) && has_class(n, &format!("series {class}")))
                .collect();
            if points.is_empty() {
                assert!(lines.is_empty(), "{stem}: {class} drawn without points");
                continue;
            }
            assert_eq!(lines.len(), 1, "{stem}: polylines of {class}");
            let vertices = lines[0].attribute("points").unwrap_or_default().split(' ').count();
            assert_eq!(vertices, points.len(), "{stem}: vertices of {class}");
            drawn += 1;
        }
        // Both main panels are always there: with a line or saying "not measured".
        for (panel, points) in [("memory", &series.memory_bytes), ("cpu", &series.cpu_cores)] {
            let g = doc
                .descendants()
                .find(|n| n.has_tag_name((SVG_NS, "g")) && has_class(n, &format!("panel {panel}")))
                .unwrap_or_else(|| panic!("{stem}: no {panel} panel"));
            let says_missing = g.descendants().any(|n| has_class(&n, "not-measured"));
            assert_eq!(says_missing, points.is_empty(), "{stem}: {panel} 'not measured'");
        }
        let x_ticks = texts_with_class(&doc, "tick x");
        let y_ticks = texts_with_class(&doc, "tick y");
        assert!(x_ticks.len() >= 2 && x_ticks.iter().all(|t| !t.is_empty()), "{stem}: x ticks {x_ticks:?}");
        assert!(
            x_ticks.iter().filter(|t| *t != "0").all(|t| t.ends_with(" s") || t.ends_with("ms")),
            "{stem}: {x_ticks:?}"
        );
        assert!(y_ticks.len() >= 4, "{stem}: y ticks {y_ticks:?}");
        if !series.memory_bytes.is_empty() {
            assert!(y_ticks.iter().any(|t| t.ends_with("MiB") || t.ends_with("KiB")), "{stem}: {y_ticks:?}");
        }
        let title = doc.descendants().find(|n| n.has_tag_name((SVG_NS, "title"))).and_then(|n| n.text());
        assert_eq!(title, Some(format!("stepmon: {}", step.name).as_str()));
        if let Ok(dir) = std::env::var("STEPMON_REPORT_OUT") {
            let dir = Path::new(&dir);
            std::fs::create_dir_all(dir).expect("create STEPMON_REPORT_OUT");
            std::fs::write(dir.join(format!("{stem}.svg")), &svg).expect("write svg");
            std::fs::write(dir.join(format!("{stem}.md")), markdown::render(std::slice::from_ref(&step))).expect("md");
            std::fs::write(dir.join(format!("{stem}.html")), html::render(std::slice::from_ref(&step))).expect("html");
        }
    }
    assert!(drawn >= 8, "only {drawn} series drawn over all runs");
}

#[test]
fn the_pure_v2_chart_shows_memory_anon_file_limits_and_stalls() {
    let step = run("pure-v2-6.1-oom-throttled-io");
    let svg = svg::chart(&step);
    let doc = parse_svg(&svg);
    let series = StepSeries::of(&step);
    // Recorded: 4 samples with memory.current, so 4 memory points and 3 CPU intervals.
    assert_eq!(series.memory_bytes.len(), 4);
    assert_eq!(series.cpu_cores.len(), 3);
    for class in ["series memory", "series memory-anon", "series memory-file", "series cpu", "series cpu-stall"] {
        assert!(doc.descendants().any(|n| has_class(&n, class)), "{class} missing");
    }
    // memory.max (48 MiB) and cpu.max (50000/100000 = 0.5 cores) were set.
    let limits: Vec<_> = doc.descendants().filter(|n| n.has_tag_name((SVG_NS, "line"))).collect();
    assert!(limits.iter().any(|n| has_class(n, "limit memory")));
    assert!(limits.iter().any(|n| has_class(n, "limit cpu")));
    // memory.current at the samples stayed near 1 MiB; the kernel's peak was 48 MiB.
    let peak = limits.iter().find(|n| has_class(n, "peak memory")).expect("peak line");
    let title = peak.children().find(|n| n.has_tag_name((SVG_NS, "title"))).and_then(|n| n.text());
    assert_eq!(title, Some("peak 48.0 MiB"));
    assert!(doc.descendants().any(|n| has_class(&n, "panel pressure")));
}

#[test]
fn degenerate_series_still_give_valid_charts() {
    // No samples at all; then only the first sample (zero intervals).
    let mut step = run("pure-v2-6.1-oom-throttled-io");
    let all = step.usage.resource_usage.samples.clone();
    for keep in [0, 1, 2] {
        step.usage.resource_usage.samples = all.iter().take(keep).cloned().collect();
        step.usage.sys_usage.truncate(keep);
        step.wall_seconds = if keep == 0 { None } else { Some(0.0) };
        let svg = svg::chart(&step);
        let doc = parse_svg(&svg);
        let series = StepSeries::of(&step);
        assert_eq!(series.memory_bytes.len(), keep);
        let says_missing = texts_with_class(&doc, "not-measured");
        assert_eq!(says_missing.len(), if keep == 0 { 2 } else { usize::from(keep < 2) }, "keep {keep}");
        // A series of one or two points is marked point by point.
        let markers = doc.descendants().filter(|n| has_class(n, "marker memory")).count();
        assert_eq!(markers, keep);
    }
}

fn value<'a>(read: &'a Read, label: &str) -> &'a str {
    read.rows
        .iter()
        .find(|r| r.first().is_some_and(|l| l == label))
        .and_then(|r| r.get(1))
        .unwrap_or_else(|| panic!("no row {label:?} in {:?}", read.rows))
}

#[test]
fn markdown_tables_hold_the_summary_values() {
    let not_measured = || "not measured".to_owned();
    for (stem, step) in common::runs::runs() {
        let text = markdown::render(std::slice::from_ref(&step));
        let read = read_markdown(&text);
        assert!(read.html.is_empty(), "{stem}: raw HTML {:?}", read.html);
        assert_eq!(read.headings, vec![step.name.clone()], "{stem}");
        assert!(read.rows.iter().all(|r| r.len() == 2), "{stem}: {:?}", read.rows);
        let s = &step.summary;
        assert_eq!(value(&read, "OOM kills"), s.memory.oom_kills.map_or_else(not_measured, |k| k.to_string()));
        assert_eq!(value(&read, "Pids peak"), s.pids_peak.map_or_else(not_measured, |k| k.to_string()));
        assert_eq!(value(&read, "Memory peak"), s.memory.peak_bytes.map_or_else(not_measured, units::bytes));
        // Numbers not from the step's own cgroup say where they came from.
        let from = step
            .sources
            .get(stepmon_model::source::Group::Cpu)
            .filter(|s| s.rung != stepmon_model::source::Rung::CgroupV2)
            .map_or_else(String::new, |s| format!(" ({})", s.label()));
        assert_eq!(
            value(&read, "CPU average"),
            s.cpu.average_cores.map_or_else(not_measured, |c| format!("{c:.2} cores{from}")),
            "{stem}"
        );
        assert_eq!(value(&read, "Wall time"), units::seconds(step.wall_seconds.expect("measured")), "{stem}");
        // The verdicts, word for word, as list items.
        let verdicts = step.verdicts();
        for sentence in verdicts.sentences() {
            assert!(read.items.iter().any(|i| i == sentence), "{stem}: verdict {sentence:?} not in {:?}", read.items);
        }
        // A Mermaid chart per series with at least two points, one value per point.
        let series = StepSeries::of(&step);
        let charts: Vec<&String> = read.code.iter().filter(|(lang, _)| lang == "mermaid").map(|(_, c)| c).collect();
        let expected = [&series.cpu_cores, &series.memory_bytes].into_iter().filter(|p| p.len() >= 2).count();
        assert_eq!(charts.len(), expected, "{stem}");
    }
}

#[test]
fn the_pure_v2_markdown_reports_the_oom_kill_and_throttling() {
    let step = run("pure-v2-6.1-oom-throttled-io");
    let read = read_markdown(&markdown::render(std::slice::from_ref(&step)));
    // The recorded run: one OOM kill, 35 memory.max hits, throttled 48 periods.
    assert_eq!(value(&read, "OOM kills"), "1");
    assert_eq!(value(&read, "memory.max / memory.high hits"), "35 / 0");
    assert_eq!(value(&read, "CPU throttled"), "3.13 s (48 periods)");
    assert_eq!(value(&read, "Pids peak"), "11");
    assert_eq!(value(&read, "IO read / write"), "2.0 KiB / 16.0 MiB");
    // The hybrid runs had no memory controller: said, not zero.
    let hybrid = read_markdown(&markdown::render(&[run("hybrid-cpu-3s")]));
    assert_eq!(value(&hybrid, "Memory peak"), "not measured");
    assert_eq!(value(&hybrid, "OOM kills"), "not measured");
}

#[test]
fn markdown_numbers_read_raw_in_the_source() {
    // Terminals, PR comments and logs show the Markdown source: `3.13 s`,
    // not `3\.13 s`. Only punctuation that means something is escaped.
    let text = markdown::render(&[run("pure-v2-6.1-oom-throttled-io")]);
    for row in ["| Wall time | 6.66 s |", "| CPU throttled | 3.13 s (48 periods) |", "| Memory peak | 48.0 MiB |"] {
        assert!(text.lines().any(|l| l == row), "{row:?} not in\n{text}");
    }
    for (stem, step) in common::runs::runs() {
        let text = markdown::render(std::slice::from_ref(&step));
        for line in text.lines().filter(|l| !l.starts_with("```") && !l.starts_with("    ")) {
            assert!(!line.contains("\\."), "{stem}: {line}");
        }
    }
}

/// A Mermaid `xychart-beta` block read back: the bucket width its title
/// states, the x labels as times, the line's values.
fn read_mermaid(code: &str) -> (f64, Vec<f64>, Vec<f64>) {
    let number = |s: &str| s.trim().parse::<f64>().unwrap_or_else(|_| panic!("not a number: {s:?}"));
    let title = code.lines().find_map(|l| l.trim().strip_prefix("title ")).expect("title");
    let width = title.split("one point per ").nth(1).and_then(|w| w.strip_suffix(" s\"")).expect("bucket in title");
    let list = |prefix: &str| -> Vec<String> {
        let line = code.lines().map(str::trim).find(|l| l.starts_with(prefix)).expect(prefix);
        let inner = &line[line.find('[').expect("[") + 1..line.rfind(']').expect("]")];
        inner.split(", ").map(str::to_owned).collect()
    };
    let times = list("x-axis").iter().map(|t| number(t.trim_matches('"').strip_suffix(" s").expect("N s"))).collect();
    let values = list("line").iter().map(|v| number(v)).collect();
    (number(width), times, values)
}

#[test]
fn mermaid_charts_resample_uneven_samples_onto_an_even_grid() {
    // The pure-v2 run's samples came at -0.05, 3.98, 5.99 and 6.71 s.
    let step = run("pure-v2-6.1-oom-throttled-io");
    let read = read_markdown(&markdown::render(std::slice::from_ref(&step)));
    let series = StepSeries::of(&step);
    let chart =
        |name: &str| read.code.iter().find(|(_, c)| c.contains(name)).map(|(_, c)| read_mermaid(c)).expect(name);
    for (name, points) in [("Memory", &series.memory_bytes), ("CPU", &series.cpu_cores)] {
        let (width, times, values) = chart(name);
        assert_eq!(times.len(), values.len(), "{name}");
        assert!((2..=markdown::MAX_CHART_POINTS).contains(&times.len()), "{name}: {}", times.len());
        for pair in times.windows(2) {
            assert!((pair[1] - pair[0] - width).abs() < 1e-9, "{name}: uneven x labels {times:?}");
        }
        // From the first sample to the last, not beyond a bucket more.
        let last = points.last().expect("points").t;
        assert!(times[times.len() - 1] >= last && times[times.len() - 1] - width < last, "{name}: {times:?}");
    }
    // Memory (a gauge): the last sample at or before each bucket's end.
    let (_, times, values) = chart("Memory");
    for (t, value) in times.iter().zip(&values) {
        let sample = series.memory_bytes.iter().rev().find(|p| p.t <= t + 1e-9).expect("a sample before");
        let mib = sample.value / 1048576.0;
        assert!((value - mib).abs() <= 0.0005 + 1e-12, "at {t}: {value} vs {mib}");
    }
    // CPU (a rate): the rates over the buckets keep the CPU time.
    let (width, times, values) = chart("CPU");
    let first = step.offset_seconds(step.usage.resource_usage.samples[0].timestamp);
    let last = series.cpu_cores.last().expect("cpu").t;
    let cpu: f64 = times.iter().zip(&values).map(|(t, v)| v * (t.min(last) - (t - width).max(first))).sum();
    let usage = step.summary.cpu.usage_seconds.expect("usage");
    assert!((cpu - usage).abs() < 0.0005 * (last - first) + 1e-9, "{cpu} s of CPU charted, {usage} s used");
}

const HOSTILE: [&str; 8] = [
    "a|b",
    "<script>alert(1)</script>",
    "line\nbreak",
    "&amp; \"double\" 'single'",
    "`code` *em* _u_ [link](http://x) ![i](y) # not a heading",
    "1. not a list | x",
    "bell\u{7} and \\ backslash",
    "\n- starts a list > quote",
];

#[test]
fn hostile_step_names_stay_text() {
    let base = run("pure-v2-6.1-oom-throttled-io");
    for name in HOSTILE {
        let mut step = base.clone();
        step.name = name.to_owned();
        step.run.as_mut().expect("a stepmon run").not_measured = vec![name.to_owned()];
        // SVG: parses, and the title reads the name (breaks as spaces,
        // characters XML forbids as U+FFFD).
        let svg = svg::chart(&step);
        let doc = parse_svg(&svg);
        let expected_svg: String = name
            .chars()
            .map(|c| match c {
                '\n' => ' ',
                c if c.is_control() => '\u{FFFD}',
                c => c,
            })
            .collect();
        let title = doc.descendants().find(|n| n.has_tag_name((SVG_NS, "title"))).and_then(|n| n.text());
        assert_eq!(title, Some(format!("stepmon: {expected_svg}").as_str()), "{name:?}");
        // Markdown: one heading with the name as text, no HTML, tables intact.
        let read = read_markdown(&markdown::render(std::slice::from_ref(&step)));
        let expected_md: String = name.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        assert_eq!(read.headings, vec![expected_md.trim().to_owned()], "{name:?}");
        assert!(read.items.iter().any(|i| i == expected_md.trim()), "{name:?}: {:?}", read.items);
        assert!(read.html.is_empty(), "{name:?}: {:?}", read.html);
        assert!(read.rows.iter().all(|r| r.len() == 2), "{name:?}");
        // HTML: no markup from the name.
        let page = html::render(std::slice::from_ref(&step));
        assert!(!page.contains("<script"), "{name:?}");
        assert!(!page.contains("\u{7}"), "{name:?}");
    }
}

#[test]
fn markdown_with_inline_svg_keeps_the_chart_whole() {
    for (stem, step) in common::runs::runs() {
        let text = markdown::render_with_svg(std::slice::from_ref(&step));
        let read = read_markdown(&text);
        // The chart is one HTML block (no blank line cuts it, its text is
        // not read as Markdown): a <div> around the SVG chart itself, valid
        // XML as a whole; no Mermaid blocks.
        let html: String = read.html.concat();
        let chart = svg::chart(&step);
        let lines = |s: &str| s.lines().filter(|l| !l.trim().is_empty()).map(str::to_owned).collect::<Vec<_>>();
        let mut expected = vec!["<div class=\"stepmon-chart-block\">".to_owned()];
        expected.extend(lines(&chart));
        expected.push("</div>".to_owned());
        assert_eq!(lines(&html), expected, "{stem}");
        roxmltree::Document::parse(html.trim()).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert!(read.code.iter().all(|(lang, _)| lang != "mermaid"), "{stem}");
        // The same table as the Mermaid variant.
        assert_eq!(read.rows, read_markdown(&markdown::render(std::slice::from_ref(&step))).rows, "{stem}");
    }
}
