//! `CgroupV1Probe` on files a real hybrid host's v1 hierarchies printed
//! (`cgroupfs-parse/tests/data/hybrid-6.18-v1`, made by scripts/capture-v1):
//! each v1 file lands in the sample field of the same meaning, a step with
//! no cgroup v2 gets a whole sample from v1 alone, what v2 measured is kept,
//! and a missing v1 file is a reason, not a zero.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use jiff::Timestamp;
use stepmon_model::sample::{CpuStat, LimitJson, StepSample};
use stepmon_sampler::cgroup::{CgroupV1Dirs, CgroupV1Probe};

fn capture(dir: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cgroupfs-parse/tests/data/hybrid-6.18-v1").join(dir)
}

fn all_dirs(memory: &str) -> CgroupV1Dirs {
    let mut dirs = CgroupV1Dirs::default();
    dirs.memory = Some(capture(memory));
    dirs.pids = Some(capture("pids"));
    dirs.cpu = Some(capture("cpu"));
    dirs.cpuacct = Some(capture("cpuacct"));
    dirs.blkio = Some(capture("blkio"));
    dirs
}

fn sample_of(dirs: CgroupV1Dirs) -> StepSample {
    let mut probe = CgroupV1Probe::open(dirs);
    let mut sample = StepSample::empty(Timestamp::UNIX_EPOCH);
    probe.fill(&mut sample);
    sample
}

#[test]
fn every_v1_file_lands_in_its_field() {
    let s = sample_of(all_dirs("memory"));
    let memory = s.memory_stat.unwrap();
    assert_eq!(memory.peak, Some(74_723_328), "memory.max_usage_in_bytes");
    assert_eq!(s.stepmon.memory_current, Some(36_478_976), "memory.usage_in_bytes");
    assert_eq!((memory.anon, memory.file, memory.shmem), (Some(1_044_480), Some(33_558_528), Some(0)));
    assert_eq!(s.pids_stat.current, Some(9));
    assert_eq!(s.stepmon.pids_peak, Some(10));
    assert_eq!(s.stepmon.pids_max, Some(LimitJson::Value(64)));
    let cpu = s.cpu_stat.unwrap();
    assert_eq!(cpu.usage_nanos, Some(1_231_317_866), "cpuacct.usage");
    // USER_HZ ticks: 90 and 32 of 10 ms.
    assert_eq!((cpu.user_nanos, cpu.system_nanos), (Some(900_000_000), Some(320_000_000)));
    assert_eq!((cpu.nr_periods, cpu.nr_throttled, cpu.throttled_nanos), (Some(26), Some(22), Some(707_401_244)));
    assert_eq!(s.stepmon.cpu_max_quota_usec, Some(LimitJson::Value(50_000)));
    assert_eq!(s.stepmon.cpu_max_period_usec, Some(100_000));
    let io = s.io_stat.unwrap();
    assert_eq!(io.read_bytes, Some(32 << 20), "dd read 32 MiB back with iflag=direct");
    assert!(io.write_bytes.unwrap() >= 32 << 20, "{io:?}");
    let missing: Vec<&str> = s.stepmon.missing.iter().map(|m| &*m.field).collect();
    assert!(missing.is_empty(), "{missing:?}");
}

#[test]
fn an_oom_kill_and_limit_hits_are_counted() {
    let s = sample_of(all_dirs("memory-oom"));
    let events = s.stepmon.memory_events.unwrap();
    assert_eq!(events.oom_kill, Some(1));
    assert_eq!(events.max, Some(59), "memory.failcnt");
    let memory = s.memory_stat.unwrap();
    assert_eq!((memory.oom_kill_events, memory.max_events), (1, 59), "BuildKit's counters of the same meaning");
    assert_eq!(s.stepmon.memory_max, Some(LimitJson::Value(32 << 20)));
}

#[test]
fn cgroup_v2_numbers_are_kept_and_v1_fills_the_rest() {
    let mut probe = CgroupV1Probe::open(all_dirs("memory"));
    let mut sample = StepSample::empty(Timestamp::UNIX_EPOCH);
    let mut v2_cpu = CpuStat::default();
    v2_cpu.usage_nanos = Some(5);
    v2_cpu.user_nanos = Some(3);
    v2_cpu.system_nanos = Some(2);
    sample.cpu_stat = Some(v2_cpu);
    sample.stepmon.missing.push(stepmon_model::missing::Missing::new(
        "memoryStat",
        "cgroup.controllers",
        stepmon_model::missing::MissingKind::ControllerOnCgroupV1,
        "bound to v1",
    ));
    probe.fill(&mut sample);
    let cpu = sample.cpu_stat.unwrap();
    // v2's exact µs usage stays; v1 adds the throttling it lacked.
    assert_eq!((cpu.usage_nanos, cpu.user_nanos), (Some(5), Some(3)));
    assert_eq!(cpu.nr_throttled, Some(22));
    assert!(sample.memory_stat.is_some());
    assert!(sample.stepmon.missing.iter().all(|m| m.field != "memoryStat"), "{:?}", sample.stepmon.missing);
}

#[test]
fn a_missing_v1_file_is_a_reason_not_a_zero() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(capture("pids").join("pids.current"), dir.path().join("pids.current")).unwrap();
    let mut dirs = CgroupV1Dirs::default();
    dirs.pids = Some(dir.path().to_path_buf());
    let s = sample_of(dirs);
    assert_eq!(s.pids_stat.current, Some(9));
    assert_eq!(s.stepmon.pids_peak, None);
    let reason = s.stepmon.missing.iter().find(|m| m.field == "stepmon.pidsPeak").unwrap();
    assert!(reason.reason.contains("pids.peak does not exist"), "{reason:?}");
}
