//! A builder that runs its steps through the libraries writes the job
//! record `stepmon report` reads: the lines of `stepmon_report::job::line`,
//! appended by `stepmon_outfile::Appender`, no CLI code involved. Offline
//! (a recorded run document stands in for the runner's).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;

use common::{run_stepmon, scratch};
use serde_json::Value;
use stepmon_outfile::Appender;
use stepmon_report::RunDocument;
use stepmon_report::job::{self, Record, SampleOf, SampleRecord, StepEnd, StepStart};

#[test]
fn a_job_record_written_through_the_libraries_is_read_by_stepmon_report() {
    let run_file: PathBuf =
        [env!("CARGO_MANIFEST_DIR"), "../report/tests/data/runs/pure-v2-6.1-oom-throttled-io.json"].iter().collect();
    let document: RunDocument = serde_json::from_str(&std::fs::read_to_string(&run_file).unwrap()).unwrap();
    let info = document.stepmon.clone().unwrap();
    let dir = scratch("job-library");
    let path = dir.join("job.jsonl");
    // Two steps of one job, each with its own appender, their lines interleaved.
    let (mut first, mut second) = (Appender::open(&path).unwrap(), Appender::open(&path).unwrap());
    let build = StepStart::new(4242, info.start.unwrap(), "build".into(), info.command.clone());
    let lint = StepStart::new(4243, info.start.unwrap(), "lint".into(), vec!["make".into(), "lint".into()]);
    first.append(&job::line(&Record::StepStart(build.clone())).unwrap()).unwrap();
    second.append(&job::line(&Record::StepStart(lint.clone())).unwrap()).unwrap();
    for sample in &document.resource_usage.samples {
        for (out, step) in [(&mut first, &build), (&mut second, &lint)] {
            let record = SampleRecord::new(step.step.clone(), SampleOf::Step, sample.clone());
            out.append(&job::line(&Record::Sample(Box::new(record))).unwrap()).unwrap();
        }
    }
    // The build ends with its document; the lint's writer dies without an end.
    let mut end = StepEnd::new(build.step.clone(), info.end.unwrap(), 0);
    let mut ended = document.clone();
    ended.stepmon.as_mut().unwrap().name = Some("build".into());
    end.document = Some(Box::new(ended));
    first.append(&job::line(&Record::StepEnd(end)).unwrap()).unwrap();
    first.sync().unwrap();

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
