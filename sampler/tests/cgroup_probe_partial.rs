//! The step probe on partial cgroup directories: a file that is in the
//! directory is read, whatever else is missing, and a file that is not gets
//! a reason that is true of the directory.
//!
//! Partial directories are laid out as BuildKit's parser tests
//! (`TestParseMemoryStat`, `TestParsePidsStat` in util/resources) and
//! below's cgroupfs tests lay them: only the files under test, plus
//! `cgroup.controllers`, which the probe needs. Their contents are the
//! repository's captures: the step cgroup `ci/vm/capture` copied on Debian's
//! 6.1 kernel (`tests/data/pure-v2-6.1.0-57-amd64/`), this hybrid host's
//! child cgroup (`cgroupfs-parse/tests/data/hybrid-6.18/`,
//! `psi/tests/data/hybrid-6.18/`), and for the two files that 6.1 kernel
//! lacks the hand-written ones (`tests/data/pure-v2-step/memory.swap.peak`,
//! `psi/tests/data/pure-v2-handmade/irq.pressure`).
//!
//! Which directory is the root of the cgroup v2 hierarchy is checked on the
//! real one (live, SKIPPED where it cannot be read), against
//! /proc/self/mountinfo rather than the probe's own rule.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::skip;
use jiff::Timestamp;
use stepmon_cgroupfs_parse::format::single;
use stepmon_cgroupfs_parse::{CgroupEvents, CpuMax, CpuStat, IoStat, MemoryEvents, MemoryStat};
use stepmon_model::missing::{Missing, MissingKind};
use stepmon_model::sample::{LimitJson, MaxToken, StepSample};
use stepmon_psi::Pressure;
use stepmon_sampler::cgroup::CgroupProbe;

/// Every file the probe reads, in its read order (`CgroupFile::ALL`).
const PROBE_FILES: [&str; 19] = [
    "cpu.stat",
    "cpu.pressure",
    "cpu.max",
    "memory.stat",
    "memory.events",
    "memory.peak",
    "memory.current",
    "memory.swap.current",
    "memory.swap.peak",
    "memory.max",
    "memory.high",
    "memory.pressure",
    "io.stat",
    "io.pressure",
    "pids.current",
    "pids.peak",
    "pids.max",
    "irq.pressure",
    "cgroup.events",
];

/// The fields of the cpu bandwidth keys of `cpu.stat`, which are about its
/// content, not about a file.
const CPU_BANDWIDTH_FIELDS: [&str; 3] = ["cpuStat.nrPeriods", "cpuStat.nrThrottled", "cpuStat.throttledNanos"];

/// `/proc/cgroups` of a pure cgroup v2 host and of this hybrid one.
const PROC_CGROUPS_PURE_V2: &str =
    "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t0\t9\t1\nmemory\t0\t9\t1\nblkio\t0\t9\t1\npids\t0\t9\t1\n";
const PROC_CGROUPS_HYBRID: &str =
    "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpu\t1\t1\t1\nblkio\t7\t1\t1\nmemory\t4\t61\t1\npids\t8\t1\t1\n";

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: PathBuf) -> Vec<u8> {
    fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A realistic content for `file`: the captured step of the 6.1 kernel, or
/// the hand-written file where that kernel has none.
fn content(file: &str) -> Vec<u8> {
    let capture = repository().join("sampler/tests/data/pure-v2-6.1.0-57-amd64").join(file);
    match file {
        "memory.swap.peak" => read(repository().join("sampler/tests/data/pure-v2-step/memory.swap.peak")),
        "irq.pressure" => read(repository().join("psi/tests/data/pure-v2-handmade/irq.pressure")),
        _ => read(capture),
    }
}

/// The captured step's `cgroup.controllers` (`cpu io memory pids`).
fn captured_controllers() -> Vec<u8> {
    content("cgroup.controllers")
}

/// A scratch cgroup directory and a fake procfs beside it, removed on drop.
struct Scratch {
    root: tempfile::TempDir,
}

impl Scratch {
    fn new(name: &str, controllers: &[u8], proc_cgroups: &str) -> Scratch {
        let root = tempfile::Builder::new().prefix(&format!("stepmon-partial-{name}-")).tempdir().unwrap();
        fs::create_dir(root.path().join("cgroup")).unwrap();
        fs::create_dir(root.path().join("proc")).unwrap();
        fs::write(root.path().join("proc/cgroups"), proc_cgroups).unwrap();
        let scratch = Scratch { root };
        scratch.write("cgroup.controllers", controllers);
        scratch
    }

    fn dir(&self) -> PathBuf {
        self.root.path().join("cgroup")
    }

    fn write(&self, file: &str, bytes: &[u8]) {
        fs::write(self.dir().join(file), bytes).unwrap();
    }

    /// Every file of the probe with its realistic content, but `except`.
    fn every_file_but(&self, except: &[&str]) {
        for file in PROBE_FILES.into_iter().filter(|f| !except.contains(f)) {
            self.write(file, &content(file));
        }
    }

    fn sample(&self) -> (CgroupProbe, StepSample) {
        let mut probe = CgroupProbe::open_with_proc(self.dir(), &self.root.path().join("proc")).unwrap();
        let sample = probe.read(Timestamp::from_second(1_796_005_186).unwrap());
        (probe, sample)
    }
}

/// The entry of the probe's `file`, if any.
fn entry_for<'s>(sample: &'s StepSample, file: &str) -> Option<&'s Missing> {
    sample.stepmon.missing.iter().find(|m| m.file == file)
}

/// The value(s) `file`'s bytes give, parsed here, and what the sample holds
/// for them, both as text.
fn expected_and_read(file: &str, bytes: &[u8], s: &StepSample) -> (String, String) {
    let limit = |bytes: &[u8]| match std::str::from_utf8(bytes).unwrap().trim() {
        "max" => LimitJson::Max(MaxToken::Max),
        value => LimitJson::Value(value.parse().unwrap()),
    };
    let total = |line: Option<stepmon_psi::PressureLine>| line.and_then(|l| l.total_usec);
    let pressure = Pressure::parse(bytes);
    let memory = s.memory_stat.as_ref();
    let (expected, read) = match file {
        "cpu.stat" => {
            let raw = CpuStat::parse(bytes).unwrap();
            let cpu = s.cpu_stat.as_ref();
            (
                format!("{:?}", (raw.usage_usec.map(|u| u * 1000), raw.nr_throttled.map(|n| n as u32))),
                format!("{:?}", (cpu.and_then(|c| c.usage_nanos), cpu.and_then(|c| c.nr_throttled))),
            )
        }
        "cpu.pressure" => (
            format!("{:?}", total(pressure.unwrap().some)),
            format!("{:?}", s.cpu_stat.as_ref().and_then(|c| c.pressure.as_ref()?.some.as_ref()?.total)),
        ),
        "cpu.max" => {
            let raw = CpuMax::parse(bytes).unwrap();
            (
                format!("{:?}", (Some(stepmon_sampler::model::limit_json(raw.quota_usec)), Some(raw.period_usec))),
                format!("{:?}", (s.stepmon.cpu_max_quota_usec, s.stepmon.cpu_max_period_usec)),
            )
        }
        "memory.stat" => {
            let raw = MemoryStat::parse(bytes).unwrap();
            (
                format!("{:?}", Some((raw.anon, raw.file, raw.pgfault))),
                format!("{:?}", memory.map(|m| (m.anon, m.file, m.pgfault))),
            )
        }
        "memory.events" => (
            format!("{:?}", MemoryEvents::parse(bytes).unwrap().oom_kill),
            format!("{:?}", s.stepmon.memory_events.as_ref().and_then(|e| e.oom_kill)),
        ),
        "memory.peak" => (format!("{:?}", single::parse_u64(bytes).ok()), format!("{:?}", memory.and_then(|m| m.peak))),
        "memory.current" => (format!("{:?}", single::parse_u64(bytes).ok()), format!("{:?}", s.stepmon.memory_current)),
        "memory.swap.current" => {
            (format!("{:?}", single::parse_u64(bytes).ok()), format!("{:?}", memory.and_then(|m| m.swap_bytes)))
        }
        "memory.swap.peak" => {
            (format!("{:?}", single::parse_u64(bytes).ok()), format!("{:?}", s.stepmon.memory_swap_peak))
        }
        "memory.max" => (format!("{:?}", Some(limit(bytes))), format!("{:?}", s.stepmon.memory_max)),
        "memory.high" => (format!("{:?}", Some(limit(bytes))), format!("{:?}", s.stepmon.memory_high)),
        "memory.pressure" => (
            format!("{:?}", total(pressure.unwrap().some)),
            format!("{:?}", memory.and_then(|m| m.pressure.as_ref()?.some.as_ref()?.total)),
        ),
        "io.stat" => {
            let totals = IoStat::parse(bytes).unwrap().totals();
            (
                format!("{:?}", Some((totals.rbytes, totals.wbytes))),
                format!("{:?}", s.io_stat.as_ref().map(|io| (io.read_bytes, io.write_bytes))),
            )
        }
        "io.pressure" => (
            format!("{:?}", total(pressure.unwrap().some)),
            format!("{:?}", s.io_stat.as_ref().and_then(|io| io.pressure.as_ref()?.some.as_ref()?.total)),
        ),
        "pids.current" => (format!("{:?}", single::parse_u64(bytes).ok()), format!("{:?}", s.pids_stat.current)),
        "pids.peak" => (format!("{:?}", single::parse_u64(bytes).ok()), format!("{:?}", s.stepmon.pids_peak)),
        "pids.max" => (format!("{:?}", Some(limit(bytes))), format!("{:?}", s.stepmon.pids_max)),
        // The hand-written irq.pressure has a `full` line only, as the kernel prints it.
        "irq.pressure" => (
            format!("{:?}", total(pressure.unwrap().full)),
            format!("{:?}", s.stepmon.irq_pressure.as_ref().and_then(|p| p.full.as_ref()?.total)),
        ),
        "cgroup.events" => {
            (format!("{:?}", CgroupEvents::parse(bytes).unwrap().populated), format!("{:?}", s.stepmon.populated))
        }
        other => panic!("no field known for {other}"),
    };
    assert!(!expected.contains("None"), "{file}: the capture gives no value: {expected}");
    (expected, read)
}

/// The files of the probe that a controller's being enabled creates
/// (`cpu.stat` and the `*.pressure` files are in every cgroup).
fn controller_files(controller: &str) -> Vec<&'static str> {
    match controller {
        "cpu" => vec!["cpu.max"],
        "io" => vec!["io.stat"],
        "memory" | "pids" => PROBE_FILES
            .into_iter()
            .filter(|f| f.starts_with(&format!("{controller}.")) && !f.ends_with(".pressure"))
            .collect(),
        other => panic!("no files known for the {other} controller"),
    }
}

/// What must hold of every entry of a directory the test built as a copy
/// with files left out: the file is really not there, and the reason says
/// so without claiming anything of a kernel (the only true thing about a
/// copy), or it is what the directory's own `cgroup.controllers` says.
fn assert_true_of_a_copy(dir: &Path, sample: &StepSample) {
    let controllers = fs::read_to_string(dir.join("cgroup.controllers")).unwrap();
    for m in &sample.stepmon.missing {
        if CPU_BANDWIDTH_FIELDS.contains(&m.field.as_ref()) {
            continue;
        }
        match m.kind {
            MissingKind::NotFound => {
                assert!(PROBE_FILES.contains(&m.file.as_ref()), "{m:?}");
                assert!(!dir.join(m.file.as_ref()).exists(), "{m:?}, but {} is there", m.file);
                assert!(m.reason.contains("not as the kernel made it"), "{m:?}");
            }
            MissingKind::ControllerNotEnabled => {
                let controller = m.reason.split_whitespace().nth(1).unwrap();
                assert!(!controllers.split_whitespace().any(|c| c == controller), "{m:?} but {controllers:?}");
                assert!(
                    controller_files(controller).iter().all(|f| !dir.join(f).exists()),
                    "{m:?}, but a {controller} file is there"
                );
            }
            other => panic!("{other:?} said of a copy: {m:?}"),
        }
    }
}

/// Every file the probe reads, alone with `cgroup.controllers`: its
/// field(s) hold its value and no entry names it; every other file gets a
/// reason that is true of such a directory.
#[test]
fn every_file_alone_is_read_and_the_rest_is_reported_truly() {
    for file in PROBE_FILES {
        let scratch = Scratch::new("alone", &captured_controllers(), PROC_CGROUPS_PURE_V2);
        let bytes = content(file);
        scratch.write(file, &bytes);
        let (probe, sample) = scratch.sample();
        assert!(!probe.is_root(), "{file}");
        let (expected, read) = expected_and_read(file, &bytes, &sample);
        assert_eq!(read, expected, "{file} alone: {:?}", sample.stepmon.missing);
        assert_eq!(entry_for(&sample, file), None, "{file} is there");
        assert!(!sample.stepmon.missing.iter().any(|m| m.kind == MissingKind::NotOnRootCgroup), "{file}");
        assert_true_of_a_copy(&scratch.dir(), &sample);
        // The same with a cgroup.controllers that does not list its
        // controller (as a test that writes only the file has it).
        let bare = Scratch::new("alone-bare", b"", PROC_CGROUPS_PURE_V2);
        bare.write(file, &bytes);
        let (_, sample) = bare.sample();
        assert_eq!(expected_and_read(file, &bytes, &sample).1, expected, "{file} with an empty cgroup.controllers");
        assert_eq!(entry_for(&sample, file), None, "{file} is there");
        if file == "cgroup.events" {
            // `cgroup.controllers` and `cgroup.events` alone are what Linux
            // 4.5 to 4.14 makes for a cgroup whose parent enables nothing
            // (cpu.stat came with 4.15, PSI with 4.20): nothing here shows
            // otherwise, so the reasons are that kernel's, each file absent.
            for m in sample.stepmon.missing.iter().filter(|m| m.file != "cgroup.controllers") {
                assert!(!bare.dir().join(m.file.as_ref()).exists(), "{m:?}");
                let expected = match m.file.as_ref() {
                    "cpu.stat" => MissingKind::KernelTooOld,
                    "irq.pressure" => MissingKind::KernelFeatureMissing,
                    _ => MissingKind::PsiDisabled,
                };
                assert_eq!(m.kind, expected, "{m:?}");
            }
        } else {
            assert_true_of_a_copy(&bare.dir(), &sample);
        }
    }
}

/// Every file the probe reads left out of a directory that has all the
/// others: the entry for it is the only one, the file is really absent, and
/// its reason is what the rest of the directory shows. A kernel that made
/// the others would have made it (`notFound`: the directory is not as the
/// kernel made it), except for the two files no other one vouches for:
/// `memory.swap.peak` (6.5, the newest; the others need at most 6.1, so a
/// 6.1–6.4 kernel made them) and `irq.pressure` (only it shows
/// `CONFIG_IRQ_TIME_ACCOUNTING`).
#[test]
fn every_file_left_out_gets_the_reason_the_rest_of_the_directory_shows() {
    for file in PROBE_FILES {
        let scratch = Scratch::new("without", &captured_controllers(), PROC_CGROUPS_PURE_V2);
        scratch.every_file_but(&[file]);
        let (probe, sample) = scratch.sample();
        assert!(!probe.is_root());
        assert!(!scratch.dir().join(file).exists());
        let entries: Vec<&Missing> = sample.stepmon.missing.iter().collect();
        assert_eq!(entries.len(), 1, "{file} left out: {entries:?}");
        let entry = entries[0];
        assert_eq!(entry.file, file);
        let expected = match file {
            "memory.swap.peak" => MissingKind::KernelTooOld,
            "irq.pressure" => MissingKind::KernelFeatureMissing,
            _ => MissingKind::NotFound,
        };
        assert_eq!(entry.kind, expected, "{entry:?}");
        if expected == MissingKind::NotFound {
            assert!(entry.reason.contains("so this directory is not as the kernel made it"), "{entry:?}");
        }
        // Every other file is read: the sample has its value.
        for other in PROBE_FILES.into_iter().filter(|f| *f != file) {
            let (expected, read) = expected_and_read(other, &content(other), &sample);
            assert_eq!(read, expected, "{other} beside {file} left out");
        }
    }
}

/// Only `cgroup.controllers`: a directory no kernel makes (every non-root
/// cgroup has `cgroup.events`), so every file is only "not in it", or not
/// enabled by its `cgroup.controllers`.
#[test]
fn only_cgroup_controllers_claims_nothing_of_a_kernel() {
    for controllers in [captured_controllers(), Vec::new()] {
        let scratch = Scratch::new("empty", &controllers, PROC_CGROUPS_PURE_V2);
        let (probe, sample) = scratch.sample();
        assert!(!probe.is_root());
        assert!(sample.cpu_stat.is_none() && sample.memory_stat.is_none() && sample.stepmon.populated.is_none());
        assert_true_of_a_copy(&scratch.dir(), &sample);
        let events = entry_for(&sample, "cgroup.events").unwrap();
        assert_eq!(events.kind, MissingKind::NotFound, "{events:?}");
        assert!(events.reason.contains("in every non-root cgroup"), "{events:?}");
    }
}

/// One kind of reason a missing file gets: the sample of `dir` gives it
/// for `file`, which is really absent there; then a directory holding only
/// `file` plus `holding_controllers` reads it.
fn kind_given_where_absent_and_read_where_held(
    kind: MissingKind,
    file: &str,
    dir: &Path,
    sample: &StepSample,
    holding_controllers: &[u8],
) {
    assert!(!dir.join(file).exists(), "{file} is there");
    let entries: Vec<&Missing> = sample.stepmon.missing.iter().filter(|m| m.kind == kind).collect();
    if kind == MissingKind::ControllerNotEnabled || kind == MissingKind::ControllerOnCgroupV1 {
        // One entry for the controller's object, from cgroup.controllers.
        assert!(entries.iter().any(|m| m.file == "cgroup.controllers"), "{kind:?}: {:?}", sample.stepmon.missing);
    } else {
        assert!(entries.iter().any(|m| m.file == file), "{kind:?} for {file}: {:?}", sample.stepmon.missing);
    }
    let holding = Scratch::new("holding", holding_controllers, PROC_CGROUPS_PURE_V2);
    let bytes = content(file);
    holding.write(file, &bytes);
    let (_, held) = holding.sample();
    let (expected, read) = expected_and_read(file, &bytes, &held);
    assert_eq!(read, expected, "{file} held, after {kind:?}");
    assert_eq!(entry_for(&held, file), None);
}

/// [`kind_given_where_absent_and_read_where_held`] for a scratch directory.
fn reason_kind_then_the_file_read(kind: MissingKind, file: &str, missing: &Scratch, holding_controllers: &[u8]) {
    let (_, sample) = missing.sample();
    kind_given_where_absent_and_read_where_held(kind, file, &missing.dir(), &sample, holding_controllers);
}

/// A child cgroup of this hybrid host as captured (empty
/// `cgroup.controllers`, `cgroup.events`, core `cpu.stat`, PSI files).
fn hybrid_child(name: &str, proc_cgroups: &str) -> Scratch {
    let hybrid = repository().join("cgroupfs-parse/tests/data/hybrid-6.18");
    let psi = repository().join("psi/tests/data/hybrid-6.18");
    let scratch = Scratch::new(name, &read(hybrid.join("cgroup2_child_cgroup.controllers.txt")), proc_cgroups);
    scratch.write("cgroup.events", &read(hybrid.join("cgroup2_child_cgroup.events.txt")));
    scratch.write("cpu.stat", &read(hybrid.join("cgroup2_child_cpu.stat.txt")));
    for kind in ["cpu", "memory", "io"] {
        scratch.write(&format!("{kind}.pressure"), &read(psi.join(format!("cgroup2_child_{kind}.pressure.txt"))));
    }
    scratch
}

#[test]
fn each_reason_kind_is_given_only_where_the_file_is_absent() {
    // The memory controller not enabled / bound to cgroup v1: a kernel-made
    // layout; a directory holding memory.stat reads it whatever its
    // cgroup.controllers says.
    let not_enabled = hybrid_child("not-enabled", PROC_CGROUPS_PURE_V2);
    reason_kind_then_the_file_read(MissingKind::ControllerNotEnabled, "memory.stat", &not_enabled, b"");
    let on_v1 = hybrid_child("on-v1", PROC_CGROUPS_HYBRID);
    reason_kind_then_the_file_read(MissingKind::ControllerOnCgroupV1, "memory.stat", &on_v1, b"");
    // Nothing in the hybrid child shows IRQ time accounting.
    reason_kind_then_the_file_read(MissingKind::KernelFeatureMissing, "irq.pressure", &not_enabled, b"");

    // A copy with one file left out.
    let copy = Scratch::new("not-found", &captured_controllers(), PROC_CGROUPS_PURE_V2);
    copy.every_file_but(&["memory.current"]);
    reason_kind_then_the_file_read(MissingKind::NotFound, "memory.current", &copy, &captured_controllers());

    // A kernel before 6.5 (the capture's own 6.1 step).
    let before_6_5 = Scratch::new("too-old", &captured_controllers(), PROC_CGROUPS_PURE_V2);
    before_6_5.every_file_but(&["memory.swap.peak", "irq.pressure"]);
    reason_kind_then_the_file_read(MissingKind::KernelTooOld, "memory.swap.peak", &before_6_5, &captured_controllers());

    // A kernel before 4.20, so without PSI and every newer file.
    let before_psi = Scratch::new("no-psi", &captured_controllers(), PROC_CGROUPS_PURE_V2);
    let newer = ["cpu.pressure", "memory.pressure", "io.pressure", "irq.pressure", "memory.peak", "memory.swap.peak"];
    before_psi.every_file_but(&[&newer[..], &["pids.peak"]].concat());
    reason_kind_then_the_file_read(MissingKind::PsiDisabled, "cpu.pressure", &before_psi, &captured_controllers());

    // A file that is there but cannot be opened (a symlink loop): `io`, and
    // opening it really fails.
    let unopenable = Scratch::new("io", &captured_controllers(), PROC_CGROUPS_PURE_V2);
    unopenable.every_file_but(&["memory.high"]);
    std::os::unix::fs::symlink("memory.high", unopenable.dir().join("memory.high")).unwrap();
    assert!(fs::File::open(unopenable.dir().join("memory.high")).is_err());
    let (_, sample) = unopenable.sample();
    let entry = entry_for(&sample, "memory.high").unwrap();
    assert_eq!(entry.kind, MissingKind::Io, "{entry:?}");
    // Only the root of the hierarchy gets `notOnRootCgroup`: see the live test below.
}

/// The cgroup2 mount that is the root of the hierarchy, from
/// /proc/self/mountinfo (proc(5): field 5 the mount point, field 4 the root
/// of the mount within its filesystem, the filesystem type after ` - `),
/// when this process is in the initial cgroup namespace (inside another,
/// the root field reads `/` for the namespace's own cgroup).
fn real_root() -> Result<PathBuf, String> {
    // PROC_CGROUP_INIT_INO (include/linux/proc_ns.h).
    let namespace = fs::read_link("/proc/self/ns/cgroup").map_err(|e| format!("/proc/self/ns/cgroup: {e}"))?;
    if namespace != Path::new("cgroup:[4026531835]") {
        return Err(format!("in cgroup namespace {}, not the initial one", namespace.display()));
    }
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
    mountinfo
        .lines()
        .find_map(|line| {
            let (mount, filesystem) = line.split_once(" - ")?;
            let fields: Vec<&str> = mount.split(' ').collect();
            (filesystem.starts_with("cgroup2 ") && fields.get(3) == Some(&"/")).then(|| PathBuf::from(fields[4]))
        })
        .ok_or_else(|| "no cgroup2 mount of the hierarchy's root".to_owned())
}

/// A child cgroup created for a test and removed on drop.
struct ChildCgroup(PathBuf);

impl Drop for ChildCgroup {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.0);
    }
}

#[test]
fn the_real_root_is_the_root_and_its_child_and_its_copy_are_not() {
    let test = "the_real_root_is_the_root_and_its_child_and_its_copy_are_not";
    let root = match real_root() {
        Ok(root) => root,
        Err(why) => return skip::skip(test, why),
    };
    let Ok(mut probe) = CgroupProbe::open(&root) else {
        return skip::skip(test, format_args!("{} cannot be read", root.display()));
    };
    assert!(probe.is_root(), "{}", root.display());
    let sample = probe.read(Timestamp::now());
    // The root has no cgroup.events (a "non-root" file), and says so.
    assert!(!root.join("cgroup.events").exists());
    let events = entry_for(&sample, "cgroup.events").unwrap();
    assert_eq!(events.kind, MissingKind::NotOnRootCgroup, "{events:?}");
    for m in sample.stepmon.missing.iter().filter(|m| m.kind == MissingKind::NotOnRootCgroup) {
        assert!(!root.join(m.file.as_ref()).exists(), "{m:?}");
    }
    // A directory holding the file (and the root's cgroup.controllers) reads it.
    let controllers = read(root.join("cgroup.controllers"));
    kind_given_where_absent_and_read_where_held(
        MissingKind::NotOnRootCgroup,
        "cgroup.events",
        &root,
        &sample,
        &controllers,
    );

    // A copy of the root (every file it lets be read) is not the root.
    let copy = Scratch::new("root-copy", &controllers, PROC_CGROUPS_PURE_V2);
    for entry in fs::read_dir(&root).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file()
            && let Ok(bytes) = fs::read(entry.path())
        {
            copy.write(entry.file_name().to_str().unwrap(), &bytes);
        }
    }
    let (copied, sample) = copy.sample();
    assert!(!copied.is_root());
    assert!(!sample.stepmon.missing.iter().any(|m| m.kind == MissingKind::NotOnRootCgroup), "{sample:?}");
    assert_true_of_a_copy(&copy.dir(), &sample);

    // A child cgroup is not the root: it has cgroup.events, and it is read.
    if !rustix::process::geteuid().is_root() {
        return skip::skip(test, "needs root to create a child cgroup");
    }
    let child = ChildCgroup(root.join(format!("stepmon-test-{}-partial", std::process::id())));
    fs::create_dir(&child.0).unwrap();
    let mut probe = CgroupProbe::open(&child.0).unwrap();
    assert!(!probe.is_root());
    let sample = probe.read(Timestamp::now());
    assert_eq!(sample.stepmon.populated, Some(false));
    assert!(!sample.stepmon.missing.iter().any(|m| m.kind == MissingKind::NotOnRootCgroup), "{sample:?}");
    // What it lacks, it lacks: nothing it has is reported missing.
    for m in &sample.stepmon.missing {
        if PROBE_FILES.contains(&m.file.as_ref()) && !CPU_BANDWIDTH_FIELDS.contains(&m.field.as_ref()) {
            assert!(!child.0.join(m.file.as_ref()).exists(), "{m:?}");
        }
    }
    drop(probe);
    fs::remove_dir(&child.0).unwrap();
    assert!(!child.0.exists());
}
