//! The step probe on a fake pure cgroup v2 directory (files written by hand
//! from the kernel spec, tests/data/pure-v2-step): exact values and the exact
//! BuildKit JSON.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use jiff::Timestamp;
use stepmon_model::missing::MissingKind;
use stepmon_model::sample::{LimitJson, MaxToken};
use stepmon_sampler::cgroup::CgroupProbe;

fn data() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pure-v2-step"))
}

fn at() -> Timestamp {
    "2026-11-30T10:00:02.5Z".parse().unwrap()
}

#[test]
fn reads_every_file_with_exact_values() {
    let mut probe = CgroupProbe::open(data()).unwrap();
    let s = probe.read(at());
    let cpu = s.cpu_stat.unwrap();
    assert_eq!(
        (cpu.usage_nanos, cpu.user_nanos, cpu.system_nanos),
        (Some(1_500_000_000), Some(1_200_000_000), Some(300_000_000))
    );
    assert_eq!((cpu.nr_periods, cpu.nr_throttled, cpu.throttled_nanos), (Some(40), Some(12), Some(250_000_000)));
    assert_eq!(cpu.pressure.unwrap().some.unwrap().total, Some(400_000));
    let mem = s.memory_stat.unwrap();
    assert_eq!(
        (mem.anon, mem.file, mem.peak, mem.swap_bytes),
        (Some(64 << 20), Some(4 << 20), Some(68 << 20), Some(0))
    );
    assert_eq!((mem.oom_kill_events, mem.max_events, mem.low_events), (1, 5, 0));
    let io = s.io_stat.unwrap();
    assert_eq!((io.read_bytes, io.write_bytes, io.write_ios), (Some(1 << 20), Some(32 << 20), Some(256)));
    assert_eq!(s.pids_stat.current, Some(0));
    let ext = &s.stepmon;
    assert_eq!(
        (ext.memory_current, ext.pids_peak, ext.memory_max, ext.memory_high),
        (Some(16 << 20), Some(9), Some(LimitJson::Value(64 << 20)), Some(LimitJson::Max(MaxToken::Max)))
    );
    assert_eq!(
        (ext.cpu_max_quota_usec, ext.cpu_max_period_usec, ext.pids_max),
        (Some(LimitJson::Value(50_000)), Some(100_000), Some(LimitJson::Max(MaxToken::Max)))
    );
    assert_eq!(ext.io_devices.len(), 2);
    assert_eq!(ext.populated, Some(false));
    assert_eq!(ext.memory_events.unwrap().oom_group_kill, Some(0));
    // Only irq.pressure is absent from the fake directory.
    assert_eq!(ext.missing.len(), 1, "{:?}", ext.missing);
    assert_eq!(
        (ext.missing[0].field.as_ref(), ext.missing[0].kind),
        ("stepmon.irqPressure", MissingKind::KernelFeatureMissing)
    );
}

#[test]
fn buildkit_json_golden() {
    let mut probe = CgroupProbe::open(data()).unwrap();
    let json = serde_json::to_string_pretty(&probe.read(at())).unwrap();
    let expected = include_str!("data/pure-v2-step.golden.json");
    assert_eq!(json.trim_end(), expected.trim_end(), "actual JSON:\n{json}");
}

/// A scratch directory to lay a fake cgroup out in, removed on drop (also
/// when the test fails).
fn fake_cgroup_dir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("stepmon-fake-cgroup-").tempdir().unwrap()
}

#[test]
fn removed_files_and_directories_give_reasons_not_errors() {
    let scratch = fake_cgroup_dir();
    let dir = scratch.path();
    for entry in std::fs::read_dir(data()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    // A kernel without memory.peak (< 5.19) and pids.peak (< 6.1), so
    // without memory.swap.peak (6.5) either: a directory that kept it would
    // show a kernel that has the other two (cgroup_probe_partial.rs).
    std::fs::remove_file(dir.join("memory.peak")).unwrap();
    std::fs::remove_file(dir.join("pids.peak")).unwrap();
    std::fs::remove_file(dir.join("memory.swap.peak")).unwrap();
    let mut probe = CgroupProbe::open(dir).unwrap();
    let s = probe.read(at());
    assert_eq!(s.memory_stat.unwrap().peak, None);
    let reason = |field: &str| s.stepmon.missing.iter().find(|m| m.field == field).map(|m| m.kind);
    assert_eq!(reason("memoryStat.peak"), Some(MissingKind::KernelTooOld));
    assert_eq!(reason("stepmon.pidsPeak"), Some(MissingKind::KernelTooOld));
    // A malformed file is a parse failure for its field only.
    std::fs::write(dir.join("io.stat"), b"8:0 rbytes=oops\n").unwrap();
    let s = probe.read(at());
    assert!(s.cpu_stat.is_some() && s.memory_stat.is_some());
    let io = s.io_stat.unwrap();
    assert_eq!(io.read_bytes, None);
    assert!(io.pressure.is_some());
    let parse = s.stepmon.missing.iter().find(|m| m.field == "ioStat").unwrap();
    assert_eq!(parse.kind, MissingKind::Parse);
    assert!(parse.reason.contains("io.stat") && parse.file == "io.stat", "{parse:?}");
}

#[test]
fn controllers_not_enabled_are_named_once() {
    let scratch = fake_cgroup_dir();
    let dir = scratch.path();
    // What a child of a cgroup with an empty subtree_control has.
    std::fs::write(dir.join("cgroup.controllers"), b"").unwrap();
    std::fs::write(dir.join("cgroup.events"), b"populated 1\nfrozen 0\n").unwrap();
    std::fs::write(dir.join("cpu.stat"), b"usage_usec 10\nuser_usec 5\nsystem_usec 5\nnice_usec 0\n").unwrap();
    let mut probe = CgroupProbe::open(dir).unwrap();
    let s = probe.read(at());
    assert_eq!(s.cpu_stat.unwrap().usage_nanos, Some(10_000));
    assert!(s.memory_stat.is_none() && s.io_stat.is_none());
    let fields: Vec<&str> = s.stepmon.missing.iter().map(|m| m.field.as_ref()).collect();
    for expected in ["memoryStat", "ioStat", "pidsStat", "cpuStat.nrThrottled", "cpuStat.pressure"] {
        assert!(fields.contains(&expected), "{expected} not in {fields:?}");
    }
    assert_eq!(fields.iter().filter(|f| **f == "memoryStat").count(), 1);
}
