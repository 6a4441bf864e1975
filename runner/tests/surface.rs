//! Every public method of `Runner`, `Prepared`, `Step` and `Finished`, on
//! every platform (Linux here; Windows under Wine, `scripts/wine-test`;
//! macOS and the BSDs are compiled by `scripts/cross-check`): the same code
//! runs the same actions everywhere, and each number of the result either
//! has a source and a bound or is absent with a reason.
//!
//! The actions are the shell's (`sh -c`, `cmd /c`) and examples/tree.rs,
//! which cargo builds beside the tests: `tree` holds 10 + 20 + 30 + 40 MiB
//! in four processes at once, and `tree hold MIB` says `ready` on stdout
//! and runs until its stdin is closed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::future::IntoFuture;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

use stepmon_model::result::{Reading, StepResult};
use stepmon_model::source::Rung;
use stepmon_runner::{Finished, Notice, RunErrorKind, Runner, Stdio, StepOptions, prepare};

const MIB: u64 = 1 << 20;

/// `script` in the platform's shell.
fn shell(unix: &str, windows: &str) -> StepOptions {
    if cfg!(windows) { StepOptions::new(["cmd", "/c", windows]) } else { StepOptions::new(["sh", "-c", unix]) }
}

/// examples/tree, built by cargo beside this test (target/…/examples/).
fn tree() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path =
        exe.parent().unwrap().parent().unwrap().join("examples").join(format!("tree{}", std::env::consts::EXE_SUFFIX));
    assert!(path.is_file(), "no {} (`cargo test -p stepmon-runner` builds the examples)", path.display());
    path
}

/// `tree hold MIB`, its stdin and stdout piped.
fn holding(mib: u32) -> StepOptions {
    let mut options = StepOptions::new([tree().into_os_string(), "hold".into(), mib.to_string().into()]);
    options.stdin(Stdio::piped()).stdout(Stdio::piped());
    options
}

/// Each reading has a value with its source and bound, or a reason: never both, never neither.
fn readable<T: std::fmt::Debug>(name: &str, reading: &Reading<T>) -> String {
    match (&reading.value, &reading.missing) {
        (Some(value), None) => {
            let rung = reading.rung.unwrap_or_else(|| panic!("{name}: {value:?} without a source"));
            let bound = reading.bound.unwrap_or_else(|| panic!("{name}: {value:?} without a bound"));
            format!("{name} {value:?} ({}, {bound:?})", rung.as_str())
        }
        (None, Some(why)) => {
            assert!(!why.is_empty(), "{name}: an empty reason");
            format!("{name} absent: {why}")
        }
        other => panic!("{name}: {other:?}"),
    }
}

fn describe(result: &StepResult) -> Vec<String> {
    vec![
        readable("cpu user s", &result.cpu_user_seconds),
        readable("cpu system s", &result.cpu_system_seconds),
        readable("memory peak B", &result.memory_peak_bytes),
        readable("io read B", &result.io_read_bytes),
        readable("io written B", &result.io_write_bytes),
        readable("pids peak", &result.pids_peak),
        readable("cpu stall s", &result.cpu_stall_seconds),
    ]
}

/// The run document and the typed result agree, and every number is labelled.
fn checked(what: &str, finished: &Finished) -> Vec<String> {
    let run = finished.document.stepmon.as_ref().expect("the run's part of the document");
    assert_eq!(run.exit_code.map(|c| c == finished.exit_code), run.signal.is_none().then_some(true), "{what}");
    let lines = describe(&finished.result);
    if cfg!(target_os = "linux") {
        assert!(finished.result.cpu_user_seconds.value.is_some(), "{what}: {lines:?}");
    }
    if cfg!(windows) {
        // The job object or a reason that names it.
        let cpu = &finished.result.cpu_user_seconds;
        assert!(cpu.rung == Some(Rung::JobObject) || cpu.missing.as_deref().is_some_and(|m| m.contains("job object")));
        assert!(run.accounting.is_some(), "{what}: the job's accounting is in the document");
    }
    lines
}

#[test]
fn every_method_of_the_public_handles() {
    let runner = Runner::new().unwrap();

    // Runner::prepare, Prepared::notices, has_own_cgroup, run; Finished's fields.
    let prepared = runner.prepare(shell("exit 3", "exit 3")).unwrap();
    let notices: Vec<String> = prepared.notices().iter().map(ToString::to_string).collect();
    if !cfg!(target_os = "linux") {
        assert!(!prepared.has_own_cgroup());
        assert!(matches!(prepared.notices(), [Notice::OffLinux { .. }]), "{notices:?}");
    }
    let finished = prepared.run().unwrap();
    assert_eq!(finished.exit_code, 3);
    assert!(finished.not_started().is_none());
    assert!(finished.stdout.is_empty() && finished.stderr.is_empty());
    eprintln!("surface: notices {notices:?}; messages {:?}", finished.messages);
    eprintln!("surface: exit 3: {}", checked("exit 3", &finished).join("; "));

    // prepare, Prepared::start, Step::pid, notices, wait_with_output.
    let mut options = shell("echo hello", "echo hello");
    options.stdout(Stdio::piped());
    let step = prepare(options).unwrap().start().unwrap();
    assert!(step.pid() > 0);
    assert_eq!(step.notices().len(), notices.len());
    let finished = step.wait_with_output().unwrap();
    assert_eq!((finished.exit_code, String::from_utf8_lossy(&finished.stdout).trim_end()), (0, "hello"));

    // Runner::start, the ends taken: a line out, stdin closed, Step::wait.
    let mut step = runner.start(holding(4)).unwrap();
    let mut said = String::new();
    BufReader::new(step.stdout.take().unwrap()).read_line(&mut said).unwrap();
    assert_eq!(said.trim_end(), "ready");
    step.stdin.take().unwrap().write_all(b"done\n").unwrap();
    let finished = step.wait().unwrap();
    assert_eq!(finished.exit_code, 0, "{:?}", finished.messages);

    // freeze, thaw and kill a step that runs until killed; awaited (IntoFuture).
    let mut step = runner.start(holding(1)).unwrap();
    let mut said = String::new();
    BufReader::new(step.stdout.as_mut().unwrap()).read_line(&mut said).unwrap();
    assert_eq!(said.trim_end(), "ready");
    let (frozen, thawed) = (step.freeze(), step.thaw());
    if cfg!(windows) {
        assert_eq!(frozen.unwrap_err().kind(), std::io::ErrorKind::Unsupported);
        assert_eq!(thawed.unwrap_err().kind(), std::io::ErrorKind::Unsupported);
    } else {
        frozen.unwrap();
        thawed.unwrap();
    }
    step.kill().unwrap();
    let finished = futures::executor::block_on(step.into_future()).unwrap();
    let killed = if cfg!(windows) { 1 } else { 128 + 9 };
    assert_eq!(finished.exit_code, killed, "{:?}", finished.messages);

    // Step::output: the async twin of wait_with_output.
    let mut options = shell("echo out; echo err >&2", "echo out& echo err 1>&2");
    options.stdout(Stdio::piped()).stderr(Stdio::piped());
    let finished = futures::executor::block_on(runner.start(options).unwrap().output()).unwrap();
    assert_eq!(String::from_utf8_lossy(&finished.stdout).trim_end(), "out");
    assert_eq!(String::from_utf8_lossy(&finished.stderr).trim_end(), "err");

    // Finished::not_started: a directory that cannot be entered.
    let dir = tempfile::tempdir().unwrap();
    let mut options = shell("true", "exit 0");
    options.current_dir(dir.path().join("missing"));
    let finished = runner.prepare(options).unwrap().run().unwrap();
    assert_eq!(finished.exit_code, 126);
    assert_eq!(finished.not_started().map(stepmon_runner::RunError::kind), Some(RunErrorKind::WorkingDirectory));

    runner.shutdown();
}

#[test]
fn a_tree_of_100_mib_is_measured_from_the_platforms_source() {
    let runner = Runner::new().unwrap();
    let mut options = StepOptions::new([tree()]);
    options.env("HOLD_MS", "300");
    let finished = runner.start(options).unwrap().wait().unwrap();
    assert_eq!(finished.exit_code, 0, "{:?}", finished.messages);
    let lines = checked("tree", &finished);
    eprintln!("surface: tree of 100 MiB: {}", lines.join("; "));
    let memory = &finished.result.memory_peak_bytes;
    if let Some(peak) = memory.value {
        // Windows: committed memory of all four at once; Linux: the step's
        // cgroup or its sampled tree; macOS, the BSDs: the largest process.
        let least = if cfg!(any(target_os = "linux", windows)) { 60 * MIB } else { 40 * MIB };
        assert!(peak >= least, "{peak} B from {:?}", memory.rung);
    }
    let run = finished.document.stepmon.as_ref().unwrap();
    eprintln!("surface: tree of 100 MiB: the OS's accounting {:?}", run.accounting);
    if cfg!(windows)
        && let Some(processes) = run.accounting.and_then(|a| a.processes)
    {
        assert_eq!(processes, 4, "the tree's four processes in its job");
    }
    runner.shutdown();
}
