//! A job record's cost with the real binary: a short step's end is the step
//! in brief (2 KB at most) and `stepmon report` shows the numbers of its
//! whole document from it; a record of an earlier version, whose ends hold
//! whole documents, still reads; `STEPMON_JOB_SYNC` chooses when an end is
//! synced, and a value it does not know stops `stepmon run` before the
//! step runs. Any user: without root `stepmon run` measures the step's
//! process tree.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};

use common::{run_stepmon, run_stepmon_with, scratch};
use serde_json::Value;

/// `stepmon report --format json JOB` as JSON (it must succeed).
fn report_json(job: &Path) -> Value {
    let report = run_stepmon(&["report", "--format", "json", job.to_str().unwrap()]);
    assert!(report.status.success(), "{}", report.stderr);
    serde_json::from_str(&report.stdout).unwrap()
}

/// The one row of `report`.
fn only_row(report: &Value) -> &Value {
    let steps = report["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{report}");
    &steps[0]
}

/// The row's numbers that come from a step's summary and samples, and the
/// document's (`stepmon.summary`) that they must equal.
fn numbers(row: &Value) -> [Value; 8] {
    [
        "wallSeconds",
        "cpuSeconds",
        "averageCores",
        "memoryPeakBytes",
        "ioReadBytes",
        "ioWriteBytes",
        "verdict",
        "samples",
    ]
    .map(|k| row[k].clone())
}

fn summary_numbers(document: &Value) -> [Value; 6] {
    let s = &document["stepmon"]["summary"];
    [
        &s["wallSeconds"],
        &s["cpu"]["usageSeconds"],
        &s["cpu"]["averageCores"],
        &s["memory"]["peakBytes"],
        &s["io"]["readBytes"],
        &s["io"]["writeBytes"],
    ]
    .map(Clone::clone)
}

#[test]
fn a_short_steps_end_is_2_kb_at_most_and_its_report_shows_its_documents_numbers() {
    let dir = scratch("job-brief");
    let (job, doc) = (dir.join("job.jsonl"), dir.join("doc.json"));
    let run = run_stepmon(&["run", "-q", "--job", job.to_str().unwrap(), "-o", doc.to_str().unwrap(), "--", "true"]);
    assert!(run.status.success(), "{}", run.stderr);
    let document: Value = serde_json::from_str(&std::fs::read_to_string(&doc).unwrap()).unwrap();

    let text = std::fs::read_to_string(&job).unwrap();
    let kind = |l: &str| l.split('"').nth(3).unwrap_or_default().to_owned();
    let (start, end) = (text.lines().next().unwrap(), text.lines().last().unwrap());
    assert_eq!((kind(start), kind(end)), ("stepStart".to_owned(), "stepEnd".to_owned()), "{text}");
    // A step of milliseconds ends before its second sample: no sample line
    // (unless a loaded machine held it up 250 ms), its end holds its samples.
    let sample_lines = text.lines().filter(|l| kind(l) == "sample").count();
    eprintln!("{} bytes of record: start {}, end {}, {sample_lines} sample lines", text.len(), start.len(), end.len());
    assert!(start.len() + end.len() + 2 <= 2048, "start {} + end {} bytes", start.len(), end.len());
    let end_line: Value = serde_json::from_str(end).unwrap();
    assert!(end_line.get("document").is_none(), "the whole document is -o's, not the record's");
    let brief = &end_line["brief"];
    // The document's summary, its unknown numbers (`null`) left out as the
    // brief leaves them out.
    assert_eq!(brief["summary"], known(&document["stepmon"]["summary"]), "the summary the document has");
    assert_eq!(brief["collector"], document["stepmon"]["collector"], "stepmon's own cost");
    assert_eq!(
        brief["series"]["at"].as_array().unwrap().len(),
        document["resourceUsage"]["samples"].as_array().unwrap().len()
    );

    // The report of the record shows the document's numbers.
    let report = report_json(&job);
    let row = only_row(&report);
    assert_eq!(
        (row["name"].as_str(), row["status"].as_str(), row["exitCode"].as_i64()),
        (Some("true"), Some("ended"), Some(0))
    );
    assert_eq!(numbers(row)[..6], summary_numbers(&document), "{row}");
    assert_eq!(row["samples"].as_u64(), document["resourceUsage"]["samples"].as_array().map(|s| s.len() as u64));

    // ... and the same as the record would with the whole document in its
    // end, as earlier versions wrote it.
    let mut whole_end = end_line.clone();
    let object = whole_end.as_object_mut().unwrap();
    object.remove("brief");
    object.insert("document".to_owned(), document.clone());
    let whole = dir.join("whole.jsonl");
    let lines: Vec<String> = text.lines().take_while(|l| kind(l) != "stepEnd").map(str::to_owned).collect();
    std::fs::write(&whole, lines.join("\n") + "\n" + &serde_json::to_string(&whole_end).unwrap() + "\n").unwrap();
    assert_eq!(numbers(only_row(&report_json(&whole))), numbers(row));
    let text_report = |job: &PathBuf| run_stepmon(&["report", job.to_str().unwrap()]).stdout;
    assert_eq!(text_report(&whole), text_report(&job), "the same table");
}

#[test]
fn a_record_of_whole_documents_as_earlier_versions_wrote_still_reads() {
    // `stepmon run -q --job job.jsonl -- sh -c 'exit 3'` of a version whose
    // `stepEnd` held the whole run document.
    let job = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/job-whole-document.jsonl");
    let text = std::fs::read_to_string(&job).unwrap();
    let end: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let document = &end["document"];
    assert!(document.is_object() && end.get("brief").is_none(), "the fixture is of the earlier format");

    let report = report_json(&job);
    let row = only_row(&report);
    assert_eq!(
        (row["name"].as_str(), row["status"].as_str(), row["exitCode"].as_i64()),
        (Some("sh"), Some("ended"), Some(3))
    );
    assert_eq!(numbers(row)[..6], summary_numbers(document), "{row}");
    assert_eq!(row["samples"].as_u64(), Some(2));
    let text_report = run_stepmon(&["report", job.to_str().unwrap()]);
    assert!(text_report.status.success(), "{}", text_report.stderr);
    assert!(text_report.stdout.starts_with("job: 1 step"), "{}", text_report.stdout);
    assert!(
        text_report.stdout.lines().any(|l| l.contains("sh (sh -c 'exit 3')") && l.trim_end().ends_with(" 3")),
        "{}",
        text_report.stdout
    );
    assert!(report["notes"].as_array().unwrap().is_empty(), "{report}");
}

#[test]
fn job_sync_is_chosen_by_its_variable_and_an_unknown_value_stops_the_run() {
    let dir = scratch("job-sync");
    let job = dir.join("job.jsonl");
    for value in ["every", "long", "none", ""] {
        let run = run_stepmon_with(
            &[("STEPMON_JOB_SYNC", value)],
            &["run", "-q", "--job", job.to_str().unwrap(), "--", "true"],
        );
        assert!(run.status.success(), "{value:?}: {}", run.stderr);
    }
    assert_eq!(only_steps(&report_json(&job)), 4);
    let marker = dir.join("ran");
    let run = run_stepmon_with(
        &[("STEPMON_JOB_SYNC", "always")],
        &["run", "-q", "--job", job.to_str().unwrap(), "--", "touch", marker.to_str().unwrap()],
    );
    assert_eq!(run.status.code(), Some(125), "{}", run.stderr);
    assert!(run.stderr.contains("STEPMON_JOB_SYNC=\"always\": not every, long or none"), "{}", run.stderr);
    assert!(!marker.exists(), "the step did not run");
    assert_eq!(only_steps(&report_json(&job)), 4, "nothing appended");
}

/// `value` without its objects' `null` members.
fn known(value: &Value) -> Value {
    match value {
        Value::Object(members) => {
            Value::Object(members.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), known(v))).collect())
        }
        other => other.clone(),
    }
}

fn only_steps(report: &Value) -> usize {
    report["steps"].as_array().unwrap().len()
}
