//! Per-process accounting (taskstats) end to end with the real binary, as
//! root on the host: every process of a step accounted and none lost, the
//! allocator named as the peak (its peak RSS within 10% of GNU time's max
//! RSS for the same program), the fsync writer's bytes, an exit storm of
//! 20,000 processes counted (none lost), and the fallback when stepmon may not listen
//! (an unprivileged user, a pid or user namespace): procfs read at each sample; and the
//! parallelism advice (docs/parallelism.md) of a real `cargo build -j2` of a four-crate workspace,
//! which names its `rustc`s and the crate of the largest (the advice of workers of known memory
//! and CPU is advice_live.rs, which the VM tier's guest runs too; this one needs cargo, which the
//! guest has not). Prints `SKIPPED <name>: <why>` without root or without the tools a test needs.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{json, python, scratch, stepmon, wait_for};
use serde_json::Value;

/// Python allocating and touching 128 MiB (`bytes * n` writes every byte).
const ALLOCATE: &str = "x = b'a' * (128 << 20)";

fn root(name: &str) -> bool {
    let ok = rustix::process::geteuid().is_root();
    if !ok {
        common::skip::skip(name, "the taskstats listener needs root");
    }
    ok
}

fn tool(name: &str, program: &str) -> bool {
    let ok = Command::new(program).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok();
    if !ok {
        common::skip::skip(name, format_args!("no {program}"));
    }
    ok
}

/// Runs `stepmon run --output OUT ARGS...` (at most `timeout`) and returns its `processes`.
fn run(out: &Path, prefix: &[&str], args: &[&str], timeout: Duration) -> (Value, Value) {
    let output = out.to_str().unwrap();
    let mut command = match prefix.split_first() {
        Some((program, rest)) => {
            let mut c = Command::new(program);
            c.args(rest).arg(env!("CARGO_BIN_EXE_stepmon"));
            c
        }
        None => stepmon(),
    };
    let mut child = command
        .args(["run", "-q", "--no-cgroup", "--output", output])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let status = wait_for(&mut child, timeout);
    assert!(status.success(), "stepmon {args:?}: {status}");
    let doc = json(out);
    (doc["stepmon"]["processes"].clone(), doc)
}

fn command<'a>(processes: &'a Value, name: &str) -> &'a Value {
    processes["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["command"] == name)
        .unwrap_or_else(|| panic!("no command {name} in {processes:#}"))
}

/// GNU time's max RSS (KiB) of `python3 -c ALLOCATE`.
fn gnu_time_max_rss_kib(python: &Path) -> u64 {
    let out = Command::new("/usr/bin/time").args(["-f", "%M"]).arg(python).args(["-c", ALLOCATE]).output().unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stderr).trim().lines().last().unwrap().parse().unwrap()
}

#[test]
fn every_process_of_a_step_is_accounted() {
    let name = "every_process_of_a_step_is_accounted";
    if !root(name) || !Path::new("/usr/bin/time").exists() && !tool(name, "/usr/bin/time") {
        return;
    }
    let Some(python) = python(name) else { return };
    let dir = scratch("processes");
    let out = dir.join("run.json");
    let script = format!(
        "for i in $(seq 1 200); do sh -c true; done; {py} -c \"{ALLOCATE}\"; \
         dd if=/dev/zero of={file} bs=1M count=32 conv=fsync status=none",
        py = python.display(),
        file = dir.join("written").display()
    );
    let (p, _) = run(&out, &[], &["--", "sh", "-c", &script], Duration::from_secs(120));
    assert_eq!(p["source"], "taskstats", "{p:#}");
    assert_eq!(p["lostAtMost"], 0, "{p:#}");
    assert_eq!(p["partial"], false);
    // 200 sh, the step's sh, seq, python3, dd.
    assert!(p["processes"].as_u64().unwrap() >= 204, "{}", p["processes"]);
    assert!(command(&p, "sh")["count"].as_u64().unwrap() >= 201);
    let peak = &p["topByPeakRss"][0];
    assert!(peak["command"].as_str().unwrap().starts_with("python"), "the allocator is the peak: {peak:#}");
    let ours = peak["peakRssBytes"].as_u64().unwrap() as f64;
    let gnu = gnu_time_max_rss_kib(&python) as f64 * 1024.0;
    assert!((ours - gnu).abs() <= 0.10 * gnu, "peak RSS {ours} vs GNU time's {gnu}");
    let dd = command(&p, "dd");
    assert!(dd["writeBytes"].as_u64().unwrap() >= 32 << 20, "{dd:#}");
    assert_eq!(p["topByCpu"].as_array().unwrap().len(), 20, "bounded by default");
}

#[test]
fn an_exit_storm_is_counted_with_none_lost() {
    let name = "an_exit_storm_is_counted_with_none_lost";
    if !root(name) || !tool(name, "xargs") {
        return;
    }
    let dir = scratch("storm");
    let out = dir.join("run.json");
    let (p, doc) = run(&out, &[], &["--", "sh", "-c", "seq 20000 | xargs -P4 -n1 true"], Duration::from_secs(600));
    let processes = p["processes"].as_u64().unwrap();
    let lost = p["lostAtMost"].as_u64().unwrap();
    let trues = command(&p, "true")["count"].as_u64().unwrap();
    eprintln!("storm: {processes} processes, {trues} true, lost at most {lost}");
    assert!(trues + lost >= 20_000, "{trues} records and {lost} lost cannot account for 20,000");
    assert_eq!(lost, 0, "with the buffer sizing chosen none are lost here");
    assert_eq!(trues, 20_000);
    assert_eq!(p["records"].as_u64().unwrap(), processes, "single-threaded processes: one record each");
    // What the listener costs is measured on the release binary
    // (scripts/processes-bench, benches/README.md), not in a test.
    assert!(doc["stepmon"]["collector"]["cpuSeconds"].as_f64().is_some());
}

/// Processes of the machine that keep exiting outside the step (a CI
/// runner's other jobs, a shell polling /proc) must not hold stepmon up:
/// once the step is over it reads what was queued then and ends. Before,
/// it read "until nothing is queued" and ended only when the machine
/// stopped forking (81 s for a 2 s step in the VM tier); on kernels before
/// 6.6 the same kept the connector's start from ever timing out.
#[test]
fn a_machine_that_keeps_forking_does_not_hold_the_step_up() {
    let name = "a_machine_that_keeps_forking_does_not_hold_the_step_up";
    if !root(name) {
        return;
    }
    let dir = scratch("busy-machine");
    let out = dir.join("run.json");
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    // 60 s of forks outside the step, killed at the end of the test.
    let _busy = Kill(
        Command::new("sh")
            .args(["-c", "end=$(($(date +%s) + 60)); while [ $(date +%s) -lt $end ]; do /bin/true; done"])
            .spawn()
            .unwrap(),
    );
    let started = std::time::Instant::now();
    // wait_for panics past the timeout: 30 s is far beyond a 1 s step's
    // start and end, and far below the 60 s the machine keeps forking.
    let (p, _) = run(&out, &[], &["--", "sh", "-c", "sleep 1; /bin/true; /bin/true"], Duration::from_secs(30));
    let took = started.elapsed();
    eprintln!("{name}: stepmon took {took:?} for a 1 s step while the machine forked");
    assert_eq!(p["source"], "taskstats", "{p:#}");
    assert_eq!(command(&p, "true")["count"], 2, "{p:#}");
    assert_eq!(command(&p, "sleep")["count"], 1, "{p:#}");
    // A process that lives through a pause of the listener has its arguments.
    assert_eq!(command(&p, "sleep")["maxPeakRssArgs"], serde_json::json!(["sleep", "1"]), "{p:#}");
}

/// Runs a step with a 1 s `sleep` under `prefix` (as a user or in a
/// namespace where the kernel refuses a taskstats listener) and checks the
/// run says why taskstats is unavailable and falls back to reading procfs at
/// each sample: the `sleep` is there, with its peak RSS and its arguments,
/// labelled sampled; and the rusage of what stepmon reaped: the step's `sh`,
/// whose max RSS is that of the `dd` it waited for (64 MiB buffer), too
/// short for the samples. `host_procfs`: /proc is another pid namespace's
/// (`unshare --pid` without `--mount-proc`), where a reaped pid names
/// another process, so its command must be left out, not guessed.
fn falls_back(name: &str, prefix: &[&str], expected: &str, host_procfs: bool) {
    if !root(name) || !tool(name, prefix[0]) || !tool(name, "dd") {
        return;
    }
    let dir = scratch(name);
    // Writable for an unprivileged stepmon too.
    std::fs::set_permissions(&*dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let script = "sleep 1; dd if=/dev/zero of=/dev/null bs=64M count=1 status=none; true";
    let (p, _) = run(&dir.join("run.json"), prefix, &["--", "sh", "-c", script], Duration::from_secs(60));
    assert_eq!(p["source"], "sampled", "{p:#}");
    assert_eq!(p["partial"], true, "processes shorter than the interval are missing: {p:#}");
    assert_eq!(p["missing"][0], "sampled: processes shorter than the interval are missing");
    let reason = p["missing"][1].as_str().unwrap();
    assert!(reason.contains(expected), "{reason}");
    let sleep = command(&p, "sleep");
    assert_eq!(sleep["count"], 1, "{sleep:#}");
    assert!(sleep["maxPeakRssBytes"].as_u64().unwrap() > 0, "{sleep:#}");
    assert_eq!(sleep["maxPeakRssArgs"], serde_json::json!(["sleep", "1"]), "{sleep:#}");
    assert_eq!(p["cpuTime"], "tickSampled");
    let reaped = &p["reaped"];
    assert!(reaped["rusage"].as_str().unwrap().contains("the descendants it waited for"), "{reaped:#}");
    assert!(reaped["count"].as_u64().unwrap() >= 1, "{reaped:#}");
    let main = reaped["topByCpu"].as_array().unwrap().iter().find(|r| r["main"] == true);
    let main = main.unwrap_or_else(|| panic!("the step's main process is reaped: {reaped:#}"));
    let max_rss = main["maxRssBytes"].as_u64().unwrap();
    eprintln!("{name}: the reaped sh's max RSS {max_rss} B, CPU {} s", main["cpuSeconds"]);
    assert!((64 << 20..1 << 30).contains(&max_rss), "dd's 64 MiB, waited for by sh: {main:#}");
    assert_eq!(main["exitStatus"], 0, "{main:#}");
    if host_procfs {
        assert!(main["command"].is_null() || main["command"] == "sh", "{main:#}");
    } else {
        assert_eq!(main["command"], "sh", "{main:#}");
    }
}

#[test]
fn an_unprivileged_run_falls_back_and_says_so() {
    falls_back(
        "an_unprivileged_run_falls_back_and_says_so",
        &["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--"],
        "needs root",
        false,
    );
}

#[test]
fn a_run_in_a_pid_namespace_falls_back_and_says_so() {
    falls_back(
        "a_run_in_a_pid_namespace_falls_back_and_says_so",
        &["unshare", "--pid", "--fork", "--"],
        "initial user and pid namespaces",
        true,
    );
}

#[test]
fn a_run_in_a_user_namespace_falls_back_and_says_so() {
    falls_back(
        "a_run_in_a_user_namespace_falls_back_and_says_so",
        &["unshare", "--user", "--map-root-user", "--"],
        "taskstats listener refused",
        false,
    );
}

/// Runs `stepmon run --output OUT ARGS...` (with a cgroup of the step's
/// own, as a build runs): its document's parallelism advice and the
/// document.
fn run_advised(out: &Path, args: &[&str]) -> (Value, Value) {
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
/// functions. A `rustc` must live past the listener's batch (0.1 s) for its
/// arguments, and so the crate's name, to be read, also while the exit
/// storm of this file's other test runs beside it.
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
    let (a, doc) = run_advised(&dir.join("run.json"), &args);
    eprintln!("{name}: {}", a["reason"]);
    assert_eq!(doc["stepmon"]["exitCode"], 0, "{doc:#}");
    assert_eq!(a["command"], "rustc", "{a:#}");
    // Four crates, plus cargo's queries of the compiler (`rustc -vV`, `--print`).
    assert!(a["instances"].as_u64().unwrap() >= 4, "{a:#}");
    assert_eq!(a["observedConcurrency"], 2, "four independent crates under -j2: {a:#}");
    let rustcs: Vec<String> = doc["stepmon"]["processes"]["topByPeakRss"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["command"] == "rustc")
        .map(|p| format!("{} B {} s {}", p["peakRssBytes"], p["elapsedSeconds"], p["args"]))
        .collect();
    let largest =
        a["largestInput"].as_str().unwrap_or_else(|| panic!("no largest input: {a:#}\nrustc runs: {rustcs:#?}"));
    assert!(crates.contains(&largest), "the crate of the largest rustc: {a:#}");
    assert!(a["reason"].as_str().unwrap().contains(&format!("({largest})")), "{a:#}");
    assert!(a["suggestedJobs"].as_u64().unwrap() >= 1, "{a:#}");
}
