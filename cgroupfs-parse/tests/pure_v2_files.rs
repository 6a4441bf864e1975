//! Every typed parser on hand-written pure cgroup v2 files
//! (`tests/data/pure-v2-handmade/`, written from the kernel's cgroup v2
//! and PSI documentation, <https://docs.kernel.org/admin-guide/cgroup-v2.html>
//! and <https://docs.kernel.org/accounting/psi.html>; see
//! `tests/data/README.md`). Values are distinct where
//! possible so that a key mapped to the wrong field cannot go unnoticed.

use stepmon_cgroupfs_parse::format::flat::FlatKeyed;
use stepmon_cgroupfs_parse::format::single::{self, Limit};
use stepmon_cgroupfs_parse::mountinfo::{MountInfo, find_cgroup2_mount};
use stepmon_cgroupfs_parse::number::Hundredths;
use stepmon_cgroupfs_parse::proc_cgroup::{ProcCgroup, unified_entry};
use stepmon_cgroupfs_parse::{
    CgroupEvents, CgroupStat, CgroupType, ControllerList, CpuMax, CpuStat, CpuStatLocal, DeviceId, IoStat,
    MemoryEvents, MemoryStat, PidList, PidsEvents,
};

macro_rules! file {
    ($name:literal) => {
        include_bytes!(concat!("data/pure-v2-handmade/", $name)).as_slice()
    };
}

/// Asserts `Some(value)` for each named field, naming the field on failure.
macro_rules! fields {
    ($s:expr, { $($field:ident = $value:expr),* $(,)? }) => {{
        let s = &$s;
        let mut checked = 0usize;
        $(
            assert_eq!(s.$field, Some($value), "field {}", stringify!($field));
            checked += 1;
        )*
        checked
    }};
}

#[test]
fn cpu_stat_all_ten_keys() {
    let input = file!("cpu.stat");
    let s = CpuStat::parse(input).unwrap();
    let n = fields!(s, {
        usage_usec = 48_213_377,
        user_usec = 39_120_056,
        system_usec = 9_093_321,
        nice_usec = 1_204_488,
        core_sched_force_idle_usec = 5120,
        nr_periods = 9125,
        nr_throttled = 412,
        throttled_usec = 10_884_532,
        nr_bursts = 17,
        burst_usec = 320_451,
    });
    assert_eq!(n, CpuStat::KEYS.len());
    // The file is in the 6.13+ print order, which is the order of KEYS.
    let file_keys: Vec<_> = FlatKeyed::new(input).map(|e| e.unwrap().key).collect();
    assert_eq!(file_keys, CpuStat::KEYS);
    assert_eq!(s.get("core_sched.force_idle_usec"), Some(5120));
}

#[test]
fn cpu_stat_local_and_cpu_max() {
    assert_eq!(CpuStatLocal::parse(file!("cpu.stat.local")).unwrap().throttled_usec, Some(11_250_007));
    assert_eq!(CpuStatLocal::KEYS, ["throttled_usec"]);
    assert_eq!(
        CpuMax::parse(file!("cpu.max")).unwrap(),
        CpuMax { quota_usec: Limit::Value(200_000), period_usec: 100_000 }
    );
}

#[test]
fn memory_stat_every_key() {
    let input = file!("memory.stat");
    let m = MemoryStat::parse(input).unwrap();
    let n = fields!(m, {
        anon = 209_715_200,
        file = 293_601_280,
        kernel = 25_206_784,
        kernel_stack = 1_474_560,
        pagetables = 4_194_304,
        sec_pagetables = 122_880,
        percpu = 336_960,
        sock = 45_056,
        vmalloc = 53_248,
        shmem = 1_048_576,
        zswap = 2_125_824,
        zswapped = 7_340_032,
        zswap_incomp = 262_144,
        file_mapped = 52_428_800,
        file_dirty = 12_288,
        file_writeback = 16_384,
        swapcached = 335_872,
        anon_thp = 104_857_600,
        file_thp = 6_291_456,
        shmem_thp = 2_097_152,
        inactive_anon = 157_286_400,
        active_anon = 53_477_376,
        inactive_file = 188_743_680,
        active_file = 103_809_024,
        unevictable = 73_728,
        slab_reclaimable = 14_680_064,
        slab_unreclaimable = 3_145_728,
        slab = 17_825_792,
        hugetlb = 8_388_608,
        workingset_refault_anon = 311,
        workingset_refault_file = 1290,
        workingset_activate_anon = 47,
        workingset_activate_file = 388,
        workingset_restore_anon = 13,
        workingset_restore_file = 201,
        workingset_nodereclaim = 9,
        pgdemote_kswapd = 512,
        pgdemote_direct = 64,
        pgdemote_khugepaged = 8,
        pgdemote_proactive = 16,
        pgpromote_success = 96,
        pgscan = 10_243,
        pgsteal = 9871,
        pswpin = 1024,
        pswpout = 2048,
        pgscan_kswapd = 8192,
        pgscan_direct = 1731,
        pgscan_khugepaged = 56,
        pgscan_proactive = 264,
        pgsteal_kswapd = 7990,
        pgsteal_direct = 1602,
        pgsteal_khugepaged = 31,
        pgsteal_proactive = 248,
        pgfault = 1_843_212,
        pgmajfault = 57,
        pgrefill = 20_480,
        pgactivate = 25_600,
        pgdeactivate = 1536,
        pglazyfree = 640,
        pglazyfreed = 320,
        swpin_zero = 21,
        swpout_zero = 34,
        zswpin = 1792,
        zswpout = 3584,
        zswpwb = 127,
        thp_fault_alloc = 50,
        thp_collapse_alloc = 2,
        thp_swpout = 3,
        thp_swpout_fallback = 1,
        numa_pages_migrated = 4410,
        numa_pte_updates = 88_213,
        numa_hint_faults = 6021,
    });
    assert_eq!(n, 72);
    assert_eq!(MemoryStat::KEYS.len(), 72);
    // Cross-check `get` and `iter` against the raw lines: every key of the
    // file is known, and `get` returns exactly what the line says.
    let mut lines = 0;
    for entry in FlatKeyed::new(input) {
        let entry = entry.unwrap();
        assert!(MemoryStat::KEYS.contains(&entry.key), "{} unknown", entry.key);
        assert_eq!(m.get(entry.key), Some(entry.value_u64().unwrap()), "{}", entry.key);
        lines += 1;
    }
    assert_eq!(lines, 72);
    assert!(m.iter().all(|(_, v)| v.is_some()));
    assert_eq!(m.slab, Some(m.slab_reclaimable.unwrap() + m.slab_unreclaimable.unwrap()));
}

#[test]
fn memory_events_and_local() {
    let e = MemoryEvents::parse(file!("memory.events")).unwrap();
    let n =
        fields!(e, { low = 4, high = 1432, max = 27, oom = 3, oom_kill = 2, oom_group_kill = 1, sock_throttled = 6 });
    assert_eq!(n, MemoryEvents::KEYS.len());
    let l = MemoryEvents::parse(file!("memory.events.local")).unwrap();
    fields!(l, { low = 0, high = 1187, max = 19, oom = 2, oom_kill = 1, oom_group_kill = 0, sock_throttled = 5 });
}

#[test]
fn memory_single_values_and_limits() {
    assert_eq!(single::parse_u64(file!("memory.current")), Ok(529_010_688));
    assert_eq!(single::parse_u64(file!("memory.peak")), Ok(912_261_120));
    assert_eq!(single::parse_u64(file!("memory.swap.current")), Ok(4_194_304));
    assert_eq!(single::parse_u64(file!("memory.swap.peak")), Ok(16_777_216));
    assert_eq!(Limit::parse(file!("memory.min")), Ok(Limit::Value(0)));
    assert_eq!(Limit::parse(file!("memory.low")), Ok(Limit::Value(268_435_456)));
    assert_eq!(Limit::parse(file!("memory.high")), Ok(Limit::Max));
    assert_eq!(Limit::parse(file!("memory.max")), Ok(Limit::Value(2_147_483_648)));
    assert_eq!(Limit::parse(file!("memory.swap.max")), Ok(Limit::Max));
    assert_eq!(Limit::parse(file!("memory.high")).unwrap().value(), None);
    // A number-only parser must refuse `max` rather than invent a value.
    let e = single::parse_u64(file!("memory.high")).unwrap_err();
    assert_eq!((e.kind, e.line, e.offset), (stepmon_cgroupfs_parse::ErrorKind::InvalidNumber, 1, 0));
}

#[test]
fn io_stat_every_token() {
    let io = IoStat::parse(file!("io.stat")).unwrap();
    assert_eq!(io.device_count(), 5);
    let t = io.totals();
    assert_eq!(
        (t.rbytes, t.wbytes, t.rios, t.wios, t.dbytes, t.dios),
        (
            Some(1_459_200 + 90_112),
            Some(314_773_504 + 8_679_424),
            Some(192 + 22),
            Some(353 + 1710),
            Some(1_048_576 + 4096),
            Some(4 + 1)
        )
    );
    let devices: Vec<_> = io.devices().collect();
    let ids: Vec<_> = devices.iter().map(|d| d.device.to_string()).collect();
    assert_eq!(ids, ["8:0", "8:16", "259:0", "259:1", "253:0"]);

    let sda = devices[0];
    assert_eq!(
        (sda.rbytes, sda.wbytes, sda.rios, sda.wios, sda.dbytes, sda.dios),
        (Some(1_459_200), Some(314_773_504), Some(192), Some(353), Some(0), Some(0))
    );
    assert_eq!((sda.cost_vrate, sda.cost_usage_usec), (Some(Hundredths(10_000)), Some(2841)));
    assert_eq!(
        (sda.iolat_depth, sda.iolat_avg_lat_usec, sda.iolat_win_msec, sda.iolat_missed, sda.iolat_total),
        (Some(Limit::Max), Some(4012), Some(100), None, None)
    );
    assert_eq!((sda.use_delay, sda.delay_nsec, sda.cost_wait_usec), (None, None, None));

    // `8:16 `: a bare device line, everything absent.
    let bare = devices[1];
    assert_eq!(bare.device, DeviceId { major: 8, minor: 16 });
    assert_eq!((bare.rbytes, bare.dbytes, bare.cost_usage_usec, bare.iolat_depth), (None, None, None, None));

    let nvme = io.device(DeviceId { major: 259, minor: 0 }).unwrap();
    assert_eq!(
        (nvme.rbytes, nvme.wbytes, nvme.rios, nvme.wios, nvme.dbytes, nvme.dios),
        (Some(90_112), Some(8_679_424), Some(22), Some(1710), Some(1_048_576), Some(4))
    );
    assert_eq!((nvme.use_delay, nvme.delay_nsec), (Some(2), Some(150_000)));
    assert_eq!(
        (nvme.cost_vrate, nvme.cost_usage_usec, nvme.cost_wait_usec, nvme.cost_indebt_usec, nvme.cost_indelay_usec),
        (Some(Hundredths(9735)), Some(918), Some(12), Some(3), Some(1))
    );
    assert_eq!(
        (nvme.iolat_depth, nvme.iolat_missed, nvme.iolat_total, nvme.iolat_avg_lat_usec, nvme.iolat_win_msec),
        (Some(Limit::Value(32)), Some(3), Some(1731), None, None)
    );

    // `259:1  cost.vrate=100.00 cost.usage=0`: double space, policy stats only.
    let idle = io.device(DeviceId { major: 259, minor: 1 }).unwrap();
    assert_eq!((idle.rbytes, idle.cost_vrate, idle.cost_usage_usec), (None, Some(Hundredths(10_000)), Some(0)));

    // `253:0 dbytes=4096 dios=1`: only the discard pair.
    let dm = io.device(DeviceId { major: 253, minor: 0 }).unwrap();
    assert_eq!((dm.rbytes, dm.wbytes, dm.dbytes, dm.dios), (None, None, Some(4096), Some(1)));

    assert!(io.device(DeviceId { major: 8, minor: 32 }).is_none());
}

#[test]
fn pids_files() {
    assert_eq!(single::parse_u64(file!("pids.current")), Ok(37));
    assert_eq!(single::parse_u64(file!("pids.peak")), Ok(112));
    assert_eq!(Limit::parse(file!("pids.max")), Ok(Limit::Value(512)));
    assert_eq!(PidsEvents::parse(file!("pids.events")).unwrap().max, Some(3));
    assert_eq!(PidsEvents::parse(file!("pids.events.local")).unwrap().max, Some(1));
    assert_eq!(PidsEvents::KEYS, ["max"]);
}

#[test]
fn cgroup_core_files() {
    let e = CgroupEvents::parse(file!("cgroup.events")).unwrap();
    assert_eq!((e.populated, e.frozen), (Some(true), Some(false)));

    let s = CgroupStat::parse(file!("cgroup.stat")).unwrap();
    assert_eq!((s.nr_descendants, s.nr_dying_descendants), (Some(3), Some(2)));
    let live: Vec<_> = s.subsystems().map(|c| (c.controller, c.count)).collect();
    assert_eq!(
        live,
        [
            ("cpuset", 1),
            ("cpu", 4),
            ("io", 4),
            ("memory", 4),
            ("perf_event", 4),
            ("hugetlb", 1),
            ("pids", 4),
            ("rdma", 1),
            ("misc", 1)
        ]
    );
    let dying: Vec<_> = s.dying_subsystems().filter(|c| c.count > 0).map(|c| (c.controller, c.count)).collect();
    assert_eq!(dying, [("memory", 2)]);
    assert_eq!(s.dying_subsystems().count(), 9);
    assert_eq!(s.subsystem("pids"), Some(4));
    assert_eq!(s.subsystem("net_cls"), None);

    let c = ControllerList::parse(file!("cgroup.controllers")).unwrap();
    assert_eq!(c.iter().collect::<Vec<_>>(), ["cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma", "misc"]);
    assert_eq!(c.len(), 8);
    let sc = ControllerList::parse(file!("cgroup.subtree_control")).unwrap();
    assert_eq!(sc.iter().collect::<Vec<_>>(), ["cpu", "io", "memory", "pids"]);
    assert!(sc.iter().all(|ctrl| c.contains(ctrl)), "subtree_control ⊆ controllers");

    let p = PidList::parse(file!("cgroup.procs")).unwrap();
    assert_eq!(p.iter().collect::<Vec<_>>(), [4127, 4098, 4133, 4098, 7]);
    assert_eq!(p.len(), 5, "repeats are kept");

    assert_eq!(CgroupType::parse(file!("cgroup.type")).unwrap(), CgroupType::Domain);
}

#[test]
fn proc_self_cgroup_pure_v2() {
    let input = file!("proc_self_cgroup.txt");
    assert_eq!(ProcCgroup::new(input).count(), 1);
    let e = unified_entry(input).unwrap().unwrap();
    assert!(e.is_unified() && !e.deleted);
    assert_eq!(e.path, b"/user.slice/user-1000.slice/user@1000.service/app.slice/ci-runner.service");
    assert_eq!(e.controller_names().count(), 0);
}

#[test]
fn systemd_mountinfo_with_optional_fields() {
    let input = file!("proc_self_mountinfo.txt");
    let mounts: Vec<_> = MountInfo::new(input).map(Result::unwrap).collect();
    assert_eq!(mounts.len(), 16);
    assert!(mounts.iter().all(|m| m.optional_fields.starts_with("shared:")));

    let cg = mounts.iter().find(|m| m.mount_id == 32).unwrap();
    assert!(cg.is_cgroup2());
    assert_eq!(cg.optional_fields, "shared:9");
    assert_eq!(cg.mount_options, "rw,nosuid,nodev,noexec,relatime");
    assert!(cg.has_super_option("nsdelegate") && cg.has_super_option("memory_recursiveprot"));
    assert!(!cg.has_super_option("memory_localevents"));
    assert_eq!(cg.line, 9);

    let bind = mounts.iter().find(|m| m.mount_id == 140).unwrap();
    assert_eq!(bind.optional_fields, "shared:9 master:1 propagate_from:1");
    assert!(bind.root.eq_unescaped(b"/ci.slice"));

    let spaced = mounts.iter().find(|m| m.mount_id == 62).unwrap();
    assert!(spaced.mount_point.eq_unescaped(b"/home/ci/My Builds"));
    assert_eq!(spaced.mount_point.raw(), b"/home/ci/My\\040Builds");
    let mut buf = [0u8; 64];
    assert_eq!(spaced.mount_point.unescape_into(&mut buf), Some(&b"/home/ci/My Builds"[..]));
    assert_eq!(spaced.mount_point.to_path_buf(), std::path::PathBuf::from("/home/ci/My Builds"));

    let fuse = mounts.iter().find(|m| m.mount_id == 101).unwrap();
    assert_eq!(fuse.fs_type, "fuse.gvfsd-fuse");
    assert!(!fuse.is_cgroup2());

    // /sys/fs/cgroup wins over the bind mount of a subtree, even for paths
    // the bind mount serves.
    let ci = b"/user.slice/user-1000.slice/user@1000.service/app.slice/ci-runner.service";
    assert_eq!(find_cgroup2_mount(input, ci).unwrap().unwrap().mount_id, 32);
    assert_eq!(find_cgroup2_mount(input, b"/ci.slice/step-1").unwrap().unwrap().mount_id, 32);
    // Without the /sys/fs/cgroup line, the bind mount serves only its subtree.
    let without_main: Vec<u8> =
        input.split_inclusive(|&b| b == b'\n').filter(|l| !l.starts_with(b"32 ")).flatten().copied().collect();
    assert_eq!(find_cgroup2_mount(&without_main, b"/ci.slice/step-1").unwrap().unwrap().mount_id, 140);
    assert_eq!(find_cgroup2_mount(&without_main, b"/ci.slice").unwrap().unwrap().mount_id, 140);
    assert!(find_cgroup2_mount(&without_main, b"/ci.slicer/x").unwrap().is_none());
    assert!(find_cgroup2_mount(&without_main, ci).unwrap().is_none());
}
