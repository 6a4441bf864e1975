//! `stepmon top` on real steps: `--once --json` lists eight steps of two
//! jobs, each with its job and numbers within 10% of what its own job
//! record says about that time; `stepmon top` in a terminal (tmux) shows
//! the rows and quits on `q`. Other users' steps on this machine may be in
//! the table too: only the test's own are checked.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{leftovers, live, python, scratch, stepmon, wait_for};
use serde_json::Value;

/// A step that holds `mib` MiB and spins for `seconds`, held to 0.02
/// cores by `--cpus`: its quota, 2 ms of each 100 ms period, is spent at
/// the period's start, so that a window of whole periods (a second, two)
/// holds whole bursts, unless one of its ends cuts one. Steadier than a
/// step that sleeps between bursts, whose rate follows the machine's load.
fn hold(mib: u32, seconds: u32) -> String {
    format!(
        "import time\nb = b'x' * ({mib} << 20)\nend = time.time() + {seconds}\nwhile time.time() < end:\n    pass\n"
    )
}

/// `stepmon run -q --job JOB --name NAME --cpus 0.02 -- python3 -c SCRIPT`, in the background.
fn start(job: &Path, name: &str, python: &Path, script: &str) -> Child {
    let job = job.to_str().unwrap();
    stepmon()
        .args(["run", "-q", "--job", job, "--name", name, "--cpus", "0.02", "--"])
        .args([python.to_str().unwrap(), "-c", script])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The sample lines of the step `id` in the job record `job`: (time, CPU ns, memory bytes).
fn samples(job: &Path, id: &str) -> Vec<(jiff::Timestamp, u64, u64)> {
    let text = std::fs::read_to_string(job).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["kind"] == "sample" && l["step"] == id)
        .filter_map(|l| {
            let s = &l["sample"];
            Some((
                s["timestamp"].as_str()?.parse().ok()?,
                s.pointer("/cpuStat/usageNanos")?.as_u64()?,
                s.pointer("/stepmon/memoryCurrent")?.as_u64()?,
            ))
        })
        .collect()
}

/// `|a − b| ≤ 10%` of `b`.
fn within_10_percent(a: f64, b: f64) -> bool {
    (a - b).abs() <= 0.1 * b
}

#[test]
fn once_lists_eight_steps_of_two_jobs_with_their_records_numbers() {
    let name = "once_lists_eight_steps_of_two_jobs_with_their_records_numbers";
    let (Some(base), Some(python)) = (live(name), python(name)) else { return };
    let dir = scratch("top");
    let jobs = [dir.join("j1.jsonl"), dir.join("j2.jsonl")];
    // Eight steps of 0.02 cores each, holding 20 + 8i MiB.
    let mut children: Vec<(String, PathBuf, Child)> = (0..8u32)
        .map(|i| {
            let step = format!("top-{i}");
            let job = jobs[(i % 2) as usize].clone();
            let child = start(&job, &step, &python, &hold(20 + 8 * i, 9));
            (step, job, child)
        })
        .collect();
    // Past the fast start (2 s): the records sample every 2 s from there.
    std::thread::sleep(Duration::from_millis(3500));
    let out = stepmon().args(["top", "--once", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    for (_, _, child) in &mut children {
        assert!(wait_for(child, Duration::from_secs(30)).success());
    }
    let ours: Vec<&Value> = rows.iter().filter(|r| r["name"].as_str().is_some_and(|n| n.starts_with("top-"))).collect();
    assert_eq!(ours.len(), 8, "{rows:#?}");
    for (step, job, child) in &children {
        let row = ours.iter().find(|r| r["name"] == step.as_str()).unwrap_or_else(|| panic!("{step}: {rows:#?}"));
        assert_eq!(row["ownerPid"], child.id());
        let canonical = job.canonicalize().unwrap();
        assert_eq!(row["job"].as_str().map(PathBuf::from), Some(canonical), "{row:#}");
        assert_eq!(row["tasks"], 1, "{row:#}");
        // The record's samples around the time top read the step.
        let at: jiff::Timestamp = row["at"].as_str().unwrap().parse().unwrap();
        let record = samples(job, row["jobStep"].as_str().unwrap());
        let after = record.iter().position(|s| s.0 >= at).unwrap_or_else(|| panic!("{step}: no sample after {at}"));
        let (before, next) = (record[after - 1], record[after]);
        let memory = row["memoryBytes"].as_f64().unwrap();
        #[allow(clippy::cast_precision_loss)]
        let recorded_memory = next.2 as f64;
        assert!(
            within_10_percent(memory, recorded_memory),
            "{step}: memory {memory} vs the record's {recorded_memory}"
        );
        // CPU time so far: the record's, interpolated to when top read it.
        #[allow(clippy::cast_precision_loss)]
        let (span, used) = (next.0.duration_since(before.0).as_secs_f64(), (next.1 - before.1) as f64 / 1e9);
        let into = at.duration_since(before.0).as_secs_f64();
        #[allow(clippy::cast_precision_loss)]
        let recorded_seconds = before.1 as f64 / 1e9 + used * into / span;
        let seconds = row["cpuSeconds"].as_f64().unwrap();
        assert!(within_10_percent(seconds, recorded_seconds), "{step}: {seconds:.4} s of CPU vs {recorded_seconds:.4}");
        // Cores: top's second against the record's two. The quota, 2 ms of
        // each 100 ms period, is spent in bursts within the period: a window
        // is whole periods but for a burst gained or lost at either end,
        // 2 × 2 ms over top's 1 s and over the record's span, and 5% for the
        // readings' times.
        let (cores, recorded_cores) = (row["cpuCores"].as_f64().unwrap(), used / span);
        let ends = 2.0 * 0.002 / 1.0 + 2.0 * 0.002 / span;
        eprintln!(
            "{step}: memory {memory} vs {recorded_memory} B, CPU {seconds:.4} vs {recorded_seconds:.4} s, cores {cores:.4} vs {recorded_cores:.4}"
        );
        assert!(
            (cores - recorded_cores).abs() <= 0.05 * recorded_cores + ends,
            "{step}: {cores:.4} cores vs the record's {recorded_cores:.4} (± {ends:.4} for the windows' ends)"
        );
        let elapsed = row["elapsedSeconds"].as_f64().unwrap();
        assert!((3.0..6.0).contains(&elapsed), "{step}: {elapsed} s");
        assert!(leftovers(&base, child.id()).is_empty());
    }
}

/// An action of `stepmon build` (its cgroup nested in the build's) is a
/// row of its own, named by what it builds, with its job record.
#[test]
fn a_builds_running_action_is_named_by_what_it_builds() {
    let name = "a_builds_running_action_is_named_by_what_it_builds";
    let Some(base) = live(name) else { return };
    let dir = scratch("top-build");
    // A compiler that takes its time and holds a few MB.
    let cc = dir.join("cc");
    common::write_executable(&cc, "#!/bin/sh\nx=$(yes | head -c 3000000)\nsleep 4\n");
    let job = dir.join("job.jsonl");
    let script = format!("{} wrap ./cc -c -o main.o main.c", env!("CARGO_BIN_EXE_stepmon"));
    let mut build = stepmon()
        .args(["build", "--job"])
        .arg(&job)
        .args(["-o"])
        .arg(dir.join("report.txt"))
        .args(["--", "sh", "-c", &script])
        .current_dir(&*dir)
        .env_remove("STEPMON_JOB")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2000));
    let out = stepmon().args(["top", "--once", "--json"]).output().unwrap();
    let status = wait_for(&mut build, Duration::from_secs(30));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(status.success());
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let canonical = job.canonicalize().unwrap();
    let ours: Vec<&Value> =
        rows.iter().filter(|r| r["job"].as_str().map(PathBuf::from).as_ref() == Some(&canonical)).collect();
    let names: Vec<&str> = ours.iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(names.len(), 2, "the build and its action: {rows:#?}");
    assert!(names.contains(&"main.o (cc)"), "{names:?}");
    let action = ours.iter().find(|r| r["name"] == "main.o (cc)").unwrap();
    let memory = action["memoryBytes"].as_u64().unwrap();
    assert!(memory >= 3_000_000, "the action's own memory: {memory}");
    assert!(leftovers(&base, build.id()).is_empty());
}

/// tmux on a socket of the test's own (its server goes with the test).
fn tmux(socket: &Path) -> Command {
    let mut command = Command::new("tmux");
    command.arg("-S").arg(socket);
    command
}

/// Kills the test's tmux server when dropped (also when the test fails).
struct Server<'a>(&'a Path);

impl Drop for Server<'_> {
    fn drop(&mut self) {
        let _ = tmux(self.0).arg("kill-server").stderr(Stdio::null()).status();
    }
}

/// The text of the pane, once `ready` says it is.
fn capture_until(socket: &Path, ready: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let out = tmux(socket).args(["capture-pane", "-p", "-t", "top"]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if ready(&text) || start.elapsed() > Duration::from_secs(10) {
            return text;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn in_a_terminal_it_redraws_the_rows_and_quits_on_q() {
    let name = "in_a_terminal_it_redraws_the_rows_and_quits_on_q";
    let (Some(_), Some(python)) = (live(name), python(name)) else { return };
    if Command::new("tmux").arg("-V").output().is_err() {
        common::skip::skip(name, "no tmux (scripts/setup installs it)");
        return;
    }
    let dir = scratch("top-tmux");
    let socket = dir.join("tmux.sock");
    let job = dir.join("job.jsonl");
    let mut steps: Vec<Child> =
        ["tmux-a", "tmux-b"].iter().map(|step| start(&job, step, &python, &hold(16, 8))).collect();
    let top = format!("{} top --sort name", env!("CARGO_BIN_EXE_stepmon"));
    let made = tmux(&socket).args(["new-session", "-d", "-s", "top", "-x", "160", "-y", "40", &top]).status().unwrap();
    let _server = Server(&socket);
    assert!(made.success());
    let screen = capture_until(&socket, |t| t.contains("tmux-a") && t.contains("tmux-b"));
    assert!(screen.contains("tmux-a") && screen.contains("tmux-b"), "the rows: {screen}");
    assert!(screen.contains("stepmon top: ") && screen.contains("sorted by name"), "{screen}");
    assert!(screen.contains("STEP") && screen.contains("CORES") && screen.contains("MEMORY"), "{screen}");
    let a = screen.find("tmux-a").unwrap();
    assert!(a < screen.find("tmux-b").unwrap(), "sorted by name: {screen}");
    // A second redraw: the elapsed times move on (the same lines, redrawn
    // in place).
    let first: String = screen.lines().filter(|l| l.starts_with("tmux-a")).collect();
    let again = capture_until(&socket, |t| t.lines().filter(|l| l.starts_with("tmux-a")).collect::<String>() != first);
    assert_eq!(again.matches("tmux-a").count(), 1, "redrawn, not scrolled: {again}");
    // `q` quits: the session (its only window ran top) ends.
    assert!(tmux(&socket).args(["send-keys", "-t", "top", "q"]).status().unwrap().success());
    let start = Instant::now();
    while tmux(&socket).args(["has-session", "-t", "top"]).stderr(Stdio::null()).status().is_ok_and(|s| s.success()) {
        assert!(start.elapsed() < Duration::from_secs(5), "stepmon top did not quit on q");
        std::thread::sleep(Duration::from_millis(50));
    }
    for step in &mut steps {
        assert!(wait_for(step, Duration::from_secs(30)).success());
    }
}
