//! `stepmon baseline` on real runs: twelve runs of a steady step (python3
//! touching 100 MiB) added, a run touching 130 MiB fails the gate naming
//! the memory peak with its test and numbers, a thirteenth steady run
//! passes; `stepmon run --baseline` adds and judges in one go; files that
//! are not a history are refused with a clear error and left alone.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};

use common::{python, run_stepmon, scratch};

/// Python touching `mib` MiB (`bytes * n` writes every byte).
fn workload(python: &Path, mib: u32) -> Vec<String> {
    vec![python.display().to_string(), "-c".into(), format!("x = b'a' * ({mib} << 20)")]
}

fn steady_run(dir: &Path, python: &Path, i: usize, mib: u32) -> PathBuf {
    let out = dir.join(format!("run{i}.json"));
    let mut args: Vec<String> = ["run", "--quiet", "--name", "steady", "--output"].map(str::to_owned).to_vec();
    args.push(out.display().to_string());
    args.push("--".into());
    args.extend(workload(python, mib));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let done = run_stepmon(&args);
    assert!(done.status.success(), "run {i}: {}", done.stderr);
    out
}

fn check(db: &Path, file: &Path, extra: &[&str]) -> common::Finished {
    check_on(db, file, "test", extra)
}

fn check_on(db: &Path, file: &Path, class: &str, extra: &[&str]) -> common::Finished {
    let mut args = vec!["baseline", "check", db.to_str().unwrap(), file.to_str().unwrap(), "--runner-class", class];
    args.extend_from_slice(extra);
    run_stepmon(&args)
}

#[test]
fn a_memory_regression_fails_the_gate_and_a_steady_run_passes() {
    let name = "a_memory_regression_fails_the_gate_and_a_steady_run_passes";
    let (Some(_), Some(python)) = (common::live(name), python(name)) else { return };
    let dir = scratch("baseline");
    let db = dir.join("history.db");
    let runs: Vec<PathBuf> = (0..12).map(|i| steady_run(&dir, &python, i, 100)).collect();
    let mut args = vec!["baseline", "add", db.to_str().unwrap(), "--runner-class", "test", "--commit", "c0ffee"];
    args.extend(runs.iter().map(|p| p.to_str().unwrap()));
    let added = run_stepmon(&args);
    assert!(added.status.success(), "{}", added.stderr);
    assert!(added.stderr.contains("12 run(s) added, 0 already there"), "{}", added.stderr);
    // The same runs again: nothing new.
    let again = run_stepmon(&args);
    assert!(again.stderr.contains("0 run(s) added, 12 already there"), "{}", again.stderr);

    let heavier = steady_run(&dir, &python, 100, 130);
    let judged = check(&db, &heavier, &[]);
    assert_eq!(judged.status.code(), Some(1), "{}\n{}", judged.stdout, judged.stderr);
    let line = judged
        .stdout
        .lines()
        .find(|l| l.contains(" memory-peak-bytes "))
        .unwrap_or_else(|| panic!("{}", judged.stdout));
    assert!(line.trim_start().starts_with("regression"), "{line}");
    for part in ["t α=0.01", "mean ", "sd ", "n=12", "expected ", "change +"] {
        assert!(line.contains(part), "`{part}` missing: {line}");
    }
    assert!(judged.stdout.contains("verdict: REGRESSION of steady memory-peak-bytes"), "{}", judged.stdout);

    let steady = steady_run(&dir, &python, 13, 100);
    let judged = check(&db, &steady, &[]);
    assert_eq!(judged.status.code(), Some(0), "{}\n{}", judged.stdout, judged.stderr);
    let line = judged.stdout.lines().find(|l| l.contains(" memory-peak-bytes ")).unwrap();
    assert!(line.trim_start().starts_with("within noise"), "{line}");

    // Markdown and BMF of the same check.
    let md = check(&db, &heavier, &["--format", "markdown"]);
    assert!(md.stdout.contains("| `memory-peak-bytes` | **regression** |"), "{}", md.stdout);
    let bmf = check(&db, &heavier, &["--format", "bmf"]);
    let bmf: serde_json::Value = serde_json::from_str(&bmf.stdout).unwrap();
    let peak = &bmf["steady [test]"]["memory-peak-bytes"];
    assert!(peak["value"].as_f64().unwrap() > peak["upper_value"].as_f64().unwrap(), "{bmf}");

    // Not enough history on another runner class.
    let other = check_on(&db, &steady, "elsewhere", &[]);
    assert_eq!(other.status.code(), Some(0));
    assert!(other.stdout.contains("not enough history (0 of 5 runs)"), "{}", other.stdout);
}

#[test]
fn run_with_a_baseline_adds_and_judges_the_step() {
    let name = "run_with_a_baseline_adds_and_judges_the_step";
    let (Some(_), Some(python)) = (common::live(name), python(name)) else { return };
    let dir = scratch("run-baseline");
    let db = dir.join("history.db");
    for i in 0..6 {
        let mut args: Vec<String> = ["run", "--quiet", "--name", "steady", "--baseline"].map(str::to_owned).to_vec();
        args.push(db.display().to_string());
        args.push("--".into());
        args.extend(workload(&python, if i == 5 { 130 } else { 100 }));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let done = common::run_stepmon_with(&[("STEPMON_RUNNER_CLASS", "test")], &args);
        assert!(done.stderr.contains("baseline ("), "{}", done.stderr);
        if i < 5 {
            assert_eq!(done.status.code(), Some(0), "{}", done.stderr);
        } else {
            assert_eq!(done.status.code(), Some(1), "the 130 MiB run regressed: {}", done.stderr);
            assert!(done.stderr.contains("REGRESSION of steady memory-peak-bytes"), "{}", done.stderr);
        }
    }
    // Without --baseline, no history file is made or opened.
    let elsewhere = dir.join("untouched.db");
    let done = run_stepmon(&["run", "--quiet", "--", "true"]);
    assert!(done.status.success());
    assert!(!elsewhere.exists() && !done.stderr.contains("baseline"));
}

#[test]
fn files_that_are_not_a_history_are_refused_and_left_alone() {
    let dir = scratch("baseline-refused");
    let run = dir.join("run.json");
    std::fs::write(&run, MINIMAL_RUN).unwrap();
    let cases: [(&str, &[u8], &str); 3] = [
        ("text.db", b"not a database at all\n", "not a stepmon history file"),
        ("torn.db", b"SQLite format 3\0\x10\x00garbage garbage garbage garbage", "damaged SQLite database"),
        ("newer.db", b"", "newer than this stepmon"),
    ];
    for (file, bytes, message) in cases {
        let db = dir.join(file);
        if file == "newer.db" {
            // A real history of schema version 1, then marked as version 99.
            assert!(run_stepmon(&["baseline", "add", db.to_str().unwrap(), run.to_str().unwrap()]).status.success());
            let status = std::process::Command::new("sqlite3").arg(&db).arg("PRAGMA user_version = 99;").status();
            if !status.is_ok_and(|s| s.success()) {
                common::skip::skip(file, "no sqlite3 shell (scripts/setup installs it)");
                continue;
            }
        } else {
            std::fs::write(&db, bytes).unwrap();
        }
        let before = std::fs::read(&db).unwrap();
        for args in [["baseline", "check"], ["baseline", "add"]] {
            let done = run_stepmon(&[args[0], args[1], db.to_str().unwrap(), run.to_str().unwrap()]);
            assert_eq!(done.status.code(), Some(125), "{file}: {}", done.stderr);
            assert!(done.stderr.contains(message), "{file}: {}", done.stderr);
            assert!(!done.stderr.contains("panicked"), "{}", done.stderr);
        }
        assert_eq!(std::fs::read(&db).unwrap(), before, "{file} was changed");
    }
}

/// A run document of two samples.
const MINIMAL_RUN: &str = r#"{"resourceUsage": {"samples": [
  {"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {"usageNanos": 0}, "pidsStat": {}},
  {"timestamp": "2026-11-30T10:00:02Z", "cpuStat": {"usageNanos": 1500000000}, "memoryStat": {"peak": 104857600}, "pidsStat": {}}]},
  "sysUsage": [],
  "stepmon": {"command": ["make"], "name": "build", "exitCode": 0,
    "start": "2026-11-30T10:00:00Z", "end": "2026-11-30T10:00:02Z"}}"#;

/// Busy loops on every CPU (and one more), killed on drop.
struct Burners(Vec<std::process::Child>);

impl Burners {
    fn start() -> Burners {
        let cpus = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        Burners(
            (0..=cpus)
                .map(|_| std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap())
                .collect(),
        )
    }
}

impl Drop for Burners {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn a_run_on_a_machine_made_busy_is_marked_and_left_out_of_wall_and_cpu() {
    let name = "a_run_on_a_machine_made_busy_is_marked_and_left_out_of_wall_and_cpu";
    let (Some(_), Some(python)) = (common::live(name), python(name)) else { return };
    let dir = scratch("baseline-busy");
    let db = dir.join("history.db");
    let mut runs: Vec<PathBuf> = (0..6).map(|i| steady_run(&dir, &python, i, 100)).collect();
    {
        let _burners = Burners::start();
        std::thread::sleep(std::time::Duration::from_millis(300));
        runs.push(steady_run(&dir, &python, 99, 100));
    }
    let busy = common::json(&runs[6]);
    assert_eq!(busy.pointer("/stepmon/verdicts/machine/class").and_then(|v| v.as_str()), Some("busy"), "{busy}");
    let mut args = vec!["baseline", "add", db.to_str().unwrap(), "--runner-class", "test"];
    args.extend(runs.iter().map(|p| p.to_str().unwrap()));
    assert!(run_stepmon(&args).status.success());
    let marked = std::process::Command::new("sqlite3")
        .arg(&db)
        .arg("SELECT machine FROM runs ORDER BY time_us DESC LIMIT 1")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    if let Ok(machine) = marked {
        assert_eq!(machine, "busy", "the busy run is kept and marked");
    }
    let probe = steady_run(&dir, &python, 100, 100);
    let judged = check(&db, &probe, &["--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&judged.stdout).unwrap();
    let metric = |name: &str| {
        report["steps"][0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name}: {report}"))
    };
    // Memory: all seven runs. Wall and CPU: the busy one left out (with
    // any of the six the shared machine made busy by itself).
    let memory = metric("memory-peak-bytes");
    assert_eq!((memory["runs"].as_u64(), memory["busyLeftOut"].as_u64()), (Some(7), Some(0)), "{memory}");
    for name in ["cpu-seconds", "wall-seconds"] {
        let m = metric(name);
        let (runs, left_out) = (m["runs"].as_u64().unwrap(), m["busyLeftOut"].as_u64().unwrap());
        assert!(left_out >= 1 && runs + left_out == 7, "{name}: {m}");
    }
}
