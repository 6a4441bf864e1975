//! Every typed parser on the real files captured on the hybrid 6.18 host
//! (`tests/data/hybrid-6.18/`, copied from the shared fixtures; see
//! `tests/data/README.md`). Expected values are read off the captures by hand.

use stepmon_cgroupfs_parse::format::flat::FlatKeyed;
use stepmon_cgroupfs_parse::format::list::NewlineList;
use stepmon_cgroupfs_parse::format::single::{self, Limit};
use stepmon_cgroupfs_parse::mountinfo::{MountInfo, find_cgroup2_mount};
use stepmon_cgroupfs_parse::proc_cgroup::{ProcCgroup, unified_entry};
use stepmon_cgroupfs_parse::{
    CgroupEvents, CgroupStat, CgroupType, ControllerList, CpuStat, CpuStatLocal, DeviceId, MemoryEvents, MemoryStat,
    PidList, PidsEvents,
};

macro_rules! capture {
    ($name:literal) => {
        include_bytes!(concat!("data/hybrid-6.18/", $name)).as_slice()
    };
}

#[test]
fn root_cpu_stat_has_only_the_core_keys() {
    let s = CpuStat::parse(capture!("cgroup2_root_cpu.stat.txt")).unwrap();
    assert_eq!(s.usage_usec, Some(21_958_700));
    assert_eq!(s.user_usec, Some(9_918_915));
    assert_eq!(s.system_usec, Some(12_039_785));
    assert_eq!(s.nice_usec, Some(0));
    // No CONFIG_SCHED_CORE, no cpu controller on v2: these must be absent, not 0.
    for key in ["core_sched.force_idle_usec", "nr_periods", "nr_throttled", "throttled_usec", "nr_bursts", "burst_usec"]
    {
        assert_eq!(s.get(key), None, "{key}");
    }
    assert_eq!(s.iter().filter(|(_, v)| v.is_some()).count(), 4);
}

#[test]
fn child_cpu_stat_is_all_zero_but_present() {
    let s = CpuStat::parse(capture!("cgroup2_child_cpu.stat.txt")).unwrap();
    let present: Vec<_> = s.iter().filter_map(|(k, v)| v.map(|v| (k, v))).collect();
    assert_eq!(present, [("usage_usec", 0), ("user_usec", 0), ("system_usec", 0), ("nice_usec", 0)]);
}

#[test]
fn cpu_stat_local_is_empty_without_the_cpu_controller() {
    for input in [capture!("cgroup2_root_cpu.stat.local.txt"), capture!("cgroup2_child_cpu.stat.local.txt")] {
        assert!(input.is_empty(), "the capture is a 0-byte file");
        assert_eq!(CpuStatLocal::parse(input).unwrap().throttled_usec, None);
    }
}

#[test]
fn cgroup_stat_root_and_child() {
    let root = CgroupStat::parse(capture!("cgroup2_root_cgroup.stat.txt")).unwrap();
    assert_eq!((root.nr_descendants, root.nr_dying_descendants), (Some(0), Some(0)));
    let live: Vec<_> = root.subsystems().map(|c| (c.controller, c.count)).collect();
    assert_eq!(live, [("perf_event", 1), ("hugetlb", 1)]);
    let dying: Vec<_> = root.dying_subsystems().map(|c| (c.controller, c.count)).collect();
    assert_eq!(dying, [("perf_event", 0), ("hugetlb", 0)]);
    assert_eq!(root.subsystem("hugetlb"), Some(1));
    assert_eq!(root.subsystem("memory"), None, "memory is bound to v1 on this host");

    let child = CgroupStat::parse(capture!("cgroup2_child_cgroup.stat.txt")).unwrap();
    assert_eq!((child.nr_descendants, child.nr_dying_descendants), (Some(0), Some(0)));
    assert_eq!(child.subsystem("perf_event"), Some(1));
    assert_eq!(child.subsystem("hugetlb"), Some(0));
    assert_eq!(child.dying_subsystems().count(), 2);
}

#[test]
fn cgroup_stat_local_has_no_typed_parser_but_is_flat_keyed() {
    // cgroup.stat.local (6.18, `frozen_usec`) is read through the generic
    // flat-keyed building block.
    let entries: Vec<_> = FlatKeyed::new(capture!("cgroup2_child_cgroup.stat.local.txt"))
        .map(|e| {
            let e = e.unwrap();
            (e.key, e.value_u64().unwrap())
        })
        .collect();
    assert_eq!(entries, [("frozen_usec", 0)]);
}

#[test]
fn cgroup_events_child() {
    let e = CgroupEvents::parse(capture!("cgroup2_child_cgroup.events.txt")).unwrap();
    assert_eq!((e.populated, e.frozen), (Some(false), Some(false)));
}

#[test]
fn controller_lists() {
    let root = ControllerList::parse(capture!("cgroup2_root_cgroup.controllers.txt")).unwrap();
    assert_eq!(root.iter().collect::<Vec<_>>(), ["hugetlb"]);
    assert_eq!(root.len(), 1);
    assert!(root.contains("hugetlb") && !root.contains("memory"));
    for empty in [
        capture!("cgroup2_child_cgroup.controllers.txt"),
        capture!("cgroup2_root_cgroup.subtree_control.txt"),
        capture!("cgroup2_child_cgroup.subtree_control.txt"),
    ] {
        assert!(empty.is_empty());
        let list = ControllerList::parse(empty).unwrap();
        assert!(list.is_empty());
        assert_eq!(list.iter().count(), 0);
    }
}

#[test]
fn empty_procs_and_threads() {
    for input in [capture!("cgroup2_child_cgroup.procs.txt"), capture!("cgroup2_child_cgroup.threads.txt")] {
        let pids = PidList::parse(input).unwrap();
        assert!(pids.is_empty());
        assert_eq!(pids.iter().count(), 0);
    }
}

#[test]
fn cgroup_type_freeze_pressure_and_limits() {
    assert_eq!(CgroupType::parse(capture!("cgroup2_child_cgroup.type.txt")).unwrap(), CgroupType::Domain);
    assert_eq!(single::parse_flag(capture!("cgroup2_child_cgroup.freeze.txt")), Ok(false));
    assert_eq!(single::parse_flag(capture!("cgroup2_child_cgroup.pressure.txt")), Ok(true));
    assert_eq!(single::parse_flag(capture!("cgroup2_root_cgroup.pressure.txt")), Ok(true));
    for input in [
        capture!("cgroup2_root_cgroup.max.depth.txt"),
        capture!("cgroup2_root_cgroup.max.descendants.txt"),
        capture!("cgroup2_child_cgroup.max.depth.txt"),
        capture!("cgroup2_child_cgroup.max.descendants.txt"),
    ] {
        assert_eq!(Limit::parse(input), Ok(Limit::Max));
        // `max` is not a number.
        assert!(single::parse_u64(input).is_err());
    }
}

#[test]
fn flat_parsers_ignore_other_files_keys() {
    // Feeding a flat file of another kind yields "all absent", never zeros.
    let stat = capture!("cgroup2_root_cgroup.stat.txt");
    assert_eq!(CpuStat::parse(stat).unwrap(), CpuStat::default());
    assert_eq!(MemoryStat::parse(stat).unwrap(), MemoryStat::default());
    assert_eq!(MemoryEvents::parse(stat).unwrap(), MemoryEvents::default());
    assert_eq!(PidsEvents::parse(stat).unwrap(), PidsEvents::default());
    assert_eq!(CgroupEvents::parse(capture!("cgroup2_root_cpu.stat.txt")).unwrap(), CgroupEvents::default());
}

#[test]
fn proc_self_cgroup_hybrid() {
    let input = capture!("proc_self_cgroup.txt");
    let entries: Vec<_> = ProcCgroup::new(input).map(Result::unwrap).collect();
    assert_eq!(entries.len(), 10);
    let ids: Vec<_> = entries.iter().map(|e| e.hierarchy_id).collect();
    assert_eq!(ids, [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    assert_eq!(entries[0].controllers, "name=systemd");
    assert_eq!(entries[5].controller_names().collect::<Vec<_>>(), ["memory"]);
    assert_eq!(entries[5].path, b"/redacted/0123456789abcdef0123456789abcdef");
    assert!(entries.iter().all(|e| !e.deleted));
    assert_eq!(entries.iter().filter(|e| e.is_unified()).count(), 1);
    let v2 = unified_entry(input).unwrap().unwrap();
    assert_eq!((v2.hierarchy_id, v2.controllers, v2.path), (0, "", &b"/"[..]));
}

#[test]
fn mountinfo_hybrid() {
    let input = capture!("proc_self_mountinfo.txt");
    let mounts: Vec<_> = MountInfo::new(input).map(Result::unwrap).collect();
    assert_eq!(mounts.len(), 20);
    assert!(mounts.iter().all(|m| m.optional_fields.is_empty()), "private mounts: no optional fields");
    let root = mounts.iter().find(|m| m.mount_point.eq_unescaped(b"/")).unwrap();
    assert_eq!((root.mount_id, root.parent_id, root.device), (27, 1, DeviceId { major: 254, minor: 0 }));
    assert_eq!((root.fs_type, root.mount_options), ("ext4", "rw,relatime"));
    assert!(root.source.eq_unescaped(b"/dev/vda"));
    assert_eq!(root.super_options, "rw,discard,resv_strict,resuid=65534,resgid=65534");

    let v1: Vec<_> = mounts.iter().filter(|m| m.fs_type == "cgroup").collect();
    assert_eq!(v1.len(), 9);
    assert!(v1.iter().any(|m| m.has_super_option("name=systemd")));
    let cgroup2: Vec<_> = mounts.iter().filter(|m| m.is_cgroup2()).collect();
    assert_eq!(cgroup2.len(), 1);
    assert_eq!(cgroup2[0].line, 20);

    let found = find_cgroup2_mount(input, b"/").unwrap().unwrap();
    assert_eq!(found.mount_id, 41);
    assert!(found.mount_point.eq_unescaped(b"/sys/fs/cgroup/unified"));
    assert_eq!(found.device, DeviceId { major: 0, minor: 38 });
    assert!(found.root.eq_unescaped(b"/"));
    assert_eq!(found.super_options, "rw");
    // Any path below the root is served by that mount.
    assert_eq!(find_cgroup2_mount(input, b"/system.slice/x.service").unwrap().unwrap().mount_id, 41);
}

#[test]
fn sys_kernel_cgroup_lists_are_newline_lists() {
    let items =
        |input: &'static [u8]| -> Vec<&'static [u8]> { NewlineList::new(input).map(|l| l.unwrap().bytes).collect() };
    assert_eq!(
        items(capture!("sys_kernel_cgroup_features.txt")),
        [
            &b"nsdelegate"[..],
            b"favordynmods",
            b"memory_localevents",
            b"memory_recursiveprot",
            b"memory_hugetlb_accounting",
            b"pids_localevents"
        ]
    );
    assert_eq!(
        items(capture!("sys_kernel_cgroup_delegate.txt")),
        [&b"cgroup.procs"[..], b"cgroup.threads", b"cgroup.subtree_control", b"memory.oom.group", b"memory.reclaim"]
    );
}
