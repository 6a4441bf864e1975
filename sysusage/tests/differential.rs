//! Differential tests: procfs-core's `KernelStats` and `Meminfo` on the same
//! bytes must give the same numbers wherever procfs-core succeeds (it
//! fails, for instance, without `btime` or without `MemTotal`).

mod common;

use procfs_core::{ExplicitSystemInfo, FromRead, FromReadSI, KernelStats, Meminfo};
use proptest::prelude::*;
use stepmon_sysusage::parse::{CpuTimes, KernelStat, MemInfo, MemUnit};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

const INFO: ExplicitSystemInfo =
    ExplicitSystemInfo { boot_time_secs: 0, ticks_per_second: 100, page_size: 4096, is_little_endian: true };

fn theirs_cpu(t: &procfs_core::CpuTime) -> [Option<u64>; 10] {
    [
        Some(t.user),
        Some(t.nice),
        Some(t.system),
        Some(t.idle),
        t.iowait,
        t.irq,
        t.softirq,
        t.steal,
        t.guest,
        t.guest_nice,
    ]
}

/// Compares on `input`; returns false if procfs-core could not parse it.
fn same_stat(input: &[u8]) -> bool {
    let Ok(theirs) = KernelStats::from_read(input, &INFO) else { return false };
    let ours = KernelStat::parse(input).unwrap();
    assert_eq!(ours.total.as_ref().map(CpuTimes::as_array), Some(theirs_cpu(&theirs.total)));
    let ours_cpus: Vec<_> = ours.per_cpu().map(|c| c.times.as_array()).collect();
    let theirs_cpus: Vec<_> = theirs.cpu_time.iter().map(theirs_cpu).collect();
    assert_eq!(ours_cpus, theirs_cpus);
    let c = ours.counters;
    assert_eq!((c.ctxt, c.btime, c.processes), (Some(theirs.ctxt), Some(theirs.btime), Some(theirs.processes)));
    assert_eq!(c.procs_running, theirs.procs_running.map(u64::from));
    assert_eq!(c.procs_blocked, theirs.procs_blocked.map(u64::from));
    true
}

/// Every key both crates know, with procfs-core's value (bytes for kB keys).
fn theirs_mem(m: &Meminfo) -> Vec<(&'static str, Option<u64>)> {
    vec![
        ("MemTotal", Some(m.mem_total)),
        ("MemFree", Some(m.mem_free)),
        ("MemAvailable", m.mem_available),
        ("Buffers", Some(m.buffers)),
        ("Cached", Some(m.cached)),
        ("SwapCached", Some(m.swap_cached)),
        ("Active", Some(m.active)),
        ("Inactive", Some(m.inactive)),
        ("Active(anon)", m.active_anon),
        ("Inactive(anon)", m.inactive_anon),
        ("Active(file)", m.active_file),
        ("Inactive(file)", m.inactive_file),
        ("Unevictable", m.unevictable),
        ("Mlocked", m.mlocked),
        ("HighTotal", m.high_total),
        ("HighFree", m.high_free),
        ("LowTotal", m.low_total),
        ("LowFree", m.low_free),
        ("MmapCopy", m.mmap_copy),
        ("SwapTotal", Some(m.swap_total)),
        ("SwapFree", Some(m.swap_free)),
        ("Dirty", Some(m.dirty)),
        ("Writeback", Some(m.writeback)),
        ("AnonPages", m.anon_pages),
        ("Mapped", Some(m.mapped)),
        ("Shmem", m.shmem),
        ("Slab", Some(m.slab)),
        ("SReclaimable", m.s_reclaimable),
        ("SUnreclaim", m.s_unreclaim),
        ("KernelStack", m.kernel_stack),
        ("PageTables", m.page_tables),
        ("SecPageTables", m.secondary_page_tables),
        ("Quicklists", m.quicklists),
        ("NFS_Unstable", m.nfs_unstable),
        ("Bounce", m.bounce),
        ("WritebackTmp", m.writeback_tmp),
        ("CommitLimit", m.commit_limit),
        ("Committed_AS", Some(m.committed_as)),
        ("VmallocTotal", Some(m.vmalloc_total)),
        ("VmallocUsed", Some(m.vmalloc_used)),
        ("VmallocChunk", Some(m.vmalloc_chunk)),
        ("HardwareCorrupted", m.hardware_corrupted),
        ("AnonHugePages", m.anon_hugepages),
        ("ShmemHugePages", m.shmem_hugepages),
        ("ShmemPmdMapped", m.shmem_pmd_mapped),
        ("CmaTotal", m.cma_total),
        ("CmaFree", m.cma_free),
        ("HugePages_Total", m.hugepages_total),
        ("HugePages_Free", m.hugepages_free),
        ("HugePages_Rsvd", m.hugepages_rsvd),
        ("HugePages_Surp", m.hugepages_surp),
        ("Hugepagesize", m.hugepagesize),
        ("DirectMap4k", m.direct_map_4k),
        ("DirectMap4M", m.direct_map_4M),
        ("DirectMap2M", m.direct_map_2M),
        ("DirectMap1G", m.direct_map_1G),
        ("KReclaimable", m.k_reclaimable),
        ("Percpu", m.per_cpu),
        ("Hugetlb", m.hugetlb),
        ("FilePmdMapped", m.file_pmd_mapped),
        ("FileHugePages", m.file_huge_pages),
        ("Zswap", m.z_swap),
        ("Zswapped", m.z_swapped),
    ]
}

/// Compares on `input`; returns false if procfs-core could not parse it.
fn same_meminfo(input: &[u8]) -> bool {
    let Ok(theirs) = Meminfo::from_read(input) else { return false };
    let ours = MemInfo::parse(input).unwrap();
    for (key, value) in theirs_mem(&theirs) {
        let ours = match MemInfo::unit_of(key).unwrap_or_else(|| panic!("{key} unknown to us")) {
            MemUnit::Kb => ours.get_bytes(key),
            MemUnit::Count => ours.get(key),
        };
        assert_eq!(ours, value, "{key}");
    }
    true
}

#[test]
fn captures_and_edge_cases_agree() {
    for name in ["hybrid-6.18/stat", "edge/stat-64cpu-gaps", "edge/stat-2.4-4col"] {
        let bytes = std::fs::read(format!("{DATA}/{name}")).unwrap();
        assert!(same_stat(&bytes), "procfs-core failed on {name}");
    }
    for name in ["hybrid-6.18/meminfo", "edge/meminfo-hwcorrupted-no-available"] {
        let bytes = std::fs::read(format!("{DATA}/{name}")).unwrap();
        assert!(same_meminfo(&bytes), "procfs-core failed on {name}");
    }
}

#[test]
fn live_proc_agrees() {
    // Reading the files once and giving both parsers the same bytes.
    let stat = std::fs::read("/proc/stat").unwrap();
    assert!(same_stat(&stat));
    let meminfo = std::fs::read("/proc/meminfo").unwrap();
    assert!(same_meminfo(&meminfo));
}

proptest! {
    #[test]
    fn generated_stat_agrees(s in common::stat_text()) {
        let compared = same_stat(s.text.as_bytes());
        // procfs-core needs ctxt, btime and processes, and reads procs_running
        // and procs_blocked as u32 (we use u64); otherwise it must fail.
        let fits = |v: Option<u64>| v.is_none_or(|v| u32::try_from(v).is_ok());
        let expected = s.ctxt.is_some() && s.btime.is_some() && s.processes.is_some()
            && fits(s.procs_running) && fits(s.procs_blocked);
        prop_assert_eq!(compared, expected);
    }

    #[test]
    fn generated_meminfo_agrees(mut m in common::meminfo_text(false)) {
        // Add the keys procfs-core requires, so that it parses every case.
        for key in common::PROCFS_REQUIRED {
            if !m.entries.iter().any(|(k, _, _)| k == key) {
                m.text.push_str(&format!("{key}: 7 kB\n"));
            }
        }
        prop_assert!(same_meminfo(m.text.as_bytes()));
    }
}
