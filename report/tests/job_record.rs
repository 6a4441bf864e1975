//! The job record's reader: whole steps, interrupted steps, torn and glued
//! lines, kinds of a newer writer — and the job table of what it read.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::job::{end, line, samples, start, ts};
use stepmon_model::job::{Record, StepStart};
use stepmon_report::job::{self, Entry, StepStatus};

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
    assert_eq!(cut.status(), StepStatus::Interrupted { record_ends: Some(ts("2026-12-01T10:00:04Z")), torn: None });
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
    assert!(lost.torn && lost.to_string().contains("torn write: the disk may have filled"), "{lost}");
    // The step whose stepEnd was torn is interrupted, with its samples,
    // and says why its record stops: that line, cut short.
    assert_eq!(record.steps.len(), 2);
    let StepStatus::Interrupted { torn: Some(torn), .. } = record.steps[0].status() else {
        panic!("{:?}", record.steps[0].status())
    };
    assert_eq!((torn.line, torn.bytes), (lost.line, lost.bytes));
    assert_eq!(record.steps[0].samples.len(), 2);
    // The other step has no end either, but no torn line: killed.
    assert!(matches!(record.steps[1].status(), StepStatus::Interrupted { torn: None, .. }));
    let entries: Vec<Entry> = record.steps.iter().map(|s| Entry::of_job(s, "job.jsonl".to_owned())).collect();
    let table = job::render(&entries, &[]);
    assert!(
        table.contains(&format!(
            "interrupted: build (job.jsonl): no end in the record — the disk may have filled: line {} ({} bytes) is \
             its line cut short by a short write; or stepmon was killed",
            lost.line, lost.bytes
        )),
        "{table}"
    );
    assert!(
        table.contains(
            "interrupted: test (job.jsonl): no end in the record — stepmon was killed (or its host went away)"
        ),
        "{table}"
    );
    // A last line that is whole but unreadable (its newline written) is no
    // short write.
    let garbled = format!("{}{{\"kind\":\"stepEnd\",\"step\":\"x\n", &text);
    let record = job::read(&garbled);
    assert!(record.lost.len() == 1 && !record.lost[0].torn, "{:?}", record.lost);
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
    assert!(!record.lost[0].last && record.lost[0].torn && record.lost[0].bytes == 30, "{:?}", record.lost);
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
    let collected =
        stepmon_model::job::StepCollected::new(b.step.clone(), ts("2026-12-01T10:05:00Z"), "stepmon gc".to_owned());
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

#[test]
fn the_sample_lines_of_a_step_with_its_document_are_counted_not_read_again() {
    let (text, _, _) = two_steps();
    let record = job::read(&text);
    let (whole, cut) = (&record.steps[0], &record.steps[1]);
    // The end's document holds the whole step's samples: its lines are
    // checked and counted.
    assert_eq!((whole.sample_lines, whole.samples.len(), whole.samples_of), (2, 0, None));
    assert_eq!(whole.to_step().usage.resource_usage.samples.len(), 2, "from the document");
    // The interrupted step's lines are all it has: read.
    assert_eq!((cut.sample_lines, cut.samples.len(), cut.samples_of), (2, 2, Some(stepmon_model::job::SampleOf::Step)));
}

/// `text` with its line `number` (from 1) replaced by `by`.
fn with_line(text: &str, number: usize, by: &str) -> String {
    text.lines().enumerate().map(|(i, l)| if i + 1 == number { by } else { l }).collect::<Vec<_>>().join("\n") + "\n"
}

#[test]
fn a_broken_sample_line_of_a_step_with_its_document_is_lost_as_any_line() {
    let (text, a, _) = two_steps();
    // Line 3 is the ended step's first sample line.
    let sample = text.lines().nth(2).unwrap();
    assert!(sample.contains(&a.step) && sample.starts_with("{\"kind\":\"sample\""));
    for broken in [&sample[..sample.len() / 2], &sample.replace("\"cpuStat\":", "\"cpuStat\" ")] {
        let record = job::read(&with_line(&text, 3, broken));
        let expected = serde_json::from_str::<serde_json::Value>(broken).unwrap_err().to_string();
        assert_eq!(record.lost.len(), 1, "{broken}");
        let lost = &record.lost[0];
        assert_eq!((lost.line, lost.bytes, lost.last, lost.reason.as_str()), (3, broken.len(), false, &*expected));
        assert_eq!(record.steps[0].status(), StepStatus::Ended { exit_code: 3 });
        assert_eq!(record.steps[0].sample_lines, 1);
    }
}

#[test]
fn a_sample_glued_to_a_torn_sample_line_keeps_its_place() {
    let (_, a, b) = two_steps();
    let b_samples =
        samples(&b, &[("2026-12-01T10:00:01Z", 0), ("2026-12-01T10:00:02Z", 1), ("2026-12-01T10:00:03Z", 2)]);
    let b_lines: Vec<&str> = b_samples.lines().collect();
    let a_samples = [("2026-12-01T10:00:00Z", 0), ("2026-12-01T10:00:02Z", 2_000_000_000)];
    let a_lines = samples(&a, &a_samples);
    let torn = &a_lines.lines().next().unwrap()[..60];
    // b's first sample, then a's writer dying mid-line and b's second
    // sample glued to it, then b's third: b (interrupted) has all three, in order.
    let text = [
        line(Record::StepStart(a.clone())),
        line(Record::StepStart(b.clone())),
        format!("{}\n", b_lines[0]),
        format!("{torn}{}\n", b_lines[1]),
        format!("{}\n", b_lines[2]),
        a_lines.lines().nth(1).unwrap().to_owned() + "\n",
        end(&a, "2026-12-01T10:00:02Z", 0, &a_samples),
    ]
    .concat();
    let record = job::read(&text);
    assert_eq!(record.lost.len(), 1, "{:?}", record.lost);
    assert_eq!((record.lost[0].line, record.lost[0].bytes, record.lost[0].last), (4, 60, false));
    let steps: Vec<&str> = record.steps.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(steps, [a.step.as_str(), b.step.as_str()]);
    let times: Vec<String> = record.steps[1].samples.iter().map(|s| s.timestamp.to_string()).collect();
    assert_eq!(times, ["2026-12-01T10:00:01Z", "2026-12-01T10:00:02Z", "2026-12-01T10:00:03Z"]);
    assert_eq!((record.steps[0].sample_lines, record.steps[1].sample_lines), (1, 3));
}

#[test]
fn a_step_first_seen_in_a_sample_line_keeps_its_place() {
    // The start lines lost: each step first appears in a sample line.
    let (_, a, b) = two_steps();
    let a_samples = [("2026-12-01T10:00:00Z", 0), ("2026-12-01T10:00:02Z", 2_000_000_000)];
    let text = samples(&a, &a_samples[..1])
        + &samples(&b, &[("2026-12-01T10:00:01Z", 0)])
        + &end(&b, "2026-12-01T10:00:02Z", 0, &[("2026-12-01T10:00:01Z", 0)])
        + &samples(&a, &a_samples[1..]);
    let record = job::read(&text);
    let steps: Vec<&str> = record.steps.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(steps, [a.step.as_str(), b.step.as_str()]);
    assert_eq!(record.steps[0].samples.len(), 2, "interrupted: read");
    assert_eq!((record.steps[1].samples.len(), record.steps[1].sample_lines), (0, 1));
}

#[test]
fn a_sample_line_of_json_but_no_sample_is_lost_also_in_a_step_with_its_document() {
    let (text, a, b) = two_steps();
    let not_a_sample = |id: &str| format!("{{\"kind\":\"sample\",\"step\":\"{id}\",\"of\":\"step\",\"sample\":5}}");
    // Line 3: the ended step's; line 5: the interrupted step's.
    let text = with_line(&with_line(&text, 3, &not_a_sample(&a.step)), 5, &not_a_sample(&b.step));
    let record = job::read(&text);
    let reason = |id: &str| {
        let value: serde_json::Value = serde_json::from_str(&not_a_sample(id)).unwrap();
        serde_json::from_value::<Record>(value).unwrap_err().to_string()
    };
    let lost: Vec<(usize, String)> = record.lost.iter().map(|l| (l.line, l.reason.clone())).collect();
    assert_eq!(lost, [(3, reason(&a.step)), (5, reason(&b.step))]);
    assert_eq!((record.steps[0].sample_lines, record.steps[1].samples.len()), (1, 1));
    assert_eq!(record.steps[0].status(), StepStatus::Ended { exit_code: 3 });
}

#[test]
fn sample_lines_not_in_the_document_are_read_as_ever() {
    // The document kept the first and last of three samples (thinned); the
    // middle line is read (and, being whole, not lost); a line whose
    // numbers differ from the document's is read too.
    let a = start(10, "2026-12-01T10:00:00Z", "build");
    let all = [("2026-12-01T10:00:00Z", 0), ("2026-12-01T10:00:01Z", 5), ("2026-12-01T10:00:02Z", 9)];
    let text = line(Record::StepStart(a.clone()))
        + &samples(&a, &all)
        + &end(&a, "2026-12-01T10:00:02Z", 0, &[all[0], ("2026-12-01T10:00:02Z", 10)]);
    let record = job::read(&text);
    assert!(record.lost.is_empty(), "{:?}", record.lost);
    assert_eq!(record.steps[0].sample_lines, 3);
    assert_eq!(record.steps[0].to_step().usage.resource_usage.samples.len(), 2, "the document's");
}
