//! The parallelism advice (docs/parallelism.md) of real steps, as root:
//! six workers holding 120 MiB each for a second under `--memory-max 400M`
//! (some OOM-killed: at most 3 jobs, memory-bound), and the same six
//! burning CPU with no limit (CPU-bound: at most the online CPUs). The
//! worker is the runner's static example program (runner/examples/worker.rs),
//! so that the VM tier's pure cgroup v2 guest runs this file too, with the
//! program at `STEPMON_WORKER_PROGRAM` (set by ci/vm/guest/init). A real
//! `cargo build`'s advice is in processes_live.rs. Prints `SKIPPED <name>:
//! <why>` without root or the worker program.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use common::{json, scratch, stepmon, wait_for};
use serde_json::Value;

const MIB: f64 = 1024.0 * 1024.0;

/// Each worker holds this many MiB, every page written.
const WORKER_MIB: u32 = 120;

fn root(name: &str) -> bool {
    let ok = rustix::process::geteuid().is_root();
    if !ok {
        common::skip::skip(name, "the taskstats listener and --memory-max need root");
    }
    ok
}

/// The worker program: `STEPMON_WORKER_PROGRAM`, else the runner's example
/// cargo built in this target directory (target/<profile>/examples/worker).
fn worker_program(name: &str) -> Option<PathBuf> {
    let path = match std::env::var_os("STEPMON_WORKER_PROGRAM") {
        Some(path) => PathBuf::from(path),
        None => std::env::current_exe().ok()?.parent()?.parent()?.join("examples").join("worker"),
    };
    if path.is_file() {
        Some(path)
    } else {
        common::skip::skip(
            name,
            format!("no worker program at {} (`cargo build -p stepmon-runner --examples` builds it)", path.display()),
        );
        None
    }
}

/// The command name the advice gives the worker: its file name, as the
/// kernel keeps it (`comm`, at most 15 bytes).
fn command_name(worker: &Path) -> String {
    let name = worker.file_name().unwrap().to_str().unwrap();
    name[..name.len().min(15)].to_owned()
}

/// Six workers of 720 MiB in all: one test at a time, so that the other's
/// memory is not the machine's "others" (a 2 GiB VM guest holds one six).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `stepmon run --output OUT ARGS...`: its document's advice, the
/// document and stepmon's stderr.
fn run(out: &Path, args: &[&str]) -> (Value, Value, String) {
    let child = stepmon()
        .args(["run", "--output", out.to_str().unwrap()])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = child;
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut text).unwrap();
        text
    });
    let status = wait_for(&mut child, Duration::from_secs(120));
    let stderr = reader.join().unwrap();
    assert!(status.code().is_some(), "stepmon {args:?}: {status}\n{stderr}");
    let doc = json(out);
    (doc["stepmon"]["advice"]["parallelism"].clone(), doc, stderr)
}

/// Six workers started together, each `worker 120 ARGS`.
fn six(worker: &Path, args: &str) -> String {
    format!("for i in 1 2 3 4 5 6; do {} {WORKER_MIB} {args} & done; wait", worker.display())
}

#[test]
fn six_workers_over_a_400m_limit_are_advised_by_memory() {
    let name = "six_workers_over_a_400m_limit_are_advised_by_memory";
    let _one = one_at_a_time();
    if !root(name) {
        return;
    }
    let Some(worker) = worker_program(name) else { return };
    let command = command_name(&worker);
    let dir = scratch(name);
    // Each asleep for a second with its memory held.
    let script = six(&worker, "1");
    let (a, doc, stderr) = run(&dir.join("run.json"), &["--memory-max", "400M", "--", "sh", "-c", &script]);
    eprintln!("{name}: {}", a["reason"]);
    assert_eq!(doc["stepmon"]["processes"]["source"], "taskstats", "{a:#}");
    assert!(doc["stepmon"]["summary"]["memory"]["oomKills"].as_u64().unwrap() >= 1, "six of 120 MiB in 400M");
    assert_eq!(a["command"], command.as_str(), "{a:#}");
    assert_eq!(a["instances"], 6, "{a:#}");
    assert_eq!(a["observedConcurrency"], 6, "started together, each living a second: {a:#}");
    assert_eq!(a["lifetimes"], "forkEvent", "sub-second lifetimes: {a:#}");
    let p95 = a["peakBytes"]["p95"].as_f64().unwrap();
    let held = f64::from(WORKER_MIB) * MIB;
    assert!((p95 - held).abs() <= 0.10 * held, "p95 {} MiB", p95 / MIB);
    assert_eq!(a["peakBytes"]["bound"], "exact");
    assert_eq!((a["memoryAvailableBytes"].as_u64(), a["memorySource"].as_str()), (Some(400 << 20), Some("stepLimit")));
    let jobs = a["suggestedJobs"].as_u64().unwrap();
    assert!((1..=3).contains(&jobs), "{a:#}");
    assert_eq!(a["limitedBy"], "memory", "{a:#}");
    // The text summary's line, and the OOM verdict's fix.
    assert!(stderr.contains(&format!("=> parallelism: up to 6 {command} ran at once (6 runs)")), "{stderr}");
    assert!(stderr.contains(&format!("; fix: run at most {jobs} {command} at once (-j{jobs})")), "{stderr}");
}

#[test]
fn six_cpu_burning_workers_are_advised_at_most_the_online_cpus() {
    let name = "six_cpu_burning_workers_are_advised_at_most_the_online_cpus";
    let _one = one_at_a_time();
    if !root(name) {
        return;
    }
    let Some(worker) = worker_program(name) else { return };
    let command = command_name(&worker);
    let dir = scratch(name);
    // Each computing for half a second of its own CPU time.
    let script = six(&worker, "0.5 burn");
    let (a, _, _) = run(&dir.join("run.json"), &["--", "sh", "-c", &script]);
    eprintln!("{name}: {}", a["reason"]);
    let cpus = std::thread::available_parallelism().unwrap().get() as u64;
    assert_eq!((a["command"].as_str(), a["instances"].as_u64()), (Some(command.as_str()), Some(6)), "{a:#}");
    assert!(a["observedConcurrency"].as_u64().unwrap() >= 2, "{a:#}");
    assert_eq!(a["cpuBound"], true, "six busy workers on {cpus} CPUs: {a:#}");
    assert_eq!(a["memorySource"], "machineLessOthers", "{a:#}");
    let jobs = a["suggestedJobs"].as_u64().unwrap();
    if cpus < 6 {
        assert_eq!((a["limitedBy"].as_str(), jobs), (Some("cpu"), cpus), "{a:#}");
        assert_eq!(a["cores"].as_f64(), Some(cpus as f64));
    }
    assert!(jobs <= cpus, "{a:#}");
}
