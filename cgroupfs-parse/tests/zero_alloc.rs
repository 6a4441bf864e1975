//! Parsing allocates nothing: each parse runs inside
//! `allocation_counter::measure`, whose `#[global_allocator]` (linked only
//! into this test binary) counts every allocation made by the current thread
//! (`realloc` and `alloc_zeroed` go through `alloc` in that allocator, so
//! they are counted too). Counting per thread keeps other tests running in
//! parallel out of the numbers. A control test shows the counter sees a
//! single `Vec` push, so these tests can fail.
//!
//! (A hand-written counting allocator would need `unsafe impl GlobalAlloc`,
//! which the workspace's `unsafe_code = "forbid"` rejects even in tests.)

use std::hint::black_box;

use allocation_counter::measure;
use stepmon_cgroupfs_parse::format::single::{self, Limit};
use stepmon_cgroupfs_parse::mountinfo::{MountInfo, find_cgroup2_mount};
use stepmon_cgroupfs_parse::proc_cgroup::{ProcCgroup, unified_entry};
use stepmon_cgroupfs_parse::{
    CgroupEvents, CgroupStat, ControllerList, CpuMax, CpuStat, DeviceId, IoStat, MemoryEvents, MemoryStat, PidList,
};

const CPU_STAT: &[u8] = include_bytes!("data/pure-v2-handmade/cpu.stat");
const MEMORY_STAT: &[u8] = include_bytes!("data/pure-v2-handmade/memory.stat");
const IO_STAT: &[u8] = include_bytes!("data/pure-v2-handmade/io.stat");

#[test]
#[allow(clippy::vec_init_then_push)] // the push is the allocation under test
fn control_the_counter_sees_one_vec_push() {
    let info = measure(|| {
        let mut v: Vec<u64> = Vec::new();
        v.push(1);
        black_box(&v);
    });
    assert_eq!(info.count_total, 1, "{info:?}");
    assert_eq!(info.bytes_total, 8 * 4, "Vec's first growth allocates 4 elements: {info:?}");
    // And a reallocation is counted as well.
    let mut v: Vec<u8> = Vec::with_capacity(1);
    v.push(0);
    let info = measure(|| {
        v.extend_from_slice(&[1; 64]);
        black_box(&v);
    });
    assert!(info.count_total >= 1, "{info:?}");
}

#[test]
fn cpu_stat_parse_does_not_allocate() {
    let mut out = None;
    let info = measure(|| {
        let s = CpuStat::parse(black_box(CPU_STAT)).unwrap();
        let present = s.iter().filter(|(_, v)| v.is_some()).count();
        out = Some((s.usage_usec, s.get("burst_usec"), present));
    });
    assert_eq!(info.count_total, 0, "{info:?}");
    assert_eq!(out, Some((Some(48_213_377), Some(320_451), 10)), "the measured parse really ran");
}

#[test]
fn memory_stat_parse_does_not_allocate() {
    let mut out = None;
    let info = measure(|| {
        let m = MemoryStat::parse(black_box(MEMORY_STAT)).unwrap();
        out = Some((m.anon, m.numa_hint_faults, m.iter().filter(|(_, v)| v.is_some()).count()));
    });
    assert_eq!(info.count_total, 0, "{info:?}");
    assert_eq!(out, Some((Some(209_715_200), Some(6021), 72)));
}

#[test]
fn io_stat_parse_totals_and_devices_do_not_allocate() {
    let mut out = None;
    let info = measure(|| {
        let io = IoStat::parse(black_box(IO_STAT)).unwrap();
        let totals = io.totals();
        let mut devices = 0usize;
        let mut wbytes = 0u64;
        for d in io.devices() {
            devices += 1;
            wbytes += d.wbytes.unwrap_or(0);
        }
        let nvme = io.device(DeviceId { major: 259, minor: 0 }).and_then(|d| d.cost_usage_usec);
        out = Some((totals.rbytes, devices, io.device_count(), wbytes, nvme));
    });
    assert_eq!(info.count_total, 0, "{info:?}");
    assert_eq!(out, Some((Some(1_549_312), 5, 5, 323_452_928, Some(918))));
}

#[test]
fn other_parsers_and_error_paths_do_not_allocate() {
    let mut checks = 0usize;
    let info = measure(|| {
        let e = MemoryEvents::parse(black_box(include_bytes!("data/pure-v2-handmade/memory.events"))).unwrap();
        checks += usize::from(e.oom_kill == Some(2));
        let e = CgroupEvents::parse(black_box(b"populated 1\nfrozen 0\n")).unwrap();
        checks += usize::from(e.populated == Some(true));
        let s = CgroupStat::parse(black_box(include_bytes!("data/pure-v2-handmade/cgroup.stat"))).unwrap();
        checks += usize::from(s.subsystems().count() == 9 && s.subsystem("memory") == Some(4));
        let c = ControllerList::parse(black_box(b"cpu io memory pids\n")).unwrap();
        checks += usize::from(c.contains("pids") && c.iter().count() == 4);
        let p = PidList::parse(black_box(b"1\n2\n3\n")).unwrap();
        checks += usize::from(p.iter().sum::<u32>() == 6);
        checks += usize::from(Limit::parse(black_box(b"max\n")) == Ok(Limit::Max));
        checks += usize::from(single::parse_u64(black_box(b"42\n")) == Ok(42));
        checks += usize::from(CpuMax::parse(black_box(b"max 100000\n")).is_ok());
        let mi = include_bytes!("data/pure-v2-handmade/proc_self_mountinfo.txt");
        checks += usize::from(
            MountInfo::new(black_box(mi)).filter(|m| m.as_ref().is_ok_and(|m| m.is_cgroup2())).count() == 2,
        );
        checks += usize::from(find_cgroup2_mount(black_box(mi), b"/ci.slice").unwrap().map(|m| m.mount_id) == Some(32));
        let pc = include_bytes!("data/hybrid-6.18/proc_self_cgroup.txt");
        checks += usize::from(ProcCgroup::new(black_box(pc)).count() == 10);
        checks += usize::from(unified_entry(black_box(pc)).unwrap().is_some());
        // Errors are Copy values: failing is allocation-free too.
        checks += usize::from(CpuStat::parse(black_box(b"usage_usec 18446744073709551616\n")).is_err());
        checks += usize::from(IoStat::parse(black_box(b"8:0 rbytes=x\n")).is_err());
        checks += usize::from(MemoryStat::parse(black_box(b"\xff\x00")).is_err());
    });
    assert_eq!(info.count_total, 0, "{info:?}");
    assert_eq!(checks, 15, "every measured call ran and gave the expected result");
}
