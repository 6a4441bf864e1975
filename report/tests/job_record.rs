//! The job record's reader: whole steps, interrupted steps, torn and glued
//! lines, kinds of a newer writer — and the job table of what it read.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::job::{end, line, samples, start, ts};
use stepmon_report::job::{self, Entry, Record, StepStart, StepStatus};

/// Two steps, one whole (exit 3) and one the record ends in the middle of.
fn two_steps() -> (String, StepStart, StepStart) {
    let a = start(10, "2026-12-01T10:00:00Z", "build");
    let b = start(11, "2026-12-01T10:00:01Z", "test");
    let a_samples = [("2026-12-01T10:00:00Z", 0), ("2026-12-01T10:00:02Z", 2_000_000_000)];
    let mut text = line(Record::StepStart(a.clone()));
    text += &line(Record::StepStart(b.clone()));
    text += &samples(&a, &a_samples);
    text += &samples(&b, &[("2026-12-01T10:00:01Z", 0), ("2026-12-01T10:00:04Z", 1_500_000_000)]);
    text += &end(&a, "2026-12-01T10:00:02Z", 3, &a_samples);
    (text, a, b)
}

#[test]
fn a_whole_step_and_an_interrupted_one() {
    let (text, a, b) = two_steps();
    let record = job::read(&text);
    assert!(record.lost.is_empty() && record.unknown.is_empty(), "{record:?}");
    assert_eq!(record.steps.len(), 2);
    let (whole, cut) = (&record.steps[0], &record.steps[1]);
    assert_eq!((whole.id.as_str(), cut.id.as_str()), (a.step.as_str(), b.step.as_str()));
    assert_eq!(whole.status(), StepStatus::Ended { exit_code: 3 });
    assert_eq!(cut.status(), StepStatus::Interrupted { record_ends: Some(ts("2026-12-01T10:00:04Z")) });
    let step = cut.to_step();
    assert_eq!(step.name, "test");
    assert_eq!(step.wall_seconds, Some(3.0), "wall up to its last sample");
    assert_eq!(step.end, None, "its end is unknown");
    assert_eq!(step.summary.cpu.usage_seconds, Some(1.5), "the CPU of the samples it had");
    assert_eq!(step.usage.resource_usage.samples.len(), 2);
}

#[test]
fn a_torn_last_line_is_named_lost_and_the_rest_kept() {
    let (text, _, _) = two_steps();
    let cut = &text[..text.len() - 40];
    let record = job::read(cut);
    assert_eq!(record.lost.len(), 1, "{:?}", record.lost);
    let lost = &record.lost[0];
    assert!(lost.last, "{lost}");
    assert_eq!(lost.line, text.lines().count());
    assert!(lost.to_string().contains("torn write"), "{lost}");
    // The step whose stepEnd was torn is interrupted, with its samples.
    assert_eq!(record.steps.len(), 2);
    assert!(matches!(record.steps[0].status(), StepStatus::Interrupted { .. }));
    assert_eq!(record.steps[0].samples.len(), 2);
    // Every prefix of the file reads without a panic.
    for n in 0..=text.len() {
        if text.is_char_boundary(n) {
            let _ = job::read(&text[..n]);
        }
    }
}

#[test]
fn a_record_glued_to_a_torn_line_is_kept() {
    let (text, a, _) = two_steps();
    let other = start(12, "2026-12-01T10:00:05Z", "package");
    // A writer died mid-line; the next writer's line follows it on the same line.
    let torn = &line(Record::StepStart(start(13, "2026-12-01T10:00:03Z", "lint")))[..30];
    let text = format!("{text}{torn}{}", line(Record::StepStart(other.clone())));
    let record = job::read(&text);
    assert_eq!(record.lost.len(), 1);
    assert!(!record.lost[0].last && record.lost[0].bytes == 30, "{:?}", record.lost);
    assert_eq!(record.steps.len(), 3);
    assert_eq!(record.steps[2].id, other.step);
    assert_eq!(record.steps[0].id, a.step);
}

#[test]
fn unknown_kinds_and_junk_lines() {
    let (text, _, _) = two_steps();
    let text = format!("{{\"kind\":\"machineSample\",\"x\":1}}\nnot json\n\n{{\"no\":\"kind\"}}\n{text}");
    let record = job::read(&text);
    assert_eq!(record.unknown.len(), 1);
    assert_eq!((record.unknown[0].line, record.unknown[0].kind.as_str()), (1, "machineSample"));
    assert_eq!(record.lost.iter().map(|l| l.line).collect::<Vec<_>>(), [2, 4]);
    assert!(record.lost.iter().all(|l| !l.last));
    assert_eq!(record.steps.len(), 2);
    // A known kind with a broken body is lost, not a panic.
    let record = job::read("{\"kind\":\"sample\",\"step\":\"1.2\"}\n");
    assert_eq!(record.lost.len(), 1);
    assert!(record.steps.is_empty());
}

#[test]
fn the_table_marks_the_interrupted_step_and_totals_the_job() {
    let (text, _, _) = two_steps();
    let record = job::read(&text);
    let entries: Vec<Entry> = record.steps.iter().map(|s| Entry::of_job(s, "job.jsonl".to_owned())).collect();
    let table = job::render(&entries, &["line 9 lost".to_owned()]);
    assert!(table.starts_with("job: 2 steps, wall 4.00 s (first start to last end), CPU 3.50 s\n"), "{table}");
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("  1 ") || l.starts_with("  2 ")).collect();
    assert_eq!(rows.len(), 2, "{table}");
    assert!(rows[0].contains("build") && rows[0].trim_end().ends_with('3'), "exit 3: {}", rows[0]);
    assert!(
        rows[1].contains("test") && rows[1].contains("INTERRUPTED") && rows[1].trim_end().ends_with('—'),
        "{}",
        rows[1]
    );
    assert!(table.contains("longest: test (3.00 s); heaviest: build (2.00 s CPU)"), "{table}");
    assert!(
        table.contains("interrupted: test (job.jsonl): no end in the record")
            && table.contains("the record ends at 2026-12-01T10:00:04Z, 2 samples, wall so far 3.00 s"),
        "{table}"
    );
    assert!(table.trim_end().ends_with("line 9 lost"));
    let json: serde_json::Value = serde_json::from_str(&job::to_json(&entries, &[])).unwrap();
    assert_eq!(json["steps"][1]["status"], "interrupted");
    assert_eq!(json["steps"][1]["exitCode"], serde_json::Value::Null);
    assert_eq!(json["steps"][0]["exitCode"], 3);
    assert_eq!(json["interrupted"], 1);
}

#[test]
fn a_step_collected_by_gc_stays_interrupted_and_says_so() {
    let (text, _, b) = two_steps();
    let collected = job::StepCollected::new(b.step.clone(), ts("2026-12-01T10:05:00Z"), "stepmon gc".to_owned());
    let text = text + &line(Record::StepCollected(collected.clone()));
    let record = job::read(&text);
    assert!(record.lost.is_empty() && record.unknown.is_empty(), "{record:?}");
    let step = &record.steps[1];
    assert_eq!(step.collected.as_ref(), Some(&collected));
    assert!(matches!(step.status(), StepStatus::Interrupted { .. }), "never presented as complete");
    let entries: Vec<Entry> = record.steps.iter().map(|s| Entry::of_job(s, "job.jsonl".to_owned())).collect();
    let table = job::render(&entries, &[]);
    assert!(
        table.contains("its numbers cover that part only; collected by stepmon gc at 2026-12-01T10:05:00Z"),
        "{table}"
    );
}
