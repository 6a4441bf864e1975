//! A BuildKit build's summary in every view, read back by real consumers:
//! the counts by state, the critical path and the per-platform totals in
//! Markdown (pulldown-cmark), HTML (roxmltree on each summary section),
//! OpenMetrics (prometheus_client's parser), the Prometheus text
//! (`promtool check metrics`) and the trace (one process per
//! platform, each step at its vertex's times, the machine's counters
//! underneath) — on the two real bundles and the constructed
//! four-platform one, each compared with the build as read.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::bundle::{FAILED, TWO_PLATFORM, data, many_platforms, one};
use common::markdown::read_markdown;
use serde_json::Value;
use stepmon_export::Format;
use stepmon_import::history::{self, Build, BuildStep, StepState};
use stepmon_report::units::seconds;

/// The three builds: (what, the build).
fn builds() -> Vec<(&'static str, Build)> {
    vec![
        ("two-platform", one(&data(TWO_PLATFORM))),
        ("failed", one(&data(FAILED))),
        ("four-platform", one(&many_platforms())),
    ]
}

fn on(build: &Build, platform: &str) -> Vec<BuildStep> {
    build.steps.iter().filter(|s| s.platform.as_deref() == Some(platform)).cloned().collect()
}

/// What a platform's row must say, computed here from the steps: steps,
/// ran, cached, failed, incomplete, wall (first start to last end), step
/// time, CPU of the steps with usage.
fn expected_row(build: &Build, platform: &str) -> Vec<String> {
    let steps = on(build, platform);
    let count = |f: &dyn Fn(&StepState) -> bool| steps.iter().filter(|s| f(&s.state)).count().to_string();
    let first = steps.iter().filter_map(|s| s.started).min().unwrap();
    let last = steps.iter().filter_map(|s| s.completed).max().unwrap();
    let step_time: f64 = steps.iter().filter(|s| s.state != StepState::Cached).filter_map(|s| s.wall_seconds).sum();
    let with_usage: Vec<f64> = steps.iter().filter_map(|s| s.usage.as_ref()?.summary.cpu.usage_seconds).collect();
    vec![
        platform.to_owned(),
        steps.len().to_string(),
        count(&|s| *s == StepState::Executed),
        count(&|s| *s == StepState::Cached),
        count(&|s| matches!(s, StepState::Failed { .. })),
        count(&|s| *s == StepState::Incomplete),
        seconds(last.duration_since(first).as_secs_f64()),
        seconds(step_time),
        if with_usage.is_empty() {
            "—".to_owned()
        } else {
            let n = with_usage.len();
            format!("{} ({n} step{})", seconds(with_usage.iter().sum()), if n == 1 { "" } else { "s" })
        },
    ]
}

fn critical_path_seconds(build: &Build) -> f64 {
    build
        .critical_path
        .iter()
        .map(|i| &build.steps[*i])
        .filter(|s| s.state != StepState::Cached)
        .filter_map(|s| s.wall_seconds)
        .sum()
}

fn counts_item(build: &Build) -> String {
    let c = build.counts;
    format!(
        "steps: {} vertexes: {} ran, {} cached, {} failed, {} incomplete",
        c.vertexes, c.executed, c.cached, c.failed, c.incomplete
    )
}

#[test]
fn markdown_of_a_build_has_its_counts_critical_path_and_platforms() {
    for (what, build) in builds() {
        let md = history::render_as(Format::Markdown, std::slice::from_ref(&build));
        let read = read_markdown(&md);
        assert!(read.html.is_empty(), "{what}: {:?}", read.html);
        assert!(read.headings.contains(&format!("build {}", build.reference)), "{what}: {:?}", read.headings);
        assert!(read.items.iter().any(|i| i.starts_with(&counts_item(&build))), "{what}: {:?}", read.items);
        let c = build.counts;
        assert_eq!(c.executed + c.cached + c.failed + c.incomplete, c.vertexes, "{what}");
        // The tables, by their heads.
        let table =
            |first: &str, second: &str| read.tables.iter().find(|t| t[0][0] == first && t[0][1] == second).cloned();
        let path = table("#", "wall").unwrap_or_else(|| panic!("{what}: no critical path table\n{md}"));
        assert_eq!(path.len() - 1, build.critical_path.len(), "{what}");
        for (row, i) in path[1..].iter().zip(&build.critical_path) {
            let step = &build.steps[*i];
            assert_eq!(row[4], step.title(), "{what}");
            assert_eq!(row[3], step.platform.clone().unwrap_or_else(|| "—".to_owned()), "{what}");
        }
        let total = format!("critical path: {} over {} step", seconds(critical_path_seconds(&build)), path.len() - 1);
        assert!(read.items.iter().any(|i| i.starts_with(&total)), "{what}: {total} in {:?}", read.items);
        let platforms = table("platform", "steps");
        if build.platforms.is_empty() {
            assert!(platforms.is_none(), "{what}");
        } else {
            let rows = platforms.unwrap_or_else(|| panic!("{what}: no per-platform table\n{md}"));
            assert_eq!(rows.len() - 1, build.platforms.len(), "{what}");
            for (row, p) in rows[1..].iter().zip(&build.platforms) {
                assert_eq!(*row, expected_row(&build, p), "{what}");
            }
        }
        // The job's own table is still there, a row per step.
        let steps = table("#", "step").unwrap_or_else(|| panic!("{what}: no step table"));
        assert_eq!(steps.len() - 1, build.steps.len(), "{what}");
    }
}

#[test]
fn json_of_a_build_has_the_same_totals() {
    for (what, build) in builds() {
        let json: Value =
            serde_json::from_str(&history::render_as(Format::Json, std::slice::from_ref(&build))).unwrap();
        let b = &json[0];
        let path = b["criticalPathSeconds"].as_f64().unwrap();
        assert!((path - critical_path_seconds(&build)).abs() < 1e-9, "{what}");
        let rows = b["perPlatform"].as_array().unwrap();
        assert_eq!(rows.len(), build.platforms.len(), "{what}");
        for (row, p) in rows.iter().zip(&build.platforms) {
            let expected = expected_row(&build, p);
            let n = |k: &str| row[k].as_u64().unwrap().to_string();
            let got =
                [row["platform"].as_str().unwrap().to_owned(), n("steps"), n("executed"), n("cached"), n("failed")];
            assert_eq!(got, expected[..5], "{what}");
            assert_eq!(seconds(row["wallSeconds"].as_f64().unwrap()), expected[6], "{what}");
            assert_eq!(seconds(row["stepSeconds"].as_f64().unwrap()), expected[7], "{what}");
        }
    }
}

#[test]
fn markdown_of_the_failed_build_names_its_error_and_failing_step() {
    let build = one(&data(FAILED));
    let read = read_markdown(&history::render_as(Format::Markdown, std::slice::from_ref(&build)));
    assert!(read.items.iter().any(|i| i.starts_with("FAILED: created ")), "{:?}", read.items);
    assert!(read.items.iter().any(|i| i.starts_with("error: ") && i.contains("exit code: 2")), "{:?}", read.items);
    let failing = read.items.iter().find(|i| i.starts_with("failing step: ")).expect("the failing step");
    assert!(failing.contains("RUN go build") && failing.contains("(Dockerfile:12) (exit code 2)"), "{failing}");
    assert!(read.items.iter().any(|i| i.contains("no provenance attestation")), "{:?}", read.items);
}

/// The `section.summary` fragments of a page, each parsed as XML (the page
/// as a whole is HTML, not XML: `<meta charset>` has no end tag).
fn summary_sections(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(from) = rest.find("<section class=\"summary") {
        let to = from + rest[from..].find("</section>").unwrap() + "</section>".len();
        out.push(rest[from..to].to_owned());
        rest = &rest[to..];
    }
    out
}

fn texts(node: roxmltree::Node<'_, '_>) -> String {
    node.descendants().filter(roxmltree::Node::is_text).filter_map(|n| n.text()).collect()
}

/// Rows of the `table.<class>` in `doc`: the head's cells, then each body row's.
fn html_table(doc: &roxmltree::Document<'_>, class: &str) -> Option<Vec<Vec<String>>> {
    let table = doc.descendants().find(|n| n.has_tag_name("table") && n.attribute("class") == Some(class))?;
    let rows = table
        .descendants()
        .filter(|n| n.has_tag_name("tr"))
        .map(|tr| tr.children().filter(|c| c.has_tag_name("td") || c.has_tag_name("th")).map(texts).collect())
        .collect();
    Some(rows)
}

#[test]
fn html_of_a_build_has_the_same_summary_as_its_markdown() {
    for (what, build) in builds() {
        let page = history::render_as(Format::Html, std::slice::from_ref(&build));
        let sections = summary_sections(&page);
        assert_eq!(sections.len(), 1, "{what}: one summary per build");
        let doc = roxmltree::Document::parse(&sections[0]).unwrap_or_else(|e| panic!("{what}: {e}\n{}", sections[0]));
        let h2: Vec<String> = doc.descendants().filter(|n| n.has_tag_name("h2")).map(texts).collect();
        assert_eq!(h2, [format!("build {}", build.reference)], "{what}");
        let items: Vec<String> = doc.descendants().filter(|n| n.has_tag_name("li")).map(texts).collect();
        // The list and the tables are the Markdown's, item for item.
        let md = read_markdown(&history::render_as(Format::Markdown, std::slice::from_ref(&build)));
        assert_eq!(items, md.items[..items.len()], "{what}");
        assert!(items.iter().any(|i| i.starts_with(&counts_item(&build))), "{what}: {items:?}");
        let path = html_table(&doc, "build-critical-path").expect("critical path table");
        assert_eq!(Some(&path), md.tables.iter().find(|t| t[0][0] == "#" && t[0][1] == "wall"), "{what}");
        match html_table(&doc, "build-platforms") {
            None => assert!(build.platforms.is_empty(), "{what}"),
            Some(rows) => {
                assert_eq!(rows.len() - 1, build.platforms.len(), "{what}");
                for (row, p) in rows[1..].iter().zip(&build.platforms) {
                    assert_eq!(*row, expected_row(&build, p), "{what}");
                }
            }
        }
    }
}

/// A parsed sample's value (the checker writes Python's `repr`).
fn value(sample: &Value) -> f64 {
    sample["value"].as_str().unwrap().parse().unwrap()
}

#[test]
fn openmetrics_of_a_build_has_its_figures_as_families() {
    let test = "openmetrics_of_a_build_has_its_figures_as_families";
    let Some(python) = common::openmetrics_python_or_skip(test) else { return };
    let checker = concat!(env!("CARGO_MANIFEST_DIR"), "/../export/tests/check_openmetrics.py");
    for (what, build) in builds() {
        let text = history::render_as(Format::OpenMetrics, std::slice::from_ref(&build));
        let (ok, stdout, stderr) = common::pipe(&python, &[checker], &text);
        assert!(ok, "{what}: rejected: {stderr}\n{text}");
        let parsed: Value = serde_json::from_slice(&stdout).unwrap();
        let family = |name: &str| -> Option<Value> {
            parsed["families"].as_array().unwrap().iter().find(|f| f["name"] == name).cloned()
        };
        let samples = |name: &str| -> Vec<Value> {
            family(name).unwrap_or_else(|| panic!("{what}: {name}"))["samples"].as_array().unwrap().clone()
        };
        let label = |s: &Value, l: &str| s["labels"][l].as_str().unwrap().to_owned();
        // The job's families are there too, a status per step.
        assert!(family("stepmon_job_step_status").is_some(), "{what}");
        // Counts by state.
        let c = build.counts;
        let steps = samples("stepmon_build_steps");
        assert!(steps.iter().all(|s| label(s, "build") == build.reference));
        let by_state: Vec<(String, f64)> = steps.iter().map(|s| (label(s, "state"), value(s))).collect();
        let expected =
            [("executed", c.executed), ("cached", c.cached), ("failed", c.failed), ("incomplete", c.incomplete)]
                .map(|(s, n)| (s.to_owned(), n as f64));
        assert_eq!(by_state, expected, "{what}");
        let outcome = samples("stepmon_build_outcome");
        let true_states: Vec<String> =
            outcome.iter().filter(|s| value(s) == 1.0).map(|s| label(s, "stepmon_build_outcome")).collect();
        assert_eq!(true_states, [if build.error.is_some() { "failed" } else { "succeeded" }], "{what}");
        assert_eq!(family("stepmon_build_outcome").unwrap()["type"], "stateset");
        // The critical path.
        let path = samples("stepmon_build_critical_path_seconds");
        assert!((value(&path[0]) - critical_path_seconds(&build)).abs() < 1e-9, "{what}");
        assert_eq!(family("stepmon_build_critical_path_seconds").unwrap()["unit"], "seconds");
        assert_eq!(value(&samples("stepmon_build_critical_path_steps")[0]), build.critical_path.len() as f64);
        let wall = samples("stepmon_build_wall_seconds");
        assert!((value(&wall[0]) - build.wall_seconds.unwrap()).abs() < 1e-9, "{what}");
        // Per platform.
        if build.platforms.is_empty() {
            assert!(family("stepmon_build_platform_steps").is_none(), "{what}");
            continue;
        }
        for p in &build.platforms {
            let mine = |name: &str| -> Vec<Value> {
                samples(name).into_iter().filter(|s| s["labels"]["platform"] == p.as_str()).collect()
            };
            let row = expected_row(&build, p);
            let counts: Vec<String> =
                mine("stepmon_build_platform_steps").iter().map(|s| format!("{}", value(s) as u64)).collect();
            assert_eq!(counts, row[2..6], "{what} {p}: executed, cached, failed, incomplete");
            let wall = value(&mine("stepmon_build_platform_wall_seconds")[0]);
            assert_eq!(seconds(wall), row[6], "{what} {p}");
            let step_time = value(&mine("stepmon_build_platform_step_time_seconds")[0]);
            assert_eq!(seconds(step_time), row[7], "{what} {p}");
            let cpu = mine("stepmon_build_platform_cpu_usage_seconds");
            let with_usage: f64 =
                on(&build, p).iter().filter_map(|s| s.usage.as_ref()?.summary.cpu.usage_seconds).sum();
            if row[8] == "—" {
                assert!(cpu.is_empty(), "{what} {p}: no usage, no sample");
            } else {
                assert!((value(&cpu[0]) - with_usage).abs() < 1e-9, "{what} {p}");
            }
        }
        assert_eq!(
            family("stepmon_build_platform_cpu_usage_seconds").map(|f| f["type"].clone()),
            Some("counter".into())
        );
    }
}

#[test]
fn trace_of_a_build_has_a_process_per_platform_at_the_vertex_times() {
    for (what, build) in builds() {
        let trace: Value =
            serde_json::from_str(&history::render_as(Format::Trace, std::slice::from_ref(&build))).unwrap();
        let events = trace["traceEvents"].as_array().unwrap();
        let process = |pid: &Value| -> String {
            events
                .iter()
                .find(|e| e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == *pid)
                .and_then(|e| e["args"]["name"].as_str())
                .unwrap()
                .to_owned()
        };
        let processes: Vec<String> = events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
            .map(|e| e["args"]["name"].as_str().unwrap().to_owned())
            .collect();
        for p in &build.platforms {
            assert_eq!(processes.iter().filter(|n| **n == format!("group: {p}")).count(), 1, "{what}: {processes:?}");
        }
        assert_eq!(processes.last().map(String::as_str), Some("machine"), "{what}");
        let origin: jiff::Timestamp = trace["otherData"]["timeOrigin"].as_str().unwrap().parse().unwrap();
        assert_eq!(Some(origin), build.steps.iter().filter_map(|s| s.started).min(), "{what}");
        let slices: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X" && e["cat"] == "step").collect();
        // A step that never started (the failed build's last) cannot be
        // placed: the trace names it instead.
        let (timed, untimed): (Vec<&BuildStep>, Vec<&BuildStep>) =
            build.steps.iter().partition(|s| s.started.is_some());
        assert_eq!(slices.len(), timed.len(), "{what}");
        let named: Vec<&str> = trace["otherData"]["stepsWithoutTime"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        assert_eq!(named, untimed.iter().map(|s| s.title()).collect::<Vec<_>>(), "{what}");
        for s in timed {
            let slice = slices
                .iter()
                .find(|e| {
                    e["name"] == s.title() && process(&e["pid"]).ends_with(s.platform.as_deref().unwrap_or("job"))
                })
                .unwrap_or_else(|| panic!("{what}: no slice of {}", s.title()));
            let at = s.started.unwrap().duration_since(origin).as_secs_f64() * 1e6;
            assert!((slice["ts"].as_f64().unwrap() - at).abs() < 1.0, "{what}: {} at {at} µs: {slice}", s.title());
            let wall = s.wall_seconds.unwrap() * 1e6;
            assert!((slice["dur"].as_f64().unwrap() - wall).abs() < 1.0, "{what}: {}", s.title());
        }
        // The machine's counters underneath, when the build recorded machine samples.
        let machine: Vec<&Value> = events.iter().filter(|e| e["ph"] == "C" && e["cat"] == "machine").collect();
        assert_eq!(machine.is_empty(), build.machine.len() < 2, "{what}: {} machine samples", build.machine.len());
        assert!(machine.iter().all(|e| process(&e["pid"]) == "machine"), "{what}");
        // A step whose only sample was taken after its container exited has
        // its counters drawn (CPU) but no live gauge: no pids or memory-in-use track.
        let gauges: Vec<&str> = events
            .iter()
            .filter(|e| e["ph"] == "C")
            .filter_map(|e| e["name"].as_str())
            .filter(|n| n.ends_with(": pids") || n.ends_with(": memory"))
            .collect();
        assert!(gauges.is_empty(), "{what}: post-exit gauges drawn: {gauges:?}");
    }
}

#[test]
fn prometheus_text_of_a_build_passes_promtool() {
    let test = "prometheus_text_of_a_build_passes_promtool";
    let tool = std::env::var("STEPMON_PROMTOOL").unwrap_or_else(|_| "promtool".to_owned());
    let found = std::process::Command::new(&tool)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok();
    if !found {
        common::skip::skip(test, "no promtool (Debian: apt install prometheus)");
        return;
    }
    for (what, build) in builds() {
        let text = history::render_as(Format::Prometheus, std::slice::from_ref(&build));
        assert!(text.contains("# TYPE stepmon_build_steps gauge\n"), "{what}");
        let (ok, stdout, stderr) = common::pipe(&tool, &["check", "metrics"], &text);
        assert!(ok && stdout.is_empty() && stderr.is_empty(), "{what}: promtool: {stderr}\n{text}");
    }
}
