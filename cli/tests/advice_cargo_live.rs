//! The parallelism advice (docs/parallelism.md) of a real build, as root: a
//! `cargo build -j2` of a four-crate workspace names its `rustc`s and the
//! crate of the largest. (The workers of known memory and CPU are
//! advice_live.rs, which the VM tier's guest runs too; this one needs cargo,
//! which the guest has not.) Prints `SKIPPED <name>: <why>` without root or
//! cargo.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{json, scratch, stepmon, wait_for};
use serde_json::Value;

fn root(name: &str) -> bool {
    let ok = rustix::process::geteuid().is_root();
    if !ok {
        common::skip::skip(name, "the taskstats listener needs root");
    }
    ok
}

/// Runs `stepmon run --output OUT ARGS...`: its document's advice and the
/// document.
fn run(out: &Path, args: &[&str]) -> (Value, Value) {
    let mut child = stepmon()
        .args(["run", "--output", out.to_str().unwrap()])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status = wait_for(&mut child, Duration::from_secs(120));
    assert!(status.code().is_some(), "stepmon {args:?}: {status}");
    let doc = json(out);
    (doc["stepmon"]["advice"]["parallelism"].clone(), doc)
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
    let (a, doc) = run(&dir.join("run.json"), &args);
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
