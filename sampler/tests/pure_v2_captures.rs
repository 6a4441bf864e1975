//! The step probe on real pure cgroup v2 files: the cgroup of a step captured
//! by `ci/vm/capture` in a VM with Debian's stock kernel, every controller
//! enabled (`tests/data/pure-v2-<uname -r>/`, the step's files as the probe
//! finds them, plus `stepmon-run.json`, the report of that run). Every value
//! the probe reports must be the one the file says, parsed independently
//! here; nothing may be missing but what that kernel lacks. The step is
//! described in `ci/vm/guest/capture-step.sh` (memory.max 48M, cpu.max
//! 50000/100000, pids.max 64, one OOM kill, 16 MiB written to disk).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use stepmon_cgroupfs_parse::format::single;
use stepmon_cgroupfs_parse::{CpuStat, IoStat, MemoryEvents, MemoryStat};
use stepmon_model::missing::MissingKind;
use stepmon_model::sample::LimitJson;
use stepmon_psi::Pressure;
use stepmon_sampler::cgroup::CgroupProbe;

const MIB: u64 = 1 << 20;

/// Every `tests/data/pure-v2-*/` folder that is a capture (has `cpu.stat`).
fn captures() -> Vec<PathBuf> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && p.file_name().unwrap().to_str().unwrap().starts_with("pure-v2-"))
        .filter(|p| p.join("cpu.stat").is_file() && p.join("stepmon-run.json").is_file())
        .collect();
    found.sort();
    assert!(!found.is_empty(), "no pure-v2-<release> capture in {}", data.display());
    found
}

fn read(dir: &Path, file: &str) -> Vec<u8> {
    std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{}/{file}: {e}", dir.display()))
}

fn pressure_total(dir: &Path, file: &str) -> Option<u64> {
    Pressure::parse(&read(dir, file)).unwrap().some.and_then(|line| line.total_usec)
}

#[test]
fn probe_reads_every_controller_exactly_as_the_files_say() {
    for dir in captures() {
        let mut probe = CgroupProbe::open(&dir).unwrap();
        let s = probe.read("2026-11-30T10:00:00Z".parse::<Timestamp>().unwrap());

        // Nothing missing but what Debian's 6.1 kernel lacks: irq.pressure
        // (no CONFIG_IRQ_TIME_ACCOUNTING) and memory.swap.peak (6.5+). A
        // later kernel may have them; it must never miss anything else.
        for m in &s.stepmon.missing {
            let expected = match m.field.as_ref() {
                "stepmon.irqPressure" => MissingKind::KernelFeatureMissing,
                "stepmon.memorySwapPeak" => MissingKind::KernelTooOld,
                other => panic!("{dir:?}: {other} missing: {m:?}"),
            };
            assert_eq!(m.kind, expected, "{m:?}");
            assert!(!dir.join(m.file.as_ref()).exists(), "{m:?} but the file is there");
        }

        let raw = CpuStat::parse(&read(&dir, "cpu.stat")).unwrap();
        let cpu = s.cpu_stat.unwrap();
        assert_eq!(cpu.usage_nanos, raw.usage_usec.map(|u| u * 1000));
        assert_eq!(cpu.user_nanos, raw.user_usec.map(|u| u * 1000));
        assert_eq!(cpu.system_nanos, raw.system_usec.map(|u| u * 1000));
        assert_eq!(cpu.nr_throttled.map(u64::from), raw.nr_throttled);
        assert!(cpu.nr_throttled.unwrap() > 0, "the step spun under cpu.max");
        assert_eq!(cpu.pressure.unwrap().some.unwrap().total, pressure_total(&dir, "cpu.pressure"));
        assert_eq!(s.stepmon.cpu_max_quota_usec, Some(LimitJson::Value(50_000)));
        assert_eq!(s.stepmon.cpu_max_period_usec, Some(100_000));

        let raw = MemoryStat::parse(&read(&dir, "memory.stat")).unwrap();
        let events = MemoryEvents::parse(&read(&dir, "memory.events")).unwrap();
        let mem = s.memory_stat.unwrap();
        assert_eq!((mem.anon, mem.file, mem.slab), (raw.anon, raw.file, raw.slab));
        assert_eq!(mem.peak, Some(single::parse_u64(&read(&dir, "memory.peak")).unwrap()));
        assert!(mem.peak.unwrap() >= 32 * MIB, "32 MiB were held");
        assert_eq!(mem.swap_bytes, Some(0), "no swap in the VM");
        assert_eq!(mem.oom_kill_events, events.oom_kill.unwrap());
        assert!(mem.oom_kill_events >= 1 && mem.max_events >= 1, "{mem:?}");
        assert_eq!(mem.pressure.unwrap().some.unwrap().total, pressure_total(&dir, "memory.pressure"));
        assert_eq!(s.stepmon.memory_max, Some(LimitJson::Value(48 * MIB)));
        assert_eq!(s.stepmon.memory_current, Some(single::parse_u64(&read(&dir, "memory.current")).unwrap()));
        assert_eq!(s.stepmon.memory_events.unwrap().oom_kill, events.oom_kill);

        let raw = IoStat::parse(&read(&dir, "io.stat")).unwrap().totals();
        let io = s.io_stat.unwrap();
        assert_eq!((io.read_bytes, io.write_bytes, io.write_ios), (raw.rbytes, raw.wbytes, raw.wios));
        assert!(io.write_bytes.unwrap() >= 16 * MIB, "8 MiB O_DIRECT + 8 MiB buffered + fsync");
        assert_eq!(io.pressure.unwrap().some.unwrap().total, pressure_total(&dir, "io.pressure"));
        assert_eq!(s.stepmon.io_devices.len(), 1, "one virtio disk: {:?}", s.stepmon.io_devices);

        assert_eq!(s.pids_stat.current, Some(single::parse_u64(&read(&dir, "pids.current")).unwrap()));
        assert!(s.stepmon.pids_peak.unwrap() >= 9, "8 children and their shell");
        assert_eq!(s.stepmon.pids_max, Some(LimitJson::Value(64)));
        assert_eq!(s.stepmon.populated, Some(true), "captured while the step ran");
    }
}

#[test]
fn the_run_report_of_the_captured_step_agrees_with_its_files() {
    for dir in captures() {
        let json: serde_json::Value = serde_json::from_slice(&read(&dir, "stepmon-run.json")).unwrap();
        let step = &json["stepmon"];
        assert_eq!(step["exitCode"], 0, "{dir:?}");
        assert_eq!(step["host"]["cgroupLayout"], "unified");
        assert_eq!(step["controllers"].as_array().unwrap().len(), 4, "{}", step["controllers"]);
        assert_eq!(step["controllersNotEnabled"].as_array().map(Vec::len), Some(0));
        let summary = &step["summary"];
        // The files were copied before the step ended; the report's final
        // sample came after, so its totals can only be larger.
        let peak = single::parse_u64(&read(&dir, "memory.peak")).unwrap();
        assert!(summary["memory"]["peakBytes"].as_u64().unwrap() >= peak, "{summary}");
        assert!(summary["memory"]["oomKills"].as_u64().unwrap() >= 1, "{summary}");
        let written = IoStat::parse(&read(&dir, "io.stat")).unwrap().totals().wbytes.unwrap();
        assert!(summary["io"]["writeBytes"].as_u64().unwrap() >= written, "{summary}");
        let pids_peak = single::parse_u64(&read(&dir, "pids.peak")).unwrap();
        assert!(summary["pidsPeak"].as_u64().unwrap() >= pids_peak, "{summary}");
        assert!(summary["cpu"]["throttledSeconds"].as_f64().unwrap() > 0.0, "{summary}");
        let samples = json["resourceUsage"]["samples"].as_array().unwrap();
        assert!(samples.len() >= 2, "{} samples", samples.len());
    }
}
