//! The skip's two behaviours, seen from outside as CI sees them: each
//! ignored `child_*` test below is run again in a child process of this
//! binary, with and without `STEPMON_REQUIRE_LIVE=1`, and its exit status
//! and stderr are checked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

use stepmon_testsupport::skip;

/// Runs the ignored test `test` of this binary alone; `require` sets
/// `STEPMON_REQUIRE_LIVE=1`, otherwise it is removed (the parent may run
/// under it in CI).
fn child(test: &str, require: bool) -> Output {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["--ignored", "--exact", test, "--nocapture", "--test-threads=1"]);
    if require {
        command.env(skip::REQUIRE, "1");
    } else {
        command.env_remove(skip::REQUIRE);
    }
    command.output().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
#[ignore = "run by skip_prints_the_line_and_passes and skip_fails_when_live_tests_are_required"]
fn child_skips() {
    skip::skip("child_skips", "no frobnicator here");
}

#[test]
#[ignore = "run by accepted_skips_also_when_live_tests_are_required"]
fn child_accepts() {
    skip::accepted("child_accepts", skip::PSI_IRQ, "no /proc/pressure/irq");
}

#[test]
fn skip_prints_the_line_and_passes() {
    let output = child("child_skips", false);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).lines().any(|l| l == "SKIPPED child_skips: no frobnicator here"), "{}", stderr(&output));
}

#[test]
fn skip_fails_when_live_tests_are_required() {
    let output = child("child_skips", true);
    assert!(!output.status.success());
    let err = stderr(&output);
    assert!(err.contains("STEPMON_REQUIRE_LIVE=1 but child_skips cannot run here: no frobnicator here"), "{err}");
    assert!(!err.contains("SKIPPED"), "{err}");
}

#[test]
fn accepted_skips_also_when_live_tests_are_required() {
    for require in [false, true] {
        let output = child("child_accepts", require);
        assert!(output.status.success(), "require={require}: {}", stderr(&output));
        let line =
            format!("SKIPPED /proc/pressure/irq: child_accepts: no /proc/pressure/irq ({})", skip::PSI_IRQ.reason);
        assert!(stderr(&output).lines().any(|l| l == line), "require={require}: {}", stderr(&output));
    }
}

#[test]
#[should_panic(expected = "is not in the list of accepted skips")]
fn only_the_listed_conditions_are_accepted() {
    let unlisted = skip::Accepted { what: "a missing tool", reason: "not installed" };
    skip::accepted("only_the_listed_conditions_are_accepted", unlisted, "no tool");
}

#[test]
#[ignore = "run by skipped_answers_false_after_the_line"]
fn child_skipped() {
    assert!(!skip::skipped("child_skipped", "no frobnicator here"));
}

#[test]
fn skipped_answers_false_after_the_line() {
    let output = child("child_skipped", false);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).lines().any(|l| l == "SKIPPED child_skipped: no frobnicator here"), "{}", stderr(&output));
    assert!(!child("child_skipped", true).status.success());
}
