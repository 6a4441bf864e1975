//! `stepmon gc` with the real binary on a cgroup subtree of the test's own
//! (`--cgroup-parent`), so that no other run on the machine — whose own
//! start-up `gc` scans the default parent — can interfere. Needs root and
//! cgroup v2; prints `SKIPPED <name>: <why>` otherwise.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use common::{live, run_stepmon, start_time, wait_for};

/// A `sleep` moved into `cgroup` (created if needed).
fn sleeper_in(cgroup: &Path) -> Child {
    std::fs::create_dir_all(cgroup).unwrap();
    let child = Command::new("sleep").arg("100").spawn().unwrap();
    std::fs::write(cgroup.join("cgroup.procs"), child.id().to_string()).unwrap();
    child
}

/// Removes the test's subtree whatever happened (kill, then rmdir bottom-up).
struct Subtree(PathBuf);

impl Drop for Subtree {
    fn drop(&mut self) {
        fn remove(dir: &Path) {
            if let Ok(entries) = std::fs::read_dir(dir) {
                for entry in entries.flatten() {
                    if entry.file_type().is_ok_and(|t| t.is_dir()) {
                        remove(&entry.path());
                    }
                }
            }
            let _ = std::fs::write(dir.join("cgroup.kill"), "1");
            for _ in 0..100 {
                if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        remove(&self.0);
    }
}

#[test]
fn gc_removes_dead_owners_runs_and_nothing_else() {
    let Some(own) = live("gc_removes_dead_owners_runs_and_nothing_else") else { return };
    let base = own.join(format!("stepmon-test-gc.{}", std::process::id()));
    std::fs::create_dir(&base).unwrap();
    let _cleanup = Subtree(base.clone());

    // A dead owner: a process that existed, with its real start time.
    let mut owner = Command::new("sleep").arg("100").spawn().unwrap();
    let (dead_pid, dead_start) = (owner.id(), start_time(owner.id()).unwrap());
    owner.kill().unwrap();
    owner.wait().unwrap();
    let stale = base.join(format!("stepmon-run.{dead_pid}.{dead_start}"));
    let mut orphan = sleeper_in(&stale.join("step"));

    // A live owner (this test process) and directories gc must not touch.
    let me = std::process::id();
    let alive = base.join(format!("stepmon-run.{me}.{}", start_time(me).unwrap()));
    let mut kept = sleeper_in(&alive.join("step"));
    let unrelated = [base.join("unrelated"), base.join("stepmon-run.garbage"), base.join("stepmon-run.12.x")];
    for dir in &unrelated {
        std::fs::create_dir(dir).unwrap();
    }

    let dry = run_stepmon(&["gc", "--dry-run", "--cgroup-parent", base.to_str().unwrap()]);
    assert!(dry.status.success(), "{}", dry.stderr);
    assert!(dry.stderr.contains(&format!("would remove {}", stale.display())), "{}", dry.stderr);
    assert!(stale.exists() && orphan.try_wait().unwrap().is_none(), "--dry-run must not remove anything");

    let gc = run_stepmon(&["gc", "--cgroup-parent", base.to_str().unwrap()]);
    assert!(gc.status.success(), "{}", gc.stderr);
    assert!(gc.stderr.contains(&format!("removed {}", stale.display())), "{}", gc.stderr);
    assert_eq!(gc.stderr.lines().count(), 1, "only the stale run is reported: {}", gc.stderr);
    let status = wait_for(&mut orphan, Duration::from_secs(5));
    assert_eq!(status.signal(), Some(9), "the stale run's process was killed");
    assert!(!stale.exists(), "the stale run parent is gone");

    assert!(alive.join("step").exists(), "a live run is kept");
    assert!(kept.try_wait().unwrap().is_none(), "a live run's process is left alone");
    for dir in &unrelated {
        assert!(dir.exists(), "{} is not a run parent and is kept", dir.display());
    }
    kept.kill().unwrap();
    kept.wait().unwrap();
}
