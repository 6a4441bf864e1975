//! Test cgroups: created under one dedicated parent of our own, killed and
//! removed on drop, skipped (loudly) without root or cgroup v2.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use stepmon_sampler::cgroup::discover;

pub use stepmon_testsupport::skip;

/// A parent cgroup of our own with one leaf; everything is killed and
/// removed on drop, also when the test fails.
pub struct TestCgroup {
    pub parent: PathBuf,
    pub leaf: PathBuf,
    child: Option<Child>,
}

impl TestCgroup {
    /// One leaf `step` under a parent of our own.
    pub fn create(name: &str) -> Option<TestCgroup> {
        if !rustix::process::geteuid().is_root() {
            skip::skip(name, "needs root to create cgroups and move processes");
            return None;
        }
        let location = match discover::locate() {
            Ok(location) => location,
            Err(e) => {
                skip::skip(name, format_args!("no cgroup v2 here: {e}"));
                return None;
            }
        };
        let parent = location.own_dir.join(format!("stepmon-test-{}-{name}", std::process::id()));
        std::fs::create_dir(&parent).unwrap();
        // Enable what our own parent may enable (only in the cgroup we created).
        let available = std::fs::read_to_string(parent.join("cgroup.controllers")).unwrap();
        for controller in available.split_whitespace().filter(|c| ["cpu", "memory", "io", "pids"].contains(c)) {
            std::fs::write(parent.join("cgroup.subtree_control"), format!("+{controller}")).unwrap();
        }
        let leaf = parent.join("step");
        std::fs::create_dir(&leaf).unwrap();
        Some(TestCgroup { parent, leaf, child: None })
    }

    pub fn spawn_busy(&mut self) {
        let child = Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        std::fs::write(self.leaf.join("cgroup.procs"), child.id().to_string()).unwrap();
        self.child = Some(child);
    }

    pub fn kill_all(&mut self) {
        if self.leaf.exists() {
            let _ = std::fs::write(self.leaf.join("cgroup.kill"), "1");
        }
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        for _ in 0..200 {
            match std::fs::read_to_string(self.leaf.join("cgroup.events")) {
                Ok(events) if events.contains("populated 1") => std::thread::sleep(Duration::from_millis(5)),
                _ => break,
            }
        }
    }

    pub fn remove(&mut self) {
        self.kill_all();
        for dir in [&self.leaf, &self.parent] {
            if dir.exists() {
                std::fs::remove_dir(dir).unwrap_or_else(|e| panic!("rmdir {}: {e}", dir.display()));
            }
        }
    }
}

impl Drop for TestCgroup {
    fn drop(&mut self) {
        self.kill_all();
        let _ = std::fs::remove_dir(&self.leaf);
        let _ = std::fs::remove_dir(&self.parent);
    }
}

/// Whether `controller` is enabled for the cgroup `dir`.
pub fn enabled(dir: &Path, controller: &str) -> bool {
    std::fs::read_to_string(dir.join("cgroup.controllers")).unwrap().split_whitespace().any(|c| c == controller)
}

/// Whether `controller` is bound to a cgroup v1 hierarchy on this host.
pub fn bound_to_v1(controller: &str) -> bool {
    // cgroup v1 names the io controller `blkio`.
    let v1_name = if controller == "io" { "blkio" } else { controller };
    std::fs::read_to_string("/proc/cgroups").unwrap_or_default().lines().any(|l| {
        let mut f = l.split_whitespace();
        f.next() == Some(v1_name) && f.next().is_some_and(|h| h != "0")
    })
}
