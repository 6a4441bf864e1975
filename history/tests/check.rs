//! Verdicts from hand-made histories: busy runs left out of the wall, CPU
//! and stall baselines only; too little history; the Markdown read back by
//! a CommonMark parser; Bencher Metric Format's structure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use stepmon_history::render::{Format, render};
use stepmon_history::{CheckReport, Machine, Measure, Policy, RunKey, RunRecord, Verdict, check};

const MIB: f64 = 1024.0 * 1024.0;

fn run(i: i64, machine: Machine, cpu: f64, wall: f64, peak_mib: f64) -> RunRecord {
    RunRecord {
        key: RunKey { step: "steady".into(), runner_class: "Linux-X64".into(), ..RunKey::default() },
        branch: Some("main".into()),
        time: jiff::Timestamp::from_second(1_800_000_000 + i * 60).unwrap(),
        commit: None,
        machine,
        measures: vec![
            Measure { metric: "cpu-seconds".into(), value: cpu },
            Measure { metric: "wall-seconds".into(), value: wall },
            Measure { metric: "memory-peak-bytes".into(), value: peak_mib * MIB },
            Measure { metric: "cpu-stall-seconds".into(), value: wall / 10.0 },
        ],
        content_key: format!("run-{i}"),
    }
}

/// Twelve quiet runs of 1 s CPU, 2 s wall, 100 MiB (small noise), and
/// four runs on a busy machine: CPU 1.6 s, wall 5 s, same memory.
fn history() -> Vec<RunRecord> {
    let mut runs: Vec<RunRecord> = (0..12)
        .map(|i| {
            let wobble = f64::from(i32::try_from(i % 3).unwrap()) - 1.0;
            run(i, Machine::Quiet, 1.0 + 0.01 * wobble, 2.0 + 0.02 * wobble, 100.0 + 0.1 * wobble)
        })
        .collect();
    runs.extend((12..16).map(|i| run(i, Machine::Busy, 1.6, 5.0, 100.0)));
    runs
}

fn metric<'a>(step: &'a stepmon_history::StepCheck, name: &str) -> &'a stepmon_history::MetricCheck {
    step.metrics.iter().find(|m| m.metric == name).unwrap()
}

#[test]
fn busy_runs_are_left_out_of_wall_cpu_and_stall_only() {
    let judged = check(&run(100, Machine::Quiet, 1.0, 2.0, 100.0), &history(), &Policy::default());
    for name in ["cpu-seconds", "wall-seconds", "cpu-stall-seconds"] {
        let m = metric(&judged, name);
        assert_eq!((m.runs, m.busy_left_out), (12, 4), "{name}");
        assert_eq!(m.verdict, Verdict::WithinNoise, "{name}: {m:?}");
    }
    let memory = metric(&judged, "memory-peak-bytes");
    assert_eq!((memory.runs, memory.busy_left_out), (16, 0));
    assert_eq!(memory.verdict, Verdict::WithinNoise);
    // Had the busy runs counted, 1.6 s and 5 s would have widened the
    // baseline so much that a 30 % CPU regression passed: they do not.
    let judged = check(&run(101, Machine::Quiet, 1.3, 2.0, 100.0), &history(), &Policy::default());
    assert_eq!(metric(&judged, "cpu-seconds").verdict, Verdict::Regression);
    let report = CheckReport::new(vec![judged], &Policy::default());
    assert!(report.failed);
}

#[test]
fn a_busy_run_is_judged_but_does_not_fail_the_gate_on_cpu() {
    let judged = check(&run(100, Machine::Busy, 1.6, 5.0, 100.0), &history(), &Policy::default());
    let cpu = metric(&judged, "cpu-seconds");
    assert_eq!(cpu.verdict, Verdict::Regression);
    assert!(cpu.busy_run);
    assert!(!CheckReport::new(vec![judged], &Policy::default()).failed);
    // Memory still gates on a busy machine.
    let judged = check(&run(101, Machine::Busy, 1.0, 2.0, 130.0), &history(), &Policy::default());
    assert!(CheckReport::new(vec![judged], &Policy::default()).failed);
}

#[test]
fn floors_keep_tiny_changes_quiet() {
    // 0.3 MiB more is far outside a 0.1 MiB noise but under the 4 MiB floor.
    let judged = check(&run(100, Machine::Quiet, 1.0, 2.0, 102.0), &history(), &Policy::default());
    assert_eq!(metric(&judged, "memory-peak-bytes").verdict, Verdict::WithinNoise);
    let judged = check(&run(100, Machine::Quiet, 1.0, 2.0, 105.0), &history(), &Policy::default());
    assert_eq!(metric(&judged, "memory-peak-bytes").verdict, Verdict::Regression);
    let judged = check(&run(100, Machine::Quiet, 1.0, 2.0, 90.0), &history(), &Policy::default());
    assert_eq!(metric(&judged, "memory-peak-bytes").verdict, Verdict::Improvement);
}

#[test]
fn too_little_history_says_how_much_there_is() {
    let few: Vec<RunRecord> = history().into_iter().take(3).collect();
    let judged = check(&run(100, Machine::Quiet, 9.0, 9.0, 900.0), &few, &Policy::default());
    let report = CheckReport::new(vec![judged], &Policy::default());
    assert!(!report.failed);
    let text = render(&report, Format::Text);
    assert!(text.contains("not enough history (3 of 5 runs)"), "{text}");
}

#[test]
fn markdown_is_a_table_commonmark_reads() {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let judged = check(&run(100, Machine::Quiet, 1.0, 2.0, 130.0), &history(), &Policy::default());
    let markdown = render(&CheckReport::new(vec![judged], &Policy::default()), Format::Markdown);
    let (mut tables, mut rows, mut cells, mut text) = (0, 0, 0, String::new());
    for event in Parser::new_ext(&markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Table(_)) => tables += 1,
            Event::End(TagEnd::TableRow) => rows += 1,
            Event::Start(Tag::TableCell) => cells += 1,
            Event::Text(t) | Event::Code(t) => text.push_str(&t),
            _ => {}
        }
    }
    assert_eq!(tables, 1, "{markdown}");
    assert_eq!(rows, 4, "a row per metric (the header is not a TableRow): {markdown}");
    assert_eq!(cells, 5 * 8, "8 cells in the header and each row: {markdown}");
    assert!(text.contains("memory-peak-bytes") && text.contains("regression") && text.contains("130.0 MiB"), "{text}");
    assert!(text.chars().any(|c| ('▁'..='█').contains(&c)), "a sparkline: {text}");
}

#[test]
fn bmf_has_bencher_s_structure() {
    // https://bencher.dev/docs/reference/bencher-metric-format/: an object
    // of benchmark names, each an object of measure slugs, each an object
    // with a number `value` and optional number `lower_value` and
    // `upper_value` (lower ≤ upper), nothing else.
    let judged = check(&run(100, Machine::Quiet, 1.0, 2.0, 130.0), &history(), &Policy::default());
    let bmf: serde_json::Value =
        serde_json::from_str(&render(&CheckReport::new(vec![judged], &Policy::default()), Format::Bmf)).unwrap();
    let benchmarks = bmf.as_object().unwrap();
    assert_eq!(benchmarks.keys().collect::<Vec<_>>(), ["steady [Linux-X64]"]);
    for (name, measures) in benchmarks {
        let measures = measures.as_object().unwrap_or_else(|| panic!("{name}"));
        assert_eq!(measures.len(), 4);
        for (slug, metric) in measures {
            assert!(slug.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ':'), "{slug}");
            let metric = metric.as_object().unwrap();
            for key in metric.keys() {
                assert!(["value", "lower_value", "upper_value"].contains(&key.as_str()), "{key}");
            }
            let value = |k: &str| metric.get(k).and_then(serde_json::Value::as_f64);
            assert!(value("value").is_some());
            let (lower, upper) = (value("lower_value").unwrap(), value("upper_value").unwrap());
            assert!(lower <= upper);
        }
    }
    let peak = &bmf["steady [Linux-X64]"]["memory-peak-bytes"];
    assert_eq!(peak["value"].as_f64(), Some(130.0 * MIB));
    assert!(peak["upper_value"].as_f64().unwrap() < 101.0 * MIB);
}
