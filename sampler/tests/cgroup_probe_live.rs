//! The step probe on a real cgroup of this machine. Needs root (to create a
//! cgroup and move a process into it); prints SKIPPED otherwise. Adapts to
//! the host: on a hybrid host (memory/io/pids bound to cgroup v1) those
//! controllers must be reported missing with that reason; where they are
//! available (pure v2, e.g. the VM test tier) they must be read.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::time::Duration;

use common::{TestCgroup, bound_to_v1, enabled};

use jiff::Timestamp;
use stepmon_model::missing::MissingKind;
use stepmon_sampler::cgroup::CgroupProbe;

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

    let missing = |field: &str| busy.stepmon.missing.iter().find(|m| m.field == field).map(|m| m.kind);
    for (controller, object) in [("memory", "memoryStat"), ("io", "ioStat"), ("pids", "pidsStat")] {
        if enabled(&cgroup.leaf, controller) {
            assert_eq!(missing(object), None, "{controller} is enabled, so {object} must be read");
        } else {
            let expected = if bound_to_v1(controller) {
                MissingKind::ControllerOnCgroupV1
            } else {
                MissingKind::ControllerNotEnabled
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
    let reason = gone.stepmon.missing.iter().find(|m| m.field == "cpuStat").map(|m| m.kind);
    assert_eq!(reason, Some(MissingKind::CgroupRemoved), "{:?}", gone.stepmon.missing);
}
