//! The parallelism advice (docs/parallelism.md) of real steps, as root:
//! six Python workers holding ~120 MiB each under `--memory-max 400M`
//! (some OOM-killed: at most 3 jobs, memory-bound), the same six burning
//! CPU with no limit (CPU-bound: at most the online CPUs), and a real
//! `cargo build -j2` of a four-crate workspace (its `rustc`s and the crate
//! of the largest). Prints `SKIPPED <name>: <why>` without root or the tools.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{json, python, scratch, stepmon, wait_for};
use serde_json::Value;

const MIB: f64 = 1024.0 * 1024.0;

/// A worker holding ~120 MiB for a second: 112 MiB written (`bytes * n`
/// touches every page) beside the interpreter's own 8 MiB.
const HOLD: &str = "x = b'a' * (112 << 20); import time; time.sleep(1)";
/// The same burning CPU for 0.5 s of its own CPU time.
const BURN: &str =
    "x = b'a' * (112 << 20); import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass";

fn root(name: &str) -> bool {
    let ok = rustix::process::geteuid().is_root();
    if !ok {
        common::skip::skip(name, "the taskstats listener and --memory-max need root");
    }
    ok
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

/// Six workers started together, each running `code`.
fn six(python: &Path, code: &str) -> String {
    format!("for i in 1 2 3 4 5 6; do {} -c \"{code}\" & done; wait", python.display())
}

#[test]
fn six_workers_over_a_400m_limit_are_advised_by_memory() {
    let name = "six_workers_over_a_400m_limit_are_advised_by_memory";
    if !root(name) {
        return;
    }
    let Some(python) = python(name) else { return };
    let dir = scratch(name);
    let script = six(&python, HOLD);
    let (a, doc, stderr) = run(&dir.join("run.json"), &["--memory-max", "400M", "--", "sh", "-c", &script]);
    eprintln!("{name}: {}", a["reason"]);
    assert_eq!(doc["stepmon"]["processes"]["source"], "taskstats", "{a:#}");
    assert!(doc["stepmon"]["summary"]["memory"]["oomKills"].as_u64().unwrap() >= 1, "six of ~120 MiB in 400M");
    assert_eq!(a["command"], "python3", "{a:#}");
    assert_eq!(a["instances"], 6, "{a:#}");
    assert_eq!(a["observedConcurrency"], 6, "started together, each living a second: {a:#}");
    assert_eq!(a["lifetimes"], "forkEvent", "sub-second lifetimes: {a:#}");
    let p95 = a["peakBytes"]["p95"].as_f64().unwrap();
    assert!((p95 - 120.0 * MIB).abs() <= 0.10 * 120.0 * MIB, "p95 {} MiB", p95 / MIB);
    assert_eq!(a["peakBytes"]["bound"], "exact");
    assert_eq!((a["memoryAvailableBytes"].as_u64(), a["memorySource"].as_str()), (Some(400 << 20), Some("stepLimit")));
    let jobs = a["suggestedJobs"].as_u64().unwrap();
    assert!((1..=3).contains(&jobs), "{a:#}");
    assert_eq!(a["limitedBy"], "memory", "{a:#}");
    // The text summary's line, and the OOM verdict's fix.
    assert!(stderr.contains("=> parallelism: up to 6 python3 ran at once (6 runs)"), "{stderr}");
    assert!(stderr.contains(&format!("; fix: run at most {jobs} python3 at once (-j{jobs})")), "{stderr}");
}

#[test]
fn six_cpu_burning_workers_are_advised_at_most_the_online_cpus() {
    let name = "six_cpu_burning_workers_are_advised_at_most_the_online_cpus";
    if !root(name) {
        return;
    }
    let Some(python) = python(name) else { return };
    let dir = scratch(name);
    let script = six(&python, BURN);
    let (a, _, _) = run(&dir.join("run.json"), &["--", "sh", "-c", &script]);
    eprintln!("{name}: {}", a["reason"]);
    let cpus = std::thread::available_parallelism().unwrap().get() as u64;
    assert_eq!((a["command"].as_str(), a["instances"].as_u64()), (Some("python3"), Some(6)), "{a:#}");
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

/// A crate that takes rustc some 0.4 s of CPU in a debug build: 200
/// functions. A `rustc` must live past the listener's pause (up to 0.6 s)
/// for its arguments, and so the crate's name, to be read.
const LIB: &str = "macro_rules! f { ($($n:ident)*) => { $(pub fn $n(x: u64) -> u64 {
    (0..x).map(|i| i.wrapping_mul(i) ^ (i >> 3)).filter(|v| v % 7 != 0).sum::<u64>() + format!(\"{x}\").len() as u64
})* } }
macro_rules! g { ($($p:ident)*) => { $(mod $p { f!(a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 b0 b1 b2 b3 b4 b5 b6 b7 b8 b9); })* } }
g!(m0 m1 m2 m3 m4 m5 m6 m7 m8 m9);
";

#[test]
fn a_cargo_build_is_advised_by_its_rustc_and_names_the_largest_crate() {
    let name = "a_cargo_build_is_advised_by_its_rustc_and_names_the_largest_crate";
    if !root(name) {
        return;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    if Command::new(&cargo).arg("--version").stdout(Stdio::null()).status().is_err() {
        common::skip::skip(name, "no cargo");
        return;
    }
    let dir = scratch(name);
    let crates = ["alpha", "beta", "gamma", "delta"];
    let members: Vec<String> = crates.iter().map(|c| format!("\"{c}\"")).collect();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!("[workspace]\nresolver = \"2\"\nmembers = [{}]\n", members.join(", ")),
    )
    .unwrap();
    for c in crates {
        std::fs::create_dir_all(dir.join(c).join("src")).unwrap();
        std::fs::write(
            dir.join(c).join("Cargo.toml"),
            format!("[package]\nname = \"{c}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        )
        .unwrap();
        std::fs::write(dir.join(c).join("src/lib.rs"), LIB).unwrap();
    }
    let manifest = dir.join("Cargo.toml");
    let target = dir.join("target");
    let args = [
        "--",
        &cargo,
        "build",
        "-j2",
        "--offline",
        "--quiet",
        "--manifest-path",
        manifest.to_str().unwrap(),
        "--target-dir",
        target.to_str().unwrap(),
    ];
    let (a, doc, _) = run(&dir.join("run.json"), &args);
    eprintln!("{name}: {}", a["reason"]);
    assert_eq!(doc["stepmon"]["exitCode"], 0, "{doc:#}");
    assert_eq!(a["command"], "rustc", "{a:#}");
    // Four crates, plus cargo's queries of the compiler (`rustc -vV`, `--print`).
    assert!(a["instances"].as_u64().unwrap() >= 4, "{a:#}");
    assert_eq!(a["observedConcurrency"], 2, "four independent crates under -j2: {a:#}");
    let largest = a["largestInput"].as_str().unwrap();
    assert!(crates.contains(&largest), "the crate of the largest rustc: {a:#}");
    assert!(a["reason"].as_str().unwrap().contains(&format!("({largest})")), "{a:#}");
    assert!(a["suggestedJobs"].as_u64().unwrap() >= 1, "{a:#}");
}
