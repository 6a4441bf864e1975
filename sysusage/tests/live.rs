//! Invariants on this machine's live /proc. Linux only; a part that needs a
//! kernel feature (PSI) prints that it is skipped and why.

use stepmon_testsupport::skip;

use std::time::Duration;

use stepmon_model::missing::MissingKind;
use stepmon_sysusage::parse::{CpuTimes, KernelStat, Pressure};
use stepmon_sysusage::probe::{ProcFile, SysProbe, SysReading};

fn offline_cpus() -> String {
    std::fs::read_to_string("/sys/devices/system/cpu/offline").unwrap_or_default().trim().to_string()
}

#[test]
fn per_cpu_ticks_add_up_to_the_aggregate() {
    let offline = offline_cpus();
    if !offline.is_empty() {
        skip::accepted("per_cpu_ticks_add_up_to_the_aggregate", skip::OFFLINE_CPUS, format!("CPUs {offline}"));
        return;
    }
    let bytes = std::fs::read("/proc/stat").unwrap();
    let stat = KernelStat::parse(&bytes).unwrap();
    let total = stat.total.unwrap().as_array();
    let n = stat.cpu_count() as u64;
    assert!(n > 0);
    // The kernel sums the aggregate a moment before it prints the per-CPU
    // lines, so each column may differ by about a tick per CPU.
    let tolerance = 2 * n + 2;
    for (col, name) in CpuTimes::COLUMNS.iter().enumerate() {
        let Some(agg) = total[col] else { continue };
        let sum: u64 = stat.per_cpu().map(|c| c.times.as_array()[col].unwrap()).sum();
        assert!(agg.abs_diff(sum) <= tolerance, "{name}: aggregate {agg}, per-CPU sum {sum}, tolerance {tolerance}");
    }
}

fn work_between_reads(probe: &mut SysProbe) -> (SysReading, SysReading) {
    let first = probe.read();
    // Fork at least once and let some time pass, so ctxt and processes move.
    std::process::Command::new("true").status().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let second = probe.read();
    (first, second)
}

#[test]
fn counters_are_monotonic_across_two_reads() {
    let mut probe = SysProbe::open("/proc").unwrap();
    let (a, b) = work_between_reads(&mut probe);
    let (sa, sb) = (a.stat.unwrap(), b.stat.unwrap());
    let (ta, tb) = (sa.total.unwrap().as_array(), sb.total.unwrap().as_array());
    for (col, name) in CpuTimes::COLUMNS.iter().enumerate() {
        if *name == "iowait" {
            continue; // documented as able to go backwards
        }
        assert!(tb[col] >= ta[col], "aggregate {name}: {:?} -> {:?}", ta[col], tb[col]);
    }
    for later in &sb.per_cpu {
        if let Some(earlier) = sa.per_cpu.iter().find(|c| c.cpu == later.cpu) {
            let (e, l) = (earlier.times, later.times);
            assert!(l.user >= e.user && l.system >= e.system && l.idle >= e.idle, "cpu{}", later.cpu);
        }
    }
    let (ca, cb) = (sa.counters, sb.counters);
    assert!(cb.ctxt > ca.ctxt, "{:?} -> {:?}", ca.ctxt, cb.ctxt);
    assert!(cb.processes > ca.processes, "a process was forked in between");
    assert!(cb.intr_total >= ca.intr_total);
    assert!(sb.softirq.unwrap().total >= sa.softirq.unwrap().total);
    assert!(ca.btime.unwrap().abs_diff(cb.btime.unwrap()) <= 1);
}

#[test]
fn psi_totals_are_monotonic() {
    let mut any = false;
    for file in [ProcFile::PressureCpu, ProcFile::PressureMemory, ProcFile::PressureIo, ProcFile::PressureIrq] {
        let path = format!("/proc/{}", file.path());
        let first = match std::fs::read(&path) {
            Ok(first) => first,
            Err(e) if file == ProcFile::PressureIrq && e.kind() == std::io::ErrorKind::NotFound => {
                skip::accepted("psi_totals_are_monotonic", skip::PSI_IRQ, e);
                continue;
            }
            Err(e) => {
                skip::skip(
                    "psi_totals_are_monotonic",
                    format_args!("{path}: {e} (kernel without PSI, or booted with psi=0)"),
                );
                continue;
            }
        };
        std::thread::sleep(Duration::from_millis(50));
        let second = std::fs::read(&path).unwrap();
        let (a, b) = (Pressure::parse(&first).unwrap(), Pressure::parse(&second).unwrap());
        for (la, lb) in [(a.some, b.some), (a.full, b.full)] {
            if let (Some(la), Some(lb)) = (la, lb) {
                assert!(lb.total_usec.unwrap() >= la.total_usec.unwrap(), "{path}");
            }
        }
        any = true;
    }
    if !any {
        skip::skip("psi_totals_are_monotonic", "/proc/pressure is absent (kernel without PSI or booted with psi=0)");
    }
}

#[test]
fn probe_reads_live_proc_completely_or_says_why() {
    let mut probe = SysProbe::open("/proc").unwrap();
    let r = probe.read();
    assert!(r.stat.is_some() && r.meminfo.is_some() && r.loadavg.is_some(), "{:?}", r.missing);
    for m in &r.missing {
        // Only PSI files may be absent or unsupported on a sound kernel.
        assert!(m.file.starts_with("pressure/"), "{m:?}");
        assert!(matches!(m.kind, MissingKind::NotFound | MissingKind::NotSupported), "{m:?}");
        eprintln!("note: {} missing on this machine: {}", m.field, m.reason);
    }
    assert_eq!(r.user_hz.get(), getconf_hz());
}

/// USER_HZ from a second source: `getconf CLK_TCK` (libc's sysconf).
fn getconf_hz() -> u64 {
    let out = std::process::Command::new("getconf").arg("CLK_TCK").output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().parse().unwrap()
}

#[test]
fn cpu_time_across_cpus_matches_wall_time() {
    let mut probe = SysProbe::open("/proc").unwrap();
    // In a VM whose host does not report steal time (the CI tier's qemu TCG
    // guest), a vCPU the host descheduled loses ticks: seen once, 1.16 CPU-s
    // accounted in 0.79 s x 2 CPUs while the host ran two busy loops. That
    // window is transient; a wrong column or a wrong wall clock is not. So
    // up to three windows are measured and one must match.
    let mut windows = Vec::new();
    let (a, b, delta) = loop {
        let (a, b) = work_between_reads(&mut probe);
        let delta = stepmon_sysusage::model::sys_cpu_delta(&a, &b).unwrap();
        let wall = delta.stepmon.wall_seconds.unwrap();
        let cpus = b.stat.as_ref().unwrap().per_cpu.len() as f64;
        let s = delta.sys_cpu_stat;
        // guest and guest_nice are inside user and nice.
        let accounted = s.user + s.nice + s.system + s.idle + s.iowait + s.irq + s.softirq + s.steal;
        let expected = wall * cpus;
        eprintln!("accounted {accounted:.3} CPU-s vs {expected:.3} = {wall:.3} s wall x {cpus} CPUs");
        windows.push(format!("accounted {accounted} s over {cpus} CPUs in {wall} s of wall time"));
        if (accounted - expected).abs() <= 0.15 * expected + 0.03 * cpus {
            break (a, b, delta);
        }
        assert!(windows.len() < 3, "no window matched: {windows:#?}");
    };
    let share = delta.stepmon.steal_share.expect("6.18 prints a steal column");
    assert!((0.0..=1.0).contains(&share), "{share}");
    let sample = stepmon_sysusage::model::sys_sample(&b, Some(&a));
    assert_eq!(sample.stepmon.as_ref().unwrap().steal_share, Some(share));
    assert!(sample.cpu_stat.unwrap().idle > 0.0 && sample.memory_stat.unwrap().total.unwrap() > 0);
    serde_json::to_string(&sample).unwrap();
}
