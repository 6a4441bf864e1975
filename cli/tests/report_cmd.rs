//! `stepmon report` and `stepmon diff` with the real binary, on recorded runs
//! (report/tests/data) and constructed BuildKit provenance
//! (import/tests/data); `stepmon run
//! --format` on a real step; a job record written by the libraries alone.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;

use common::{leftovers, live, run_stepmon, scratch};
use serde_json::Value;
use stepmon_job::{JobWriter, MarkerDirs};
use stepmon_model::document::RunDocument;
use stepmon_model::job::{LiveSample, SampleOf, StepStart};

/// A test input: the provenance fixtures are stepmon-import's, the recorded
/// runs, diffs and jobs stepmon-report's.
fn data(path: &str) -> String {
    let tests = if path.starts_with("provenance/") { "../import/tests/data" } else { "../report/tests/data" };
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), tests, path].iter().collect();
    path.to_str().unwrap().to_owned()
}

const PURE_V2: &str = "runs/pure-v2-6.1-oom-throttled-io.json";

#[test]
fn report_prints_the_summary_and_verdicts_of_a_saved_run() {
    let run = run_stepmon(&["report", &data(PURE_V2)]);
    assert!(run.status.success(), "{}", run.stderr);
    let text = &run.stdout;
    assert!(text.starts_with("stepmon: `sh /guest/capture-step.sh /tmp/capture` exited 0 after 6.66 s"), "{text}");
    assert!(text.contains("oom kills 1"), "{text}");
    assert!(text.contains("=> CPU-bound"), "{text}");
    assert!(text.contains("=> OOM-killed"), "{text}");
}

#[test]
fn report_writes_every_format() {
    let dir = scratch("report-formats");
    for (format, check) in [
        ("json", "\"steps\""),
        ("trace", "\"traceEvents\""),
        ("openmetrics", "# EOF\n"),
        ("markdown", "| OOM kills | 1 |"),
        ("html", "<svg"),
        ("svg", "class=\"stepmon-chart\""),
    ] {
        let out = dir.join(format);
        let run = run_stepmon(&["report", &data(PURE_V2), "--format", format, "-o", out.to_str().unwrap()]);
        assert!(run.status.success(), "{format}: {}", run.stderr);
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.contains(check), "{format}: no {check:?} in {text}");
    }
    let json: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("json")).unwrap()).unwrap();
    assert_eq!(json["steps"][0]["verdicts"]["memory"]["class"], "oomKilled");
}

#[test]
fn report_reads_buildkit_provenance_and_names_skipped_steps() {
    let run = run_stepmon(&["report", &data("provenance/slsa1-statement.json"), "--format", "json"]);
    assert!(run.status.success(), "{}", run.stderr);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let steps = json["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{}", run.stdout);
    assert!(steps.iter().all(|s| s["origin"]["kind"] == "buildKit"));
    assert!(run.stderr.contains("skipped step4"), "{}", run.stderr);
}

#[test]
fn report_errors_are_one_line_with_a_hint() {
    let dir = scratch("report-errors");
    let not_json = dir.join("not.json");
    std::fs::write(&not_json, "hello").unwrap();
    let min_mode = dir.join("min.json");
    std::fs::write(&min_mode, r#"{"_type": "https://in-toto.io/Statement/v1", "predicateType": "https://slsa.dev/provenance/v1", "predicate": {"buildDefinition": {}, "runDetails": {}}}"#).unwrap();
    for (file, expect) in [
        (not_json.to_str().unwrap(), "not JSON"),
        (min_mode.to_str().unwrap(), "capture-usage=true"),
        ("/nonexistent/run.json", "cannot read /nonexistent/run.json"),
    ] {
        let run = run_stepmon(&["report", file]);
        assert_eq!(run.status.code(), Some(125), "{file}: {}", run.stderr);
        assert!(run.stderr.starts_with("stepmon: error: "), "{}", run.stderr);
        assert!(run.stderr.contains(expect), "{file}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    }
    let run = run_stepmon(&["report", &data(PURE_V2), "--format", "pdf"]);
    assert_eq!(run.status.code(), Some(2), "clap's usage error");
    assert!(run.stderr.contains("expected one of text, json"), "{}", run.stderr);
}

#[test]
fn diff_flags_heavier_runs_and_gates_ci() {
    let same = run_stepmon(&["diff", &data(PURE_V2), &data(PURE_V2), "--fail-if-heavier"]);
    assert_eq!(same.status.code(), Some(0), "{}{}", same.stdout, same.stderr);
    assert!(same.stdout.contains("same within noise"), "{}", same.stdout);

    let heavier = run_stepmon(&["diff", &data(PURE_V2), &data("diff/pure-v2-cpu-plus-50.json"), "--fail-if-heavier"]);
    assert_eq!(heavier.status.code(), Some(1), "{}{}", heavier.stdout, heavier.stderr);
    assert!(heavier.stdout.contains("heavier"), "{}", heavier.stdout);
    let without_gate = run_stepmon(&["diff", &data(PURE_V2), &data("diff/pure-v2-cpu-plus-50.json")]);
    assert_eq!(without_gate.status.code(), Some(0));

    let json = run_stepmon(&["diff", &data(PURE_V2), &data("diff/pure-v2-cpu-plus-50.json"), "--json"]);
    let value: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(value["steps"][0]["verdict"], "heavier", "{}", json.stdout);
}

#[test]
fn diff_without_a_baseline_is_a_notice_only_when_allowed() {
    let dir = scratch("diff-missing-baseline");
    let missing = dir.join("baseline.json");
    let missing = missing.to_str().unwrap();

    let allowed = run_stepmon(&["diff", missing, &data(PURE_V2), "--allow-missing-baseline", "--fail-if-heavier"]);
    assert_eq!(allowed.status.code(), Some(0), "{}", allowed.stderr);
    assert_eq!(allowed.stdout, "", "nothing compared, nothing printed");
    let lines: Vec<&str> = allowed.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {}", allowed.stderr);
    assert!(lines[0].starts_with("stepmon: notice: no baseline at "), "{}", allowed.stderr);
    assert!(lines[0].contains(missing) && lines[0].contains("nothing to compare with yet"), "{}", allowed.stderr);

    let refused = run_stepmon(&["diff", missing, &data(PURE_V2)]);
    assert_eq!(refused.status.code(), Some(125), "{}", refused.stderr);
    assert!(refused.stderr.starts_with("stepmon: error: "), "{}", refused.stderr);
    assert!(refused.stderr.contains("--allow-missing-baseline"), "the error names the flag: {}", refused.stderr);

    // Only a missing baseline is forgiven: a missing later run, or a
    // baseline that is not a run, still fails with the flag.
    let no_after = run_stepmon(&["diff", &data(PURE_V2), missing, "--allow-missing-baseline"]);
    assert_eq!(no_after.status.code(), Some(125), "{}", no_after.stderr);
    let not_json = dir.join("not.json");
    std::fs::write(&not_json, "hello").unwrap();
    let bad = run_stepmon(&["diff", not_json.to_str().unwrap(), &data(PURE_V2), "--allow-missing-baseline"]);
    assert_eq!(bad.status.code(), Some(125), "{}", bad.stderr);
    assert!(bad.stderr.contains("not JSON"), "{}", bad.stderr);

    // With a baseline the flag changes nothing.
    let present = run_stepmon(&["diff", &data(PURE_V2), &data(PURE_V2), "--allow-missing-baseline"]);
    assert_eq!(present.status.code(), Some(0), "{}", present.stderr);
    assert!(present.stdout.contains("same within noise"), "{}", present.stdout);
}

#[test]
fn run_writes_any_report_format() {
    let name = "run_writes_any_report_format";
    let Some(base) = live(name) else { return };
    let run = run_stepmon(&["run", "-q", "-o", "-", "--format", "openmetrics", "--", "sh", "-c", "exit 3"]);
    assert_eq!(run.status.code(), Some(3), "{}", run.stderr);
    assert!(run.stdout.ends_with("# EOF\n"), "{}", run.stdout);
    assert!(run.stdout.contains("exit_code=\"3\""), "{}", run.stdout);
    assert!(leftovers(&base, run.pid).is_empty());
    let run = run_stepmon(&["run", "-q", "--format", "trace", "--", "true"]);
    assert_eq!(run.status.code(), Some(2), "--format needs --output: {}", run.stderr);
}

#[test]
fn report_of_a_recorded_job_writes_every_format_and_marks_the_interrupted_step() {
    // A job of seven real steps on this host, the last one killed (-9).
    let job = data("job/recorded.jsonl");
    for (name, _) in stepmon_export::Format::ALL {
        let run = run_stepmon(&["report", &job, "--format", name]);
        assert!(run.status.success(), "--format {name}: {}", run.stderr);
        assert!(run.stdout.contains("package"), "--format {name}: the killed step is shown");
        assert!(
            run.stdout.contains("interrupted") || run.stdout.contains("INTERRUPTED"),
            "--format {name} marks the killed step"
        );
    }
    let md = run_stepmon(&["report", &job, "--format", "markdown"]).stdout;
    assert_eq!(md.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| \\#")).count(), 7, "{md}");
}

/// A builder that runs its steps through the libraries writes the job
/// record `stepmon report` reads: `stepmon_job::JobWriter`'s lines, no CLI
/// code involved (a recorded run document stands in for the runner's).
#[test]
fn a_job_record_written_through_the_libraries_is_read_by_stepmon_report() {
    let run_file: PathBuf =
        [env!("CARGO_MANIFEST_DIR"), "../report/tests/data/runs/pure-v2-6.1-oom-throttled-io.json"].iter().collect();
    let document: RunDocument = serde_json::from_str(&std::fs::read_to_string(&run_file).unwrap()).unwrap();
    let info = document.stepmon.clone().unwrap();
    let dir = scratch("job-library");
    let path = dir.join("job.jsonl");
    // The markers in the scratch directory, not where `stepmon gc` looks.
    let markers = MarkerDirs::new(vec![dir.join("markers")]);
    // Two steps of one job, each with its own writer, their lines interleaved.
    let build = StepStart::new(4242, info.start.unwrap(), "build".into(), info.command.clone());
    let lint = StepStart::new(4243, info.start.unwrap(), "lint".into(), vec!["make".into(), "lint".into()]);
    let mut first = JobWriter::open_marked(&path, build, &markers).unwrap();
    let mut second = JobWriter::open_marked(&path, lint, &markers).unwrap();
    for sample in &document.resource_usage.samples {
        for out in [&mut first, &mut second] {
            assert!(out.append_sample(LiveSample::new(SampleOf::Step, sample.clone())).is_written());
        }
    }
    // The build ends with its document; the lint's writer dies without an end.
    let mut ended = document.clone();
    ended.stepmon.as_mut().unwrap().name = Some("build".into());
    let report = first.end(0, None, Some(ended));
    assert!(report.stopped.is_none() && report.sync.is_none(), "{report:?}");
    drop(second);

    let run = run_stepmon(&["report", "--format", "json", path.to_str().unwrap()]);
    assert!(run.status.success(), "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let steps: Vec<(&str, &str)> = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect();
    assert_eq!(steps, [("build", "ended"), ("lint", "interrupted")]);
    let samples = document.resource_usage.samples.len() as u64;
    assert_eq!(report["steps"][0]["samples"].as_u64(), Some(samples), "{report}");
    assert_eq!(report["steps"][1]["samples"].as_u64(), Some(samples), "{report}");
    // The ended step's numbers are its document's, as `stepmon report` gives them for the run file.
    let alone: Value =
        serde_json::from_str(&run_stepmon(&["report", "--format", "json", run_file.to_str().unwrap()]).stdout).unwrap();
    let cpu = report["steps"][0]["cpuSeconds"].as_f64().unwrap();
    assert!(cpu > 0.0 && alone.to_string().contains(&cpu.to_string()), "{cpu}: {alone}");
}
