//! `stepmon run` where it cannot create a cgroup: inside a simulated
//! container (a private mount namespace — and cgroup namespace where
//! `unshare` has `-C` — with every cgroup mount bound read-only), as root
//! and as an unprivileged user, and as an unprivileged user on the host. The
//! step runs, its exit status comes back, its CPU matches `time`'s for the
//! same command, every number is labelled with its rung, and nothing is
//! written to any cgroupfs. `--require-cgroup` keeps the strict behaviour.
//!
//! Needs root (to make the namespace and to change user); prints `SKIPPED
//! <name>: <why>` otherwise.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{json, scratch};
use serde_json::Value;

/// The user the unprivileged runs take (uid and name; the VM tier's
/// /etc/passwd has it too).
const NOBODY: (&str, &str) = ("65534", "nobody");

/// Every cgroup mount point of this process (v1 and v2).
fn cgroup_mounts() -> Vec<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let fs = right.split_whitespace().next()?;
            (fs == "cgroup" || fs == "cgroup2").then(|| left.split_whitespace().nth(4).map(str::to_owned))?
        })
        .collect()
}

/// Run parents (`stepmon-run.*`) and probe cgroups anywhere under the
/// cgroup mounts, as a set of paths (to prove nothing was created).
fn run_dirs() -> Vec<PathBuf> {
    let mut found = Vec::new();
    for mount in cgroup_mounts() {
        let mut pending = vec![PathBuf::from(mount)];
        while let Some(dir) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    if entry.file_name().to_string_lossy().starts_with("stepmon-run.") {
                        found.push(entry.path());
                    }
                    pending.push(entry.path());
                }
            }
        }
    }
    found.sort();
    found
}

/// Whether `unshare` (util-linux, or busybox in the VM tier) takes `flag`.
fn unshare_has(flag: &str) -> bool {
    Command::new("unshare").args([flag, "true"]).output().is_ok_and(|o| o.status.success())
}

/// A command line that runs `inner` in a new mount namespace (and cgroup
/// namespace where `unshare` can) with every cgroup mount bound read-only:
/// what an unprivileged container sees.
fn in_container(inner: &[String]) -> Vec<String> {
    let mut binds = String::new();
    for mount in cgroup_mounts() {
        binds.push_str(&format!("mount --bind '{mount}' '{mount}' && mount -o remount,bind,ro '{mount}' && "));
    }
    let mut argv: Vec<String> = vec!["unshare".into(), "-m".into()];
    if unshare_has("-C") {
        argv.push("-C".into());
    }
    argv.extend(["--propagation".into(), "private".into(), "sh".into(), "-c".into()]);
    argv.push(format!("{binds}exec \"$@\""));
    argv.push("container".into());
    argv.extend(inner.iter().cloned());
    argv
}

/// `inner` as user `(uid, name)` (setpriv from util-linux, else busybox su).
fn as_user((uid, name): (&str, &str), inner: &[String]) -> Vec<String> {
    let setpriv = Command::new("setpriv").args(["--reuid", uid, "--regid", uid, "--clear-groups", "true"]).output();
    if setpriv.is_ok_and(|o| o.status.success()) {
        let mut argv: Vec<String> =
            ["setpriv", "--reuid", uid, "--regid", uid, "--clear-groups"].iter().map(|s| (*s).to_owned()).collect();
        argv.extend(inner.iter().cloned());
        return argv;
    }
    let quoted: Vec<String> = inner.iter().map(|a| format!("'{}'", a.replace('\'', "'\\''"))).collect();
    vec!["su".into(), "-s".into(), "/bin/sh".into(), name.into(), "-c".into(), quoted.join(" ")]
}

fn run(argv: &[String]) -> Output {
    Command::new(&argv[0]).args(&argv[1..]).output().unwrap()
}

fn stepmon_args(out: &Path, extra: &[&str], command: &[&str]) -> Vec<String> {
    let mut argv = vec![env!("CARGO_BIN_EXE_stepmon").to_owned(), "run".into(), "-o".into()];
    argv.push(out.display().to_string());
    argv.extend(extra.iter().map(|s| (*s).to_owned()));
    argv.push("--".into());
    argv.extend(command.iter().map(|s| (*s).to_owned()));
    argv
}

/// A busy shell loop of about 0.1 s of CPU here (seconds in the VM tier), timed by `time` inside
/// the step (GNU time on the host, busybox's in the VM tier: both take -f/-o),
/// then `exit 3`.
fn timed_workload(time_out: &Path) -> Vec<String> {
    let time_out = time_out.display();
    vec![
        "sh".into(),
        "-c".into(),
        format!("time -f '%U %S' -o '{time_out}' sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done'; exit 3"),
    ]
}

fn time_cpu_seconds(file: &Path) -> f64 {
    let text = std::fs::read_to_string(file).unwrap();
    let line = text.lines().last().unwrap();
    line.split_whitespace().map(|v| v.parse::<f64>().unwrap()).sum()
}

/// Checks one run without a cgroup of its own: status, labels, CPU.
fn check_fallback(what: &str, output: &Output, out: &Path, time_out: &Path) -> Value {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{what}: {stderr}");
    assert!(stderr.contains("stepmon: notice: the step gets no cgroup of its own"), "{what}: {stderr}");
    let document = json(out);
    let run = &document["stepmon"];
    assert_eq!(run["exitCode"], 3, "{what}");
    assert_eq!(run["sources"]["cpu"]["rung"], "processTree", "{what}: {}", run["sources"]);
    assert_eq!(run["sources"]["io"]["rung"], "processTree", "{what}: {}", run["sources"]);
    assert_eq!(document["resourceUsage"]["samples"].as_array().map_or(0, Vec::len), 0, "{what}");
    assert!(run["placement"].as_str().unwrap().starts_with("no cgroup of its own"), "{what}: {}", run["placement"]);
    // The summary says where each line came from.
    assert!(stderr.contains("[process tree]"), "{what}: {stderr}");
    let cpu = run["summary"]["cpu"]["usageSeconds"].as_f64().unwrap();
    let timed = time_cpu_seconds(time_out);
    // time's figures are in 10 ms steps and leave out its own exec (and the
    // outer shell's few ms): 5% plus 30 ms.
    assert!((cpu - timed).abs() <= 0.05 * timed + 0.03, "{what}: process tree {cpu} s vs time's {timed} s");
    eprintln!("{what}: process tree {cpu:.3} s, time {timed:.3} s, sources {}", run["sources"]);
    document
}

fn root_or_skip(name: &str) -> bool {
    if !rustix::process::geteuid().is_root() {
        common::skip::skip(name, "needs root to make namespaces and change user");
        return false;
    }
    true
}

#[test]
fn container_with_read_only_cgroupfs_as_root_and_as_nobody() {
    let name = "container_with_read_only_cgroupfs_as_root_and_as_nobody";
    if !root_or_skip(name) {
        return;
    }
    let dir = scratch(name);
    std::fs::set_permissions(&*dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let before = run_dirs();
    for (who, wrap) in [("root", false), ("nobody", true)] {
        let out = dir.join(format!("{who}.json"));
        let time_out = dir.join(format!("{who}.time"));
        let mut argv =
            stepmon_args(&out, &[], &timed_workload(&time_out).iter().map(String::as_str).collect::<Vec<_>>());
        if wrap {
            argv = as_user(NOBODY, &argv);
        }
        let output = run(&in_container(&argv));
        let document = check_fallback(&format!("container, {who}"), &output, &out, &time_out);
        let sources = &document["stepmon"]["sources"];
        // PSI of whatever cgroup is readable: the container's, or the root's.
        if let Some(pressure) = sources.get("pressure") {
            assert!(["enclosingCgroup", "machine"].contains(&pressure["rung"].as_str().unwrap()), "{pressure}");
        }
    }
    // doctor predicts the same rungs there, and what would move them up.
    let doctor = run(&in_container(&[env!("CARGO_BIN_EXE_stepmon").to_owned(), "doctor".into(), "--json".into()]));
    assert!(doctor.status.success(), "{}", String::from_utf8_lossy(&doctor.stderr));
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    assert_eq!(report["stepCgroup"], false, "{report}");
    let rung = |resource: &str| -> &Value {
        report["rungs"].as_array().unwrap().iter().find(|r| r["resource"] == resource).unwrap()
    };
    assert_eq!(rung("cpu")["rung"], "processTree", "{report}");
    assert!(rung("cpu")["toImprove"].as_str().unwrap().contains("writable cgroupfs"), "{report}");
    assert_eq!(rung("io")["rung"], "processTree", "{report}");
    assert_eq!(run_dirs(), before, "a run wrote to a cgroupfs");
}

#[test]
fn unprivileged_user_on_the_host() {
    let name = "unprivileged_user_on_the_host";
    if !root_or_skip(name) {
        return;
    }
    let dir = scratch(name);
    std::fs::set_permissions(&*dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let before = run_dirs();
    let out = dir.join("nobody.json");
    let time_out = dir.join("nobody.time");
    let argv = stepmon_args(&out, &[], &timed_workload(&time_out).iter().map(String::as_str).collect::<Vec<_>>());
    let output = run(&as_user(NOBODY, &argv));
    check_fallback("host, nobody", &output, &out, &time_out);
    assert_eq!(run_dirs(), before, "a run as nobody wrote to a cgroupfs");
}

#[test]
fn require_cgroup_refuses_and_runs_nothing() {
    let name = "require_cgroup_refuses_and_runs_nothing";
    if !root_or_skip(name) {
        return;
    }
    let dir = scratch(name);
    let marker = dir.join("ran");
    let out = dir.join("out.json");
    let touch = format!("touch '{}'", marker.display());
    let argv = stepmon_args(&out, &["--require-cgroup"], &["sh", "-c", &touch]);
    let output = run(&in_container(&argv));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(125), "{stderr}");
    assert!(stderr.contains("cannot create a cgroup under"), "{stderr}");
    assert!(!marker.exists(), "the step ran although a cgroup was required");
    // A command that does not exist is still 127, without a cgroup too.
    let output = run(&in_container(&stepmon_args(&out, &[], &["/nonexistent/program"])));
    assert_eq!(output.status.code(), Some(127), "{}", String::from_utf8_lossy(&output.stderr));
}
