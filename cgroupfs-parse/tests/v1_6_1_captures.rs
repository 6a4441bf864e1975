//! The v1 parsers on the files the VM tier's cgroup v1-only boot captured
//! on Debian's 6.1 kernel (`tests/data/v1-6.1/`, made by
//! `STEPMON_VM_BOOTS=v1 ci/vm/capture`): the step's own cgroups in the
//! memory, pids and cpu,cpuacct hierarchies, set up by `stepmon run
//! --memory-max 48M --cpus 0.5 --pids-max 64`, copied while the step ran
//! `ci/vm/guest/capture-step.sh`. Each value is checked against what those
//! limits and that workload must produce. The parsers' edge cases are in
//! `v1_captures.rs`.

use stepmon_cgroupfs_parse::format::single::{self, Limit};
use stepmon_cgroupfs_parse::mountinfo::MountInfo;
use stepmon_cgroupfs_parse::proc_cgroup::ProcCgroup;
use stepmon_cgroupfs_parse::v1::{CpuStatV1, CpuacctStat, MemoryStatV1, OomControl, cfs_quota_us, limit_in_bytes};
use stepmon_cgroupfs_parse::{PidList, PidsEvents};

macro_rules! capture {
    ($name:literal) => {
        include_bytes!(concat!("data/v1-6.1/", $name)).as_slice()
    };
}

const MIB: u64 = 1 << 20;
/// `--memory-max 48M`.
const LIMIT: u64 = 48 * MIB;

// ------------------------------------------------------------------ memory

#[test]
fn memory_limit_and_peak() {
    assert_eq!(limit_in_bytes(capture!("memory/memory.limit_in_bytes")), Ok(Limit::Value(LIMIT)));
    let peak = single::parse_u64(capture!("memory/memory.max_usage_in_bytes")).unwrap();
    let usage = single::parse_u64(capture!("memory/memory.usage_in_bytes")).unwrap();
    // The 32 MiB dd held, then the 64 MiB dd the OOM killer took at the
    // limit: a v1 charge never passes memory.limit_in_bytes.
    assert!(peak > 32 * MIB && peak <= LIMIT, "{peak}");
    assert!(usage <= peak && usage < 32 * MIB, "both dd are gone: {usage}");
    // Every charge refused at the limit counts (the OOM dd's faults).
    assert!(single::parse_u64(capture!("memory/memory.failcnt")).unwrap() > 0);
    // memsw counts memory + swap: its watermark is at least memory's.
    let memsw_peak = single::parse_u64(capture!("memory/memory.memsw.max_usage_in_bytes")).unwrap();
    assert!(memsw_peak >= peak, "{memsw_peak} < {peak}");
    // stepmon limits memory only; memsw and the soft limit stay unlimited.
    assert_eq!(limit_in_bytes(capture!("memory/memory.memsw.limit_in_bytes")), Ok(Limit::Max));
    assert_eq!(limit_in_bytes(capture!("memory/memory.soft_limit_in_bytes")), Ok(Limit::Max));
}

#[test]
fn memory_oom_kill() {
    let o = OomControl::parse(capture!("memory/memory.oom_control")).unwrap();
    assert_eq!((o.oom_kill_disabled(), o.is_under_oom()), (Some(false), Some(false)));
    assert_eq!(o.oom_kill, Some(1), "the 64 MiB dd, once");
}

#[test]
fn memory_stat_of_the_step() {
    let m = MemoryStatV1::parse(capture!("memory/memory.stat")).unwrap();
    assert_eq!(m.hierarchical_memory_limit(), Some(Limit::Value(LIMIT)));
    assert_eq!(m.hierarchical_memsw_limit(), Some(Limit::Max));
    // pgpgin and pgpgout count folios charged and uncharged (a huge page
    // as one), not pages. No huge page is charged now, so their difference
    // is the pages charged now: the page cache plus the anonymous memory.
    assert_eq!(m.rss_huge, Some(0));
    let charged = m.pgpgin.unwrap() - m.pgpgout.unwrap();
    assert_eq!(charged * 4096, m.cache.unwrap() + m.rss.unwrap(), "{m:?}");
    assert!(m.pgfault.unwrap() > 0);
    // No swap in the guest.
    assert_eq!(m.swap, Some(0));
    // A leaf cgroup: the hierarchical values are its own.
    for (local, total) in [
        (m.cache, m.total_cache),
        (m.rss, m.total_rss),
        (m.mapped_file, m.total_mapped_file),
        (m.pgfault, m.total_pgfault),
    ] {
        assert_eq!(local, total, "{m:?}");
    }
}

// --------------------------------------------------------------------- cpu

#[test]
fn cpu_quota_and_throttling() {
    assert_eq!(cfs_quota_us(capture!("cpu,cpuacct/cpu.cfs_quota_us")), Ok(Limit::Value(50_000)));
    assert_eq!(single::parse_u64(capture!("cpu,cpuacct/cpu.cfs_period_us")), Ok(100_000));
    // The busy loop ran 1.5 s wall time at 50 ms per 100 ms period.
    let s = CpuStatV1::parse(capture!("cpu,cpuacct/cpu.stat")).unwrap();
    let (periods, throttled) = (s.nr_periods.unwrap(), s.nr_throttled.unwrap());
    assert!(periods >= 10 && throttled >= 5 && throttled <= periods, "{s:?}");
    assert!(s.throttled_time.unwrap() > 100_000_000, "ns: {s:?}");
    // schedstats off: no wait_sum; no burst configured.
    assert_eq!((s.wait_sum, s.nr_bursts, s.burst_time), (None, Some(0), Some(0)));
}

#[test]
fn cpuacct_of_the_step() {
    let usage_ns = single::parse_u64(capture!("cpu,cpuacct/cpuacct.usage")).unwrap();
    // At least the 0.75 s the loop may run under the quota, less the
    // quota's own granularity; the whole step lasts about 6 s.
    assert!((500_000_000..6_000_000_000).contains(&usage_ns), "{usage_ns}");
    let stat = CpuacctStat::parse(capture!("cpu,cpuacct/cpuacct.stat")).unwrap();
    let ticks = stat.user.unwrap() + stat.system.unwrap();
    // USER_HZ ticks, sampled: within 20 % of the scheduler's total.
    assert!((ticks * 10_000_000).abs_diff(usage_ns) * 5 < usage_ns, "{ticks} ticks vs {usage_ns} ns");
    // usage_user and usage_sys are split from the same ticks.
    let user = single::parse_u64(capture!("cpu,cpuacct/cpuacct.usage_user")).unwrap();
    let sys = single::parse_u64(capture!("cpu,cpuacct/cpuacct.usage_sys")).unwrap();
    assert!((user + sys).abs_diff(usage_ns) * 5 < usage_ns, "{user} + {sys} vs {usage_ns}");
}

// -------------------------------------------------------------------- pids

#[test]
fn pids_of_the_step() {
    assert_eq!(Limit::parse(capture!("pids/pids.max")), Ok(Limit::Value(64)));
    // Never near 64: no fork was refused.
    assert_eq!(PidsEvents::parse(capture!("pids/pids.events")).unwrap().max, Some(0));
    // Each file was read by a `cat` of its own, the step's shell waiting:
    // two processes.
    assert_eq!(single::parse_u64(capture!("pids/pids.current")), Ok(2));
    assert_eq!(PidList::parse(capture!("pids/cgroup.procs")).unwrap().len(), 2);
    // The shell, the dd | sleep pipeline and 8 sleeps at once; the limit
    // never reached.
    let peak = single::parse_u64(capture!("pids/pids.peak")).unwrap();
    assert!((11..64).contains(&peak), "{peak}");
}

// ------------------------------------------------------------ the process

#[test]
fn proc_self_cgroup_v1_only() {
    let entries: Vec<_> = ProcCgroup::new(capture!("proc_self_cgroup.txt")).map(Result::unwrap).collect();
    assert!(entries.iter().all(|e| !e.is_unified()), "no cgroup2 line on a v1-only host");
    // stepmon's step cgroup in exactly these hierarchies, the rest at the root.
    let moved: Vec<_> = entries.iter().filter(|e| e.path != b"/").map(|e| e.controllers).collect();
    let mut sorted = moved.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["cpu,cpuacct", "memory", "pids"], "{entries:?}");
    let mounts: Vec<_> = MountInfo::new(capture!("proc_self_mountinfo.txt")).map(Result::unwrap).collect();
    assert!(mounts.iter().all(|m| !m.is_cgroup2()));
    assert!(mounts.iter().any(|m| m.fs_type == "cgroup" && m.has_super_option("memory")));
}
