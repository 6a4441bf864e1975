//! The step probe on a real cgroup of this machine. Needs root (to create a
//! cgroup and move a process into it); prints SKIPPED otherwise. Adapts to
//! the host: on a hybrid host (memory/io/pids bound to cgroup v1) those
//! controllers must be reported missing with that reason; where they are
//! available (pure v2, e.g. the VM test tier) they must be read.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use jiff::Timestamp;
use stepmon_sampler::cgroup::{CgroupProbe, discover};
use stepmon_sampler::model::MissingReason;

/// A parent cgroup of our own with one leaf; everything is killed and
/// removed on drop, also when the test fails.
struct TestCgroup {
    parent: PathBuf,
    leaf: PathBuf,
    child: Option<Child>,
}

impl TestCgroup {
    fn create(name: &str) -> Option<TestCgroup> {
        if !rustix::process::geteuid().is_root() {
            eprintln!("SKIPPED {name}: needs root to create cgroups and move processes");
            return None;
        }
        let location = match discover::locate() {
            Ok(location) => location,
            Err(e) => {
                eprintln!("SKIPPED {name}: no cgroup v2 here: {e}");
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

    fn spawn_busy(&mut self) {
        let child = Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        std::fs::write(self.leaf.join("cgroup.procs"), child.id().to_string()).unwrap();
        self.child = Some(child);
    }

    fn kill_all(&mut self) {
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

    fn remove(&mut self) {
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

fn enabled(dir: &Path, controller: &str) -> bool {
    std::fs::read_to_string(dir.join("cgroup.controllers")).unwrap().split_whitespace().any(|c| c == controller)
}

fn bound_to_v1(controller: &str) -> bool {
    std::fs::read_to_string("/proc/cgroups").unwrap_or_default().lines().any(|l| {
        let mut f = l.split_whitespace();
        f.next() == Some(controller) && f.next().is_some_and(|h| h != "0")
    })
}

#[test]
fn busy_process_gets_real_cpu_and_psi_and_absent_controllers_say_why() {
    let Some(mut cgroup) = TestCgroup::create("probe") else { return };
    let mut probe = CgroupProbe::open(&cgroup.leaf).unwrap();
    let baseline = probe.read(Timestamp::now());
    assert_eq!(baseline.stepmon.populated, Some(false));
    cgroup.spawn_busy();
    std::thread::sleep(Duration::from_millis(600));
    let busy = probe.read(Timestamp::now());
    cgroup.kill_all();
    let last = probe.read(Timestamp::now());

    assert_eq!(busy.stepmon.populated, Some(true));
    assert_eq!(last.stepmon.populated, Some(false));
    let cpu = busy.cpu_stat.unwrap();
    let usage = cpu.usage_nanos.unwrap();
    assert!(usage >= 200_000_000, "a busy loop for 600 ms used only {usage} ns");
    assert!(last.cpu_stat.unwrap().usage_nanos.unwrap() >= usage, "cumulative usage never goes back");
    if Path::new("/proc/pressure/cpu").exists() {
        assert!(cpu.pressure.is_some(), "PSI is on here, cpu.pressure must be read");
    }

    let missing = |field: &str| busy.stepmon.missing.iter().find(|m| m.field == field).map(|m| m.reason);
    for (controller, object) in [("memory", "memoryStat"), ("io", "ioStat"), ("pids", "pidsStat")] {
        if enabled(&cgroup.leaf, controller) {
            assert_eq!(missing(object), None, "{controller} is enabled, so {object} must be read");
        } else {
            let expected = if bound_to_v1(controller) {
                MissingReason::ControllerOnCgroupV1
            } else {
                MissingReason::ControllerNotEnabled
            };
            assert_eq!(missing(object), Some(expected), "{controller}: {:?}", busy.stepmon.missing);
        }
    }
    if enabled(&cgroup.leaf, "memory") {
        let memory = busy.memory_stat.unwrap();
        assert!(memory.anon.is_some() && memory.file.is_some() && memory.peak.is_some());
    }
    if enabled(&cgroup.leaf, "pids") {
        assert!(busy.pids_stat.current.unwrap() >= 1);
    }
    eprintln!(
        "live probe: usage {usage} ns, cpu controller {}, memory {}, io {}, pids {}",
        enabled(&cgroup.leaf, "cpu"),
        enabled(&cgroup.leaf, "memory"),
        enabled(&cgroup.leaf, "io"),
        enabled(&cgroup.leaf, "pids")
    );

    // The cgroup removed under the held fds: reasons, not errors.
    cgroup.remove();
    let gone = probe.read(Timestamp::now());
    assert!(gone.cpu_stat.is_none());
    let reason = gone.stepmon.missing.iter().find(|m| m.field == "cpuStat").map(|m| m.reason);
    assert_eq!(reason, Some(MissingReason::CgroupRemoved), "{:?}", gone.stepmon.missing);
}
