//! `stepmon run` on a host whose memory, pids, cpu and blkio controllers are
//! bound to cgroup v1 hierarchies (this repository's hybrid CI host): the
//! step's own v1 cgroups account them, labelled `cgroupV1`; the limits work
//! there; nothing is left in any hierarchy afterwards, also after SIGTERM,
//! and after SIGKILL of stepmon followed by `stepmon gc`.
//!
//! Needs root and v1 hierarchies; prints `SKIPPED <name>: <why>` otherwise
//! (on a pure cgroup v2 host there is nothing to test here).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{json, python, run_stepmon, scratch, stepmon, wait_for};
use serde_json::Value;

/// The v1 hierarchies of memory, pids, cpu and cpuacct this process is in,
/// as (controller, this process's directory); `None` (after `SKIPPED`)
/// where the host has none or the test is not root.
fn v1_host(name: &str) -> Option<Vec<(String, PathBuf)>> {
    if !rustix::process::geteuid().is_root() {
        common::skip::skip(name, "needs root to create cgroups");
        return None;
    }
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let mut found = Vec::new();
    for line in cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next(), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        for c in controllers.split(',').filter(|c| ["memory", "pids", "cpu", "cpuacct"].contains(c)) {
            let mount = PathBuf::from("/sys/fs/cgroup").join(c);
            if mount.join("tasks").exists() {
                found.push((c.to_owned(), mount.join(path.trim_start_matches('/'))));
            }
        }
    }
    if found.iter().filter(|(c, _)| c == "memory" || c == "pids").count() < 2 {
        common::skip::skip(name, "no cgroup v1 memory and pids hierarchies here (pure cgroup v2?)");
        return None;
    }
    Some(found)
}

/// Run directories of the stepmon process `pid` left in any hierarchy.
fn leftovers(dirs: &[(String, PathBuf)], pid: u32) -> Vec<PathBuf> {
    let prefix = format!("stepmon-run.{pid}.");
    let mut left: Vec<PathBuf> = dirs
        .iter()
        .filter_map(|(_, dir)| std::fs::read_dir(dir).ok())
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect();
    if let Ok(location) = stepmon_runner_location() {
        left.extend(common::leftovers(&location, pid));
    }
    left
}

fn stepmon_runner_location() -> Result<PathBuf, ()> {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").map_err(|_| ())?;
    let path = cgroup.lines().find_map(|l| l.strip_prefix("0::")).ok_or(())?;
    let mount = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
        .iter()
        .map(PathBuf::from)
        .find(|m| m.join("cgroup.controllers").exists())
        .ok_or(())?;
    Ok(mount.join(path.trim_start_matches('/')).components().collect())
}

fn rung(document: &Value, group: &str) -> String {
    document["stepmon"]["sources"][group]["rung"].as_str().unwrap_or("none").to_owned()
}

/// GNU time's max RSS (KiB) of `command`.
fn gnu_time_max_rss(command: &[&str]) -> Option<u64> {
    let out = Command::new("/usr/bin/time").args(["-f", "%M"]).args(command).stderr(Stdio::piped()).output().ok()?;
    String::from_utf8_lossy(&out.stderr).lines().last()?.trim().parse().ok()
}

#[test]
fn memory_and_pids_from_the_steps_own_v1_cgroups() {
    let name = "memory_and_pids_from_the_steps_own_v1_cgroups";
    let Some(dirs) = v1_host(name) else { return };
    let Some(py) = python(name) else { return };
    let py = py.to_str().unwrap().to_owned();
    let dir = scratch(name);
    let out = dir.join("alloc.json");
    let alloc = "x = bytearray(64 << 20); import time; time.sleep(0.3)";
    let run = run_stepmon(&["run", "-q", "-o", out.to_str().unwrap(), "--", &py, "-c", alloc]);
    assert_eq!(run.status.code(), Some(0), "{}", run.stderr);
    let document = json(&out);
    assert_eq!(rung(&document, "memory"), "cgroupV1", "{}", document["stepmon"]["sources"]);
    let peak = document["stepmon"]["summary"]["memory"]["peakBytes"].as_u64().unwrap();
    assert!(peak >= 64 << 20, "memory peak {peak} < 64 MiB");
    // GNU time's max RSS of the same program: the cgroup's peak (the whole
    // process's charged memory) within 15% of it.
    if let Some(kib) = gnu_time_max_rss(&[&py, "-c", alloc]) {
        let rss = kib * 1024;
        assert!(peak.abs_diff(rss) * 100 <= rss * 15, "peak {peak} vs GNU time's max RSS {rss}");
        eprintln!("{name}: v1 memory peak {peak}, GNU time max RSS {rss}");
    } else {
        panic!("{name}: /usr/bin/time (GNU time, scripts/setup installs it) is missing");
    }
    // 8 children and their shell: 9 tasks at the peak.
    let out = dir.join("children.json");
    let run = run_stepmon(&[
        "run",
        "-q",
        "-o",
        out.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "for i in 1 2 3 4 5 6 7 8; do sleep 1 & done; wait",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", run.stderr);
    let document = json(&out);
    assert_eq!(rung(&document, "pids"), "cgroupV1");
    let pids = document["stepmon"]["summary"]["pidsPeak"].as_u64().unwrap();
    assert!(pids >= 9, "pids peak {pids}");
    assert!(leftovers(&dirs, run.pid).is_empty(), "left {:?}", leftovers(&dirs, run.pid));
}

#[test]
fn limits_work_in_v1() {
    let name = "limits_work_in_v1";
    let Some(dirs) = v1_host(name) else { return };
    let Some(py) = python(name) else { return };
    let py = py.to_str().unwrap().to_owned();
    let dir = scratch(name);
    // 64 MiB under a 16 MiB limit: OOM-killed (137), the kill counted, the usage kept.
    let out = dir.join("oom.json");
    let run = run_stepmon(&[
        "run",
        "-q",
        "-o",
        out.to_str().unwrap(),
        "--memory-max",
        "16M",
        "--",
        &py,
        "-c",
        "x = bytearray(64 << 20)",
    ]);
    assert_eq!(run.status.code(), Some(137), "{}", run.stderr);
    let document = json(&out);
    let memory = &document["stepmon"]["summary"]["memory"];
    assert!(memory["oomKills"].as_u64().unwrap() >= 1, "{memory}");
    assert!(memory["peakBytes"].as_u64().unwrap() > 8 << 20, "{memory}");
    assert_eq!(
        document["stepmon"]["verdicts"]["memory"]["class"], "oomKilled",
        "{}",
        document["stepmon"]["verdicts"]["memory"]
    );
    // A fork loop under pids.max 4 cannot fork a fifth task.
    let out = dir.join("pids.json");
    let run = run_stepmon(&[
        "run",
        "-q",
        "-o",
        out.to_str().unwrap(),
        "--pids-max",
        "4",
        "--",
        "sh",
        "-c",
        "for i in 1 2 3 4 5 6 7 8; do sleep 1 & done; wait",
    ]);
    assert!(run.stderr.contains("fork") || run.stderr.contains("Resource temporarily unavailable"), "{}", run.stderr);
    assert!(json(&out)["stepmon"]["summary"]["pidsPeak"].as_u64().unwrap() <= 4);
    // 0.2 cores for a busy loop: throttled.
    let out = dir.join("cpu.json");
    let run = run_stepmon(&[
        "run",
        "-q",
        "-o",
        out.to_str().unwrap(),
        "--cpus",
        "0.2",
        "--",
        "timeout",
        "1",
        "sh",
        "-c",
        "while :; do :; done",
    ]);
    assert_eq!(run.status.code(), Some(124), "{}", run.stderr);
    let cpu = &json(&out)["stepmon"]["summary"]["cpu"];
    assert!(cpu["throttledPeriods"].as_u64().unwrap() > 0, "{cpu}");
    assert!(cpu["averageCores"].as_f64().unwrap() < 0.35, "{cpu}");
    assert!(leftovers(&dirs, run.pid).is_empty(), "left {:?}", leftovers(&dirs, run.pid));
}

#[test]
fn nothing_is_left_after_sigterm_or_after_sigkill_and_gc() {
    let name = "nothing_is_left_after_sigterm_or_after_sigkill_and_gc";
    let Some(dirs) = v1_host(name) else { return };
    for signal in [rustix::process::Signal::TERM, rustix::process::Signal::KILL] {
        let mut child = stepmon().args(["run", "-q", "--", "sleep", "100"]).spawn().unwrap();
        let pid = child.id();
        // Wait until the step's v1 cgroup exists and holds the step.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while leftovers(&dirs, pid).is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!leftovers(&dirs, pid).is_empty(), "{signal:?}: no run directory appeared");
        std::thread::sleep(Duration::from_millis(100));
        rustix::process::kill_process(rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap(), signal)
            .unwrap();
        let status = wait_for(&mut child, Duration::from_secs(15));
        if signal == rustix::process::Signal::KILL {
            assert!(!leftovers(&dirs, pid).is_empty(), "SIGKILL: stepmon could not have cleaned up");
            let gc = run_stepmon(&["gc"]);
            assert!(gc.status.success(), "{}", gc.stderr);
        } else {
            assert_eq!(status.code(), Some(128 + 15), "SIGTERM is forwarded to the step");
        }
        assert!(leftovers(&dirs, pid).is_empty(), "{signal:?}: left {:?}", leftovers(&dirs, pid));
    }
}
