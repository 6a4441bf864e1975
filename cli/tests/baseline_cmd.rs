//! `stepmon baseline add` of recorded files (no cgroups needed): every
//! ended step of a job record and of a BuildKit history bundle, each once.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{run_stepmon, scratch};

fn data(path: &str) -> String {
    // The bundles are stepmon-import's test data, the recorded runs and jobs stepmon-report's.
    let tests = if path.starts_with("buildkit-history/") { "import" } else { "report" };
    format!("{}/../{tests}/tests/data/{path}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn job_records_and_history_bundles_add_each_step_once() {
    let dir = scratch("baseline-cmd");
    let db = dir.join("history.db");
    let db = db.to_str().unwrap();
    let job = data("job/recorded.jsonl");
    let added = run_stepmon(&["baseline", "add", db, &job, "--commit", "abc"]);
    assert!(added.status.success(), "{}", added.stderr);
    assert!(added.stderr.contains("`package` was interrupted: left out"), "{}", added.stderr);
    assert!(added.stderr.contains("6 run(s) added, 0 already there"), "{}", added.stderr);
    let again = run_stepmon(&["baseline", "add", db, &job]);
    assert!(again.stderr.contains("0 run(s) added, 6 already there"), "{}", again.stderr);
    let bundle = data("buildkit-history/docker~build-push-action~2778G2.dockerbuild");
    let added = run_stepmon(&["baseline", "add", db, &bundle]);
    assert!(added.status.success(), "{}", added.stderr);
    assert!(added.stderr.contains("10 run(s) added, 0 already there"), "{}", added.stderr);
    // A run is never its own baseline.
    let judged = run_stepmon(&["baseline", "check", db, &job, "--format", "json"]);
    assert_eq!(judged.status.code(), Some(0), "{}", judged.stderr);
    let report: serde_json::Value = serde_json::from_str(&judged.stdout).unwrap();
    let steps = report["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 6);
    assert!(steps.iter().flat_map(|s| s["metrics"].as_array().unwrap()).all(|m| m["verdict"] == "notEnoughHistory"));
    // --name names one step only.
    let named = run_stepmon(&["baseline", "add", db, &job, "--name", "x"]);
    assert_eq!(named.status.code(), Some(125));
    assert!(named.stderr.contains("--name names one step; the inputs have 6"), "{}", named.stderr);
}
