//! The step probe's exact JSON in the layouts a cgroup can have besides a
//! complete pure cgroup v2 one (that one is `cgroup_probe_fake.rs`): a child
//! on a hybrid host (memory/io/pids/cpu bound to cgroup v1), a child whose
//! parent enables nothing, the root cgroup, an old kernel without PSI, and
//! files that do not parse, cannot be opened or cannot be read. Every
//! layout is read several times through the same probe, so the `missing`
//! list (worked out once at open for files absent then) must come out the
//! same on every sample, and a file that turns malformed and back must
//! report and then clear its reason.
//!
//! `/proc/cgroups` is a fake per layout (`CgroupProbe::open_with_proc`), so
//! the JSON does not depend on the host. The expected JSON is in
//! `tests/data/probe-layouts/<layout>.json` (one array of samples per
//! layout); it was produced by the probe before the per-sample work was
//! moved to open time, and the probe must keep producing it byte for byte.
//! `STEPMON_BLESS=1` rewrites the files instead of comparing (review the diff).
//!
//! The same layouts also pin the allocations of a sample: the owned output
//! only (the `missing` list, one reason string per entry, the io device
//! list), nothing formatted or parsed into the heap on the way.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use stepmon_model::missing::MissingKind;
use stepmon_model::sample::StepSample;
use stepmon_sampler::cgroup::CgroupProbe;

fn step_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pure-v2-step")
}

fn expected_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/probe-layouts")
}

/// This host's `/proc/cgroups` (a hybrid systemd layout: v2 at
/// `/sys/fs/cgroup/unified`, every controller on v1).
const PROC_CGROUPS_HYBRID: &str = "#subsys_name\thierarchy\tnum_cgroups\tenabled
cpuset\t3\t1\t1
cpu\t1\t1\t1
cpuacct\t2\t1\t1
blkio\t7\t1\t1
memory\t4\t61\t1
devices\t5\t1\t1
freezer\t6\t1\t1
net_cls\t0\t1\t1
perf_event\t0\t1\t1
net_prio\t0\t1\t1
hugetlb\t0\t1\t1
pids\t8\t1\t1
";

/// A pure cgroup v2 host: every controller on hierarchy 0.
const PROC_CGROUPS_PURE_V2: &str = "#subsys_name\thierarchy\tnum_cgroups\tenabled
cpuset\t0\t120\t1
cpu\t0\t120\t1
cpuacct\t0\t120\t1
blkio\t0\t120\t1
memory\t0\t120\t1
pids\t0\t120\t1
";

/// A scratch directory holding one layout's cgroup directory and its fake
/// procfs; removed on drop (also when the test fails).
struct Layout {
    root: tempfile::TempDir,
}

impl Layout {
    fn new(name: &str, proc_cgroups: Option<&str>) -> Layout {
        let root = tempfile::Builder::new().prefix(&format!("stepmon-layout-{name}-")).tempdir().unwrap();
        fs::create_dir(root.path().join("cgroup")).unwrap();
        fs::create_dir(root.path().join("proc")).unwrap();
        if let Some(text) = proc_cgroups {
            fs::write(root.path().join("proc/cgroups"), text).unwrap();
        }
        Layout { root }
    }

    fn dir(&self) -> PathBuf {
        self.root.path().join("cgroup")
    }

    fn write(&self, file: &str, content: &[u8]) {
        fs::write(self.dir().join(file), content).unwrap();
    }

    /// Copies `files` from the pure-v2 step fixture.
    fn copy(&self, files: &[&str]) {
        for file in files {
            fs::copy(step_data().join(file), self.dir().join(file)).unwrap();
        }
    }

    fn copy_all(&self) {
        for entry in fs::read_dir(step_data()).unwrap() {
            let entry = entry.unwrap();
            fs::copy(entry.path(), self.dir().join(entry.file_name())).unwrap();
        }
    }

    fn remove(&self, file: &str) {
        fs::remove_file(self.dir().join(file)).unwrap();
    }

    fn probe(&self) -> CgroupProbe {
        CgroupProbe::open_with_proc(self.dir(), &self.root.path().join("proc")).unwrap()
    }
}

fn at(i: usize) -> Timestamp {
    Timestamp::from_second(1_796_005_186 + i64::try_from(i).unwrap()).unwrap()
}

/// Compares the samples' JSON with `tests/data/probe-layouts/<name>.json`.
fn check(name: &str, samples: &[StepSample]) {
    let json = serde_json::to_string_pretty(samples).unwrap() + "\n";
    let path = expected_dir().join(format!("{name}.json"));
    if std::env::var_os("STEPMON_BLESS").is_some() {
        fs::create_dir_all(expected_dir()).unwrap();
        fs::write(&path, &json).unwrap();
        eprintln!("BLESSED {}: wrote the JSON instead of comparing", path.display());
        return;
    }
    let expected = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(json, expected, "{name}: actual JSON:\n{json}");
}

/// The files a child cgroup has on this hybrid host with an empty
/// `cgroup.controllers`: core `cpu.stat` keys, the PSI files, `cgroup.events`.
fn hybrid_child(layout: &Layout) {
    layout.write("cgroup.controllers", b"");
    layout.write("cgroup.events", b"populated 1\nfrozen 0\n");
    layout.write("cpu.stat", b"usage_usec 2500\nuser_usec 2000\nsystem_usec 500\nnice_usec 0\n");
    layout.copy(&["cpu.pressure", "memory.pressure", "io.pressure"]);
}

fn read_n(probe: &mut CgroupProbe, n: usize) -> Vec<StepSample> {
    (0..n).map(|i| probe.read(at(i))).collect()
}

#[test]
fn hybrid_child_controllers_on_v1() {
    let layout = Layout::new("hybrid", Some(PROC_CGROUPS_HYBRID));
    hybrid_child(&layout);
    check("hybrid-child-v1", &read_n(&mut layout.probe(), 3));
}

#[test]
fn child_of_a_parent_that_enables_nothing() {
    let layout = Layout::new("not-enabled", Some(PROC_CGROUPS_PURE_V2));
    hybrid_child(&layout);
    // A kernel with IRQ time accounting (irq.pressure has no `full` line).
    layout.write("irq.pressure", b"some avg10=0.00 avg60=0.00 avg300=0.00 total=1234\n");
    check("child-not-enabled", &read_n(&mut layout.probe(), 2));
}

#[test]
fn no_proc_cgroups_means_not_enabled() {
    let layout = Layout::new("no-proc", None);
    hybrid_child(&layout);
    check("child-no-proc-cgroups", &read_n(&mut layout.probe(), 2));
}

/// The files of a root cgroup, copied: no cgroup.events, cpu.max,
/// memory.{current,events,max,high,peak,swap.*}, pids.*; cpu.stat without
/// bandwidth keys. A copy is not the root (that is the directory on cgroup2
/// with the hierarchy's first inode; `cgroup_probe_partial.rs` reads the
/// real one): it is a directory without the files every non-root cgroup
/// with these controllers has, so not as the kernel made it, and says so
/// instead of "does not exist on the root cgroup".
#[test]
fn a_copy_of_the_root_cgroup_is_not_the_root() {
    let layout = Layout::new("root", Some(PROC_CGROUPS_PURE_V2));
    layout.write("cgroup.controllers", b"cpuset cpu io memory hugetlb pids rdma misc\n");
    layout.write("cpu.stat", b"usage_usec 900000\nuser_usec 600000\nsystem_usec 300000\nnice_usec 10\n");
    layout.copy(&["cpu.pressure", "memory.pressure", "io.pressure", "memory.stat", "io.stat"]);
    let mut probe = layout.probe();
    assert!(!probe.is_root());
    let samples = read_n(&mut probe, 2);
    for missing in samples.iter().flat_map(|s| &s.stepmon.missing) {
        assert_ne!(missing.kind, MissingKind::NotOnRootCgroup, "{missing:?}");
    }
    check("root", &samples);
}

#[test]
fn cpu_controller_without_bandwidth_keys() {
    let layout = Layout::new("no-cfs-bandwidth", Some(PROC_CGROUPS_PURE_V2));
    layout.copy_all();
    layout.write("cpu.stat", b"usage_usec 10\nuser_usec 5\nsystem_usec 5\n");
    check("no-cfs-bandwidth", &read_n(&mut layout.probe(), 2));
}

#[test]
fn old_kernel_without_psi_and_newer_files() {
    let layout = Layout::new("old-kernel", Some(PROC_CGROUPS_PURE_V2));
    layout.copy_all();
    for file in
        ["memory.peak", "memory.swap.peak", "memory.swap.current", "pids.peak", "cpu.pressure", "memory.pressure"]
    {
        layout.remove(file);
    }
    layout.remove("io.pressure");
    check("old-kernel", &read_n(&mut layout.probe(), 2));
}

/// The model's rule: a controller object is present when any of its files
/// is. Here the memory controller's only file is `memory.swap.current`.
#[test]
fn memory_swap_current_alone_makes_a_memory_stat() {
    let layout = Layout::new("swap-only", Some(PROC_CGROUPS_PURE_V2));
    layout.write("cgroup.controllers", b"memory\n");
    layout.write("cgroup.events", b"populated 1\nfrozen 0\n");
    layout.write("cpu.stat", b"usage_usec 10\nuser_usec 5\nsystem_usec 5\n");
    layout.write("memory.swap.current", b"4096\n");
    let samples = read_n(&mut layout.probe(), 2);
    for sample in &samples {
        let memory = sample.memory_stat.as_ref().expect("memoryStat, from memory.swap.current");
        assert_eq!(memory.swap_bytes, Some(4096));
        // memory.stat comes with the controller that memory.swap.current
        // proves is there: its absence is no old kernel.
        let stat = sample.stepmon.missing.iter().find(|m| m.file == "memory.stat").unwrap();
        assert_eq!(stat.kind, MissingKind::NotFound, "{stat:?}");
        assert!(stat.reason.contains("although memory.swap.current does"), "{stat:?}");
    }
    check("swap-only", &samples);
}

#[test]
fn files_turning_malformed_and_back() {
    let layout = Layout::new("malformed", Some(PROC_CGROUPS_PURE_V2));
    layout.copy_all();
    let mut probe = layout.probe();
    let mut samples = vec![probe.read(at(0))];
    let originals: Vec<(&str, Vec<u8>)> =
        ["cpu.stat", "cpu.max", "memory.max", "io.stat", "cpu.pressure", "pids.current", "cgroup.events"]
            .into_iter()
            .map(|file| (file, fs::read(layout.dir().join(file)).unwrap()))
            .collect();
    // Written in place (same inode), so the held fds see the new content.
    layout.write("cpu.stat", b"usage_usec x\n");
    layout.write("cpu.max", b"50000\n");
    layout.write("memory.max", b"-1\n");
    layout.write("io.stat", b"8:0 rbytes=oops\n");
    layout.write("cpu.pressure", b"some avg10=1.00\n");
    layout.write("pids.current", b"");
    layout.write("cgroup.events", b"populated 2\n");
    samples.push(probe.read(at(1)));
    samples.push(probe.read(at(2)));
    for (file, bytes) in &originals {
        layout.write(file, bytes);
    }
    samples.push(probe.read(at(3)));
    check("malformed-and-back", &samples);
}

#[test]
fn files_that_cannot_be_opened_or_read() {
    let layout = Layout::new("unreadable", Some(PROC_CGROUPS_HYBRID));
    layout.copy_all();
    // A symlink loop cannot be opened (ELOOP); a directory opens but cannot
    // be read (EISDIR).
    layout.remove("memory.high");
    std::os::unix::fs::symlink("memory.high", layout.dir().join("memory.high")).unwrap();
    layout.remove("memory.stat");
    fs::create_dir(layout.dir().join("memory.stat")).unwrap();
    check("unreadable", &read_n(&mut layout.probe(), 2));
}

#[test]
fn io_stat_devices_and_empty_io_stat() {
    let layout = Layout::new("io", Some(PROC_CGROUPS_PURE_V2));
    layout.copy_all();
    let mut probe = layout.probe();
    let mut samples = vec![probe.read(at(0))];
    layout.write(
        "io.stat",
        b"8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6\n259:65536 rbytes=7 wbytes=8 rios=9 wios=10 dbytes=0 dios=0 cost.usage=77\n4294967295:0 \n",
    );
    samples.push(probe.read(at(1)));
    layout.write("io.stat", b"");
    samples.push(probe.read(at(2)));
    check("io-devices", &samples);
}

/// Allocations of one `read` (and dropping its sample), after a first read.
fn allocations_per_sample(probe: &mut CgroupProbe) -> (u64, StepSample) {
    drop(probe.read(at(0)));
    let mut kept = None;
    let info = allocation_counter::measure(|| kept = Some(probe.read(at(1))));
    let sample = kept.unwrap();
    // What the sample owns: its `missing` list and the io device list. The
    // fields and files are static and the reasons shared (`Arc<str>`) when the
    // probe worked them out at open; a reason made by this read (a read or
    // parse failure) would be one more.
    let owned = u64::from(!sample.stepmon.missing.is_empty()) + u64::from(!sample.stepmon.io_devices.is_empty());
    assert_eq!(info.count_total, owned, "{:?}", sample.stepmon.missing);
    (info.count_total, sample)
}

#[test]
fn a_sample_allocates_only_what_it_owns() {
    let hybrid = Layout::new("allocs-hybrid", Some(PROC_CGROUPS_HYBRID));
    hybrid_child(&hybrid);
    let (count, sample) = allocations_per_sample(&mut hybrid.probe());
    assert_eq!((count, sample.stepmon.missing.len()), (1, 8), "the hybrid child: the list of 8 shared reasons");

    let pure = Layout::new("allocs-pure", Some(PROC_CGROUPS_PURE_V2));
    pure.copy_all();
    let (count, sample) = allocations_per_sample(&mut pure.probe());
    assert_eq!(
        (count, sample.stepmon.io_devices.len()),
        (2, 2),
        "the list (irq.pressure's shared reason), the devices"
    );

    // Nothing missing, no io devices: no allocation at all.
    let full = Layout::new("allocs-full", Some(PROC_CGROUPS_PURE_V2));
    full.copy_all();
    full.write("irq.pressure", b"some avg10=0.00 avg60=0.00 avg300=0.00 total=1234\n");
    full.write("io.stat", b"");
    assert_eq!(allocations_per_sample(&mut full.probe()).0, 0);

    let root = Layout::new("allocs-root", Some(PROC_CGROUPS_PURE_V2));
    root.write("cgroup.controllers", b"cpu io memory pids\n");
    root.write("cpu.stat", b"usage_usec 1\nuser_usec 1\nsystem_usec 0\n");
    allocations_per_sample(&mut root.probe());
}

#[test]
fn control_the_counter_sees_copies() {
    let layout = Layout::new("allocs-control", Some(PROC_CGROUPS_HYBRID));
    hybrid_child(&layout);
    let mut probe = layout.probe();
    let sample = probe.read(at(0));
    // Copying the list allocates the list once; its entries share their reasons.
    let info = allocation_counter::measure(|| drop(std::hint::black_box(sample.stepmon.missing.to_vec())));
    assert_eq!(info.count_total, 1);
    let info = allocation_counter::measure(|| drop(std::hint::black_box(sample.stepmon.missing[0].reason.to_string())));
    assert_eq!(info.count_total, 1, "the counter sees a reason copied into a String");
}
