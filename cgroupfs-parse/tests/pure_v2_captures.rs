//! Every typed parser on real pure cgroup v2 files, captured by `ci/vm/capture`
//! in a VM booting Debian's stock kernel with cgroup2 at /sys/fs/cgroup and
//! cpu, memory, io and pids enabled (`tests/data/pure-v2-<uname -r>/`, one
//! folder per captured kernel; see `tests/data/README.md` and
//! `ci/vm/guest/capture-step.sh`).
//!
//! The step that was captured ran under `stepmon run --memory-max 48M --cpus
//! 0.5 --pids-max 64`, held 32 MiB of anonymous memory beside 8 children,
//! wrote 8 MiB with O_DIRECT and 8 MiB buffered + fsync, spun under its
//! cpu.max and had one task OOM-killed, then copied its own cgroup's files
//! (`step/`), its parent's (`parent/`) and the root's (`root/`) while still
//! running. The checks are what must hold for any such capture: exact where
//! the step set the value (limits, controllers), bounds where the kernel
//! measured it. The folders are found at run time, so a new capture is
//! tested without editing this file.

use std::path::{Path, PathBuf};

use stepmon_cgroupfs_parse::format::flat::FlatKeyed;
use stepmon_cgroupfs_parse::format::single::{self, Limit};
use stepmon_cgroupfs_parse::mountinfo::find_cgroup2_mount;
use stepmon_cgroupfs_parse::proc_cgroup::unified_entry;
use stepmon_cgroupfs_parse::{
    CgroupEvents, CgroupStat, CgroupType, ControllerList, CpuMax, CpuStat, IoStat, MemoryEvents, MemoryStat, PidList,
    PidsEvents,
};

const MIB: u64 = 1 << 20;

/// Every `tests/data/pure-v2-*/` folder that holds a capture (has `step/`).
fn captures() -> Vec<PathBuf> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("pure-v2-") && p.join("step").is_dir())
        .collect();
    found.sort();
    assert!(!found.is_empty(), "no pure-v2-<release>/step capture in {}", data.display());
    found
}

fn read(dir: &Path, file: &str) -> Vec<u8> {
    std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{}/{file}: {e}", dir.display()))
}

fn u64_of(dir: &Path, file: &str) -> u64 {
    single::parse_u64(&read(dir, file)).unwrap_or_else(|e| panic!("{}/{file}: {e:?}", dir.display()))
}

/// Every key the kernel printed in a flat-keyed file is one the typed parser
/// knows (a real key it silently dropped would be a gap in the model).
fn all_keys_known(bytes: &[u8], known: &[&str], what: &str) -> usize {
    let mut n = 0;
    for entry in FlatKeyed::new(bytes) {
        let entry = entry.unwrap_or_else(|e| panic!("{what}: {e:?}"));
        assert!(known.contains(&entry.key), "{what}: key {} unknown to the typed parser", entry.key);
        n += 1;
    }
    n
}

#[test]
fn cpu_stat_adds_up_and_shows_the_throttling() {
    for capture in captures() {
        let step = capture.join("step");
        let s = CpuStat::parse(&read(&step, "cpu.stat")).unwrap();
        let (usage, user, system) = (s.usage_usec.unwrap(), s.user_usec.unwrap(), s.system_usec.unwrap());
        // The kernel splits the exact runtime into user and system by tick
        // samples (cputime_adjust), so the parts add up to the whole.
        assert!((user + system).abs_diff(usage) * 100 <= usage, "{capture:?}: {user} + {system} vs {usage}");
        assert!(usage > 0);
        // It spun under cpu.max 50000/100000: throttled in some periods.
        let (periods, throttled) = (s.nr_periods.unwrap(), s.nr_throttled.unwrap());
        assert!(throttled > 0 && throttled <= periods, "{capture:?}: {throttled} of {periods}");
        assert!(s.throttled_usec.unwrap() > 0);
        let keys = all_keys_known(&read(&step, "cpu.stat"), CpuStat::KEYS, "step/cpu.stat");
        assert_eq!(keys, s.iter().filter(|(_, v)| v.is_some()).count());
        assert_eq!(
            CpuMax::parse(&read(&step, "cpu.max")).unwrap(),
            CpuMax { quota_usec: Limit::Value(50_000), period_usec: 100_000 }
        );

        // The root's cpu.stat (readable there since 5.8) covers the step's time.
        let root = CpuStat::parse(&read(&capture.join("root"), "cpu.stat")).unwrap();
        assert!(root.usage_usec.unwrap() >= usage, "{capture:?}: root usage below the step's");
        all_keys_known(&read(&capture.join("root"), "cpu.stat"), CpuStat::KEYS, "root/cpu.stat");
    }
}

#[test]
fn memory_files_are_consistent_and_show_the_oom_kill() {
    for capture in captures() {
        let step = capture.join("step");
        let m = MemoryStat::parse(&read(&step, "memory.stat")).unwrap();
        let (current, peak) = (u64_of(&step, "memory.current"), u64_of(&step, "memory.peak"));
        assert!(peak >= current, "{capture:?}: peak {peak} < current {current}");
        // 32 MiB held, then a 64 MiB allocation cut off at memory.max 48M.
        assert_eq!(Limit::parse(&read(&step, "memory.max")).unwrap(), Limit::Value(48 * MIB));
        assert!((32 * MIB..=48 * MIB).contains(&peak), "{capture:?}: peak {peak}");
        assert_eq!(Limit::parse(&read(&step, "memory.high")).unwrap(), Limit::Max);
        for file in ["memory.min", "memory.low"] {
            assert_eq!(Limit::parse(&read(&step, file)).unwrap(), Limit::Value(0), "{file}");
        }
        // anon and file are parts of memory.current; memory.stat may lag by
        // the per-CPU batches not yet flushed (64 pages per CPU).
        let (anon, file) = (m.anon.unwrap(), m.file.unwrap());
        assert!(anon <= peak && file <= peak && anon + file <= current + MIB, "{capture:?}: {m:?}");
        assert_eq!(m.slab, Some(m.slab_reclaimable.unwrap() + m.slab_unreclaimable.unwrap()));
        // pgscan is the sum of its per-reclaimer parts (those this kernel has).
        let parts = [m.pgscan_kswapd, m.pgscan_direct, m.pgscan_khugepaged, m.pgscan_proactive];
        assert_eq!(m.pgscan, Some(parts.iter().map(|p| p.unwrap_or(0)).sum::<u64>()));
        assert!(m.pgfault.unwrap() > 0);
        let keys = all_keys_known(&read(&step, "memory.stat"), MemoryStat::KEYS, "step/memory.stat");
        assert_eq!(keys, m.iter().filter(|(_, v)| v.is_some()).count());

        for name in ["memory.events", "memory.events.local"] {
            let e = MemoryEvents::parse(&read(&step, name)).unwrap();
            assert!(e.oom_kill.unwrap() >= 1 && e.oom.unwrap() >= e.oom_kill.unwrap(), "{capture:?} {name}: {e:?}");
            assert!(e.max.unwrap() >= 1, "{name}: the allocation hit memory.max");
            assert_eq!((e.low, e.oom_group_kill), (Some(0), Some(0)), "{name}");
            all_keys_known(&read(&step, name), MemoryEvents::KEYS, name);
        }
        // No swap in the VM: the swap files exist (swap accounting) and are 0.
        assert_eq!(u64_of(&step, "memory.swap.current"), 0);
        assert_eq!(Limit::parse(&read(&step, "memory.swap.max")).unwrap(), Limit::Max);

        let root = MemoryStat::parse(&read(&capture.join("root"), "memory.stat")).unwrap();
        assert!(root.anon.unwrap() > 0 && root.file.unwrap() > 0, "root memory.stat (6.0+)");
        all_keys_known(&read(&capture.join("root"), "memory.stat"), MemoryStat::KEYS, "root/memory.stat");
    }
}

#[test]
fn io_stat_has_the_disk_writes() {
    for capture in captures() {
        let step = capture.join("step");
        let bytes = read(&step, "io.stat");
        let io = IoStat::parse(&bytes).unwrap();
        // 8 MiB O_DIRECT + 8 MiB buffered + fsync to the one virtio disk.
        let disk = io.devices().find(|d| d.wbytes.unwrap_or(0) >= 16 * MIB);
        let disk = disk.unwrap_or_else(|| panic!("{capture:?}: no device with 16 MiB written"));
        assert!(disk.wios.unwrap() >= 16 && disk.rbytes.is_some() && disk.dbytes == Some(0), "{disk:?}");
        let t = io.totals();
        assert!(t.wbytes.unwrap() >= disk.wbytes.unwrap());

        // The root's io.stat (5.9+) counts at least what the step wrote.
        let root_bytes = read(&capture.join("root"), "io.stat");
        let root = IoStat::parse(&root_bytes).unwrap();
        let on_root = root.device(disk.device).unwrap();
        assert!(on_root.wbytes.unwrap() >= disk.wbytes.unwrap(), "{on_root:?} vs {disk:?}");
    }
}

#[test]
fn pids_files() {
    for capture in captures() {
        let step = capture.join("step");
        // The shell, the dd | sleep pipeline and 8 sleeps at once.
        let (current, peak) = (u64_of(&step, "pids.current"), u64_of(&step, "pids.peak"));
        assert!(peak >= 9 && peak >= current && current >= 1, "{capture:?}: current {current}, peak {peak}");
        assert_eq!(Limit::parse(&read(&step, "pids.max")).unwrap(), Limit::Value(64));
        assert_eq!(PidsEvents::parse(&read(&step, "pids.events")).unwrap().max, Some(0), "pids.max never hit");
        let procs_bytes = read(&step, "cgroup.procs");
        let procs = PidList::parse(&procs_bytes).unwrap();
        assert!(!procs.is_empty() && procs.len() as u64 <= current, "{capture:?}: {} procs", procs.len());
    }
}

#[test]
fn core_files_of_step_parent_and_root() {
    for capture in captures() {
        let (step, parent, root) = (capture.join("step"), capture.join("parent"), capture.join("root"));
        let e = CgroupEvents::parse(&read(&step, "cgroup.events")).unwrap();
        assert_eq!((e.populated, e.frozen), (Some(true), Some(false)), "captured while the step ran");
        assert_eq!(CgroupType::parse(&read(&step, "cgroup.type")).unwrap(), CgroupType::Domain);

        let four = ["cpu", "io", "memory", "pids"];
        let list = |dir: &Path, file: &str| -> Vec<String> {
            let bytes = read(dir, file);
            ControllerList::parse(&bytes).unwrap().iter().map(str::to_owned).collect()
        };
        assert_eq!(list(&step, "cgroup.controllers"), four, "stepmon enabled all four for the step");
        assert_eq!(list(&parent, "cgroup.subtree_control"), four);
        assert!(list(&step, "cgroup.subtree_control").is_empty());
        let root_controllers = list(&root, "cgroup.controllers");
        assert!(four.iter().all(|c| root_controllers.iter().any(|r| r == c)), "{root_controllers:?}");
        assert_eq!(list(&root, "cgroup.subtree_control"), four, "the guest's /init enabled these");

        let (step_stat, parent_stat, root_stat) =
            (read(&step, "cgroup.stat"), read(&parent, "cgroup.stat"), read(&root, "cgroup.stat"));
        let s = CgroupStat::parse(&step_stat).unwrap();
        assert_eq!((s.nr_descendants, s.nr_dying_descendants), (Some(0), Some(0)));
        let p = CgroupStat::parse(&parent_stat).unwrap();
        assert_eq!(p.nr_descendants, Some(1), "the run's parent holds only the step");
        let r = CgroupStat::parse(&root_stat).unwrap();
        assert!(r.nr_descendants.unwrap() >= 2);
        // No process in the parent: only leaves hold processes in v2.
        assert!(PidList::parse(&read(&parent, "cgroup.procs")).unwrap().is_empty());
    }
}

#[test]
fn proc_self_files_point_at_the_step() {
    for capture in captures() {
        let cgroup = read(&capture, "proc_self_cgroup.txt");
        let entry = unified_entry(&cgroup).unwrap().unwrap();
        let path = std::str::from_utf8(entry.path).unwrap();
        assert!(path.starts_with("/stepmon-run.") && path.ends_with("/step"), "{path}");
        let mountinfo = read(&capture, "proc_self_mountinfo.txt");
        let mount = find_cgroup2_mount(&mountinfo, entry.path).unwrap().unwrap();
        assert!(mount.is_cgroup2() && mount.mount_point.eq_unescaped(b"/sys/fs/cgroup"), "{mount:?}");
    }
}
