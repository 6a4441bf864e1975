//! One step sample: `stepmon_sampler::cgroup::CgroupProbe` against the
//! floor (the same files through held fds, `pread` into a reused buffer,
//! no parsing), open/read/close of the same files, and cgroups-rs (see the
//! README, "Step sample").
//!
//! * `step_fake_v2` — a pure-v2 step cgroup (all 18 files of a sample plus
//!   `cgroup.controllers`, from `data/pure-v2-step/`) copied to tmpfs, since
//!   this hybrid host has no memory/io/pids controllers on cgroup v2. tmpfs
//!   does not generate content, so this measures our side only.
//! * `step_captured_v2` — the same with the files a real pure-v2 kernel
//!   printed for a step (`data/captured-v2-6.1/`, 17 files: Debian's 6.1
//!   has no `memory.swap.peak`; a 51-key `memory.stat` where the hand-made
//!   copy has 30).
//! * `step_real_idle`, `step_real_self` — a real child cgroup created under
//!   this process's cgroup v2 directory (root needed; removed afterwards),
//!   empty or with the bench process itself moved into it. On this host it
//!   has only `cpu.stat`, the PSI files and `cgroup.*`: the kernel's own
//!   generation cost (rstat flush, PSI aggregation) is included.

use std::fs;
use std::hint::black_box;
use std::io;
use std::path::{Path, PathBuf};

use cgroups_rs::fs::blkio::BlkIoController;
use cgroups_rs::fs::memory::MemController;
use jiff::Timestamp;
use stepmon_cgroupfs_parse::{
    CgroupEvents, CpuMax, CpuStat, IoStat, Limit, MemoryEvents, MemoryStat, ParseError, single,
};
use stepmon_psi::Pressure;
use stepmon_sampler::cgroup::CgroupProbe;
use stepmon_sampler::cgroup::discover;

use crate::floor::{HeldFiles, OpenReadClose, present};
use crate::inputs::TmpDir;
use crate::runner::{GroupInfo, Runner, Side, keep};

/// The files of one step sample, in the order `CgroupProbe::read` reads
/// them (`CgroupFile::ALL` in the sampler, which is private).
pub const SAMPLE_FILES: [&str; 19] = [
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

/// The files `MemController::memory_stat()` (v2) + `BlkIoController::blkio()`
/// (v2) open, in their order; `memory.low` and `memory.min` are not in a
/// step sample (nor in `data/pure-v2-step/`), so the peer's open fails there.
pub const CGROUPS_RS_FILES: [&str; 9] = [
    "memory.high",
    "memory.low",
    "memory.max",
    "memory.min",
    "memory.current",
    "memory.peak",
    "memory.stat",
    "memory.swap.current",
    "io.stat",
];

/// `pub const $const: &[(&str, &[u8])]`: (name, content) of every listed
/// file of `data/$dir/`, embedded.
macro_rules! step_files {
    ($(#[$doc:meta])* $const:ident = $dir:literal: $($name:literal),* $(,)?) => {
        $(#[$doc])*
        pub const $const: &[(&str, &[u8])] =
            &[$(($name, include_bytes!(concat!("../data/", $dir, "/", $name)))),*];
    };
}

/// `step_files!($args NAMES $extra)`, NAMES being the 18 files both bench
/// copies hold: the step files a 6.1 kernel prints with every controller
/// enabled, `cgroup.controllers` included.
macro_rules! with_6_1_step_files {
    (step_files!($($args:tt)*) $(+ $extra:literal)*) => {
        step_files!(
            $($args)*
            "cgroup.controllers",
            "cgroup.events",
            "cpu.max",
            "cpu.pressure",
            "cpu.stat",
            "io.pressure",
            "io.stat",
            "memory.current",
            "memory.events",
            "memory.high",
            "memory.max",
            "memory.peak",
            "memory.pressure",
            "memory.stat",
            "memory.swap.current",
            "pids.current",
            "pids.max",
            "pids.peak",
            $($extra),*
        );
    };
}

with_6_1_step_files!(
    step_files!(
        /// `data/pure-v2-step/`: (name, content) of every file (hand-made, with
        /// `memory.swap.peak` of 6.5+).
        PURE_V2_STEP = "pure-v2-step":
    ) + "memory.swap.peak"
);

with_6_1_step_files!(step_files!(
    /// `data/captured-v2-6.1/`: (name, content) of the step files a real
    /// pure-v2 kernel printed (Debian 6.1 under qemu, `ci/vm/capture`): 17 of
    /// the sample's files (no `memory.swap.peak` before 6.5, no `irq.pressure`
    /// without `CONFIG_IRQ_TIME_ACCOUNTING`), a 51-key `memory.stat`.
    CAPTURED_V2_STEP = "captured-v2-6.1":
));

/// Writes `files` (name, content, e.g. [`PURE_V2_STEP`]) into `dir`.
///
/// # Errors
/// The first write that fails.
pub fn write_files(dir: &Path, files: &[(&str, &[u8])]) -> io::Result<()> {
    files.iter().try_for_each(|(name, bytes)| fs::write(dir.join(name), bytes))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Fake,
    Captured,
    RealIdle,
    RealSelf,
}

/// One group of this module.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    /// Name, input, allocation rule.
    pub info: GroupInfo,
    kind: Kind,
}

/// Every group, in report order.
pub const GROUPS: &[Group] = &[
    Group {
        info: GroupInfo { name: "step_fake_v2", file: "data/pure-v2-step/ on tmpfs", zero_alloc: false },
        kind: Kind::Fake,
    },
    Group {
        info: GroupInfo {
            name: "step_captured_v2",
            file: "data/captured-v2-6.1/ (a real 6.1 kernel's files) on tmpfs",
            zero_alloc: false,
        },
        kind: Kind::Captured,
    },
    Group {
        info: GroupInfo { name: "step_real_idle", file: "live child cgroup (empty)", zero_alloc: false },
        kind: Kind::RealIdle,
    },
    Group {
        info: GroupInfo { name: "step_real_self", file: "live child cgroup (bench process inside)", zero_alloc: false },
        kind: Kind::RealSelf,
    },
];

/// The timestamp handed to `CgroupProbe::read` (the sampler passes its
/// tick's; taking the time is not part of the probe).
fn timestamp() -> Timestamp {
    Timestamp::from_second(1_796_005_186).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// Our parser for one cgroup file, every value decoded (what
/// `CgroupProbe::read` parses, without building the owned sample).
pub fn parse_cgroup_file(name: &str, b: &[u8]) -> Result<(), ParseError> {
    match name {
        "cpu.stat" => CpuStat::parse(b).map(keep),
        "cpu.max" => CpuMax::parse(b).map(keep),
        "memory.stat" => MemoryStat::parse(b).map(keep),
        "memory.events" => MemoryEvents::parse(b).map(keep),
        "memory.max" | "memory.high" | "memory.low" | "memory.min" | "pids.max" => Limit::parse(b).map(keep),
        "io.stat" => IoStat::parse(b).map(|io| {
            keep(io.totals());
            io.devices().for_each(keep);
        }),
        "cgroup.events" => CgroupEvents::parse(b).map(keep),
        n if n.ends_with(".pressure") => Pressure::parse(b).map(keep),
        _ => single::parse_u64(b).map(keep),
    }
}

impl Group {
    /// Hands every case of this group to `runner`; a real-cgroup group that
    /// cannot run here (not root, no cgroup v2) is skipped with the reason.
    pub fn cases<R: Runner>(&self, runner: &mut R) -> io::Result<()> {
        match self.kind {
            Kind::Fake | Kind::Captured => {
                let dir = TmpDir::new()?;
                write_files(dir.path(), if self.kind == Kind::Fake { PURE_V2_STEP } else { CAPTURED_V2_STEP })?;
                common_cases(runner, dir.path())?;
                cgroups_rs_cases(runner, dir.path())
            }
            Kind::RealIdle | Kind::RealSelf => {
                let mut child = match ChildCgroup::create() {
                    Ok(child) => child,
                    Err(e) => {
                        runner.skip(self.info.name, &format!("cannot create a child cgroup: {e}"));
                        return Ok(());
                    }
                };
                if self.kind == Kind::RealSelf {
                    child.enter()?;
                }
                common_cases(runner, &child.path)
            }
        }
    }
}

/// The probe, the floors and the split of the probe's cost.
fn common_cases<R: Runner>(r: &mut R, dir: &Path) -> io::Result<()> {
    let files = present(dir, &SAMPLE_FILES);
    let ts = timestamp();
    let mut probe = CgroupProbe::open(dir)?;
    r.case("ours_probe", Side::Ours, || probe.read(ts));

    let mut floor = HeldFiles::open(dir, &files)?;
    r.case("io_floor_pread", Side::Baseline, || floor.pread_all());
    r.case("io_floor_pread_once", Side::Baseline, || floor.pread_once_all());
    let mut orc = OpenReadClose::new(dir, &files)?;
    r.case("io_open_read_close", Side::Baseline, || orc.read_all());

    // The two ratios of the targets, measured interleaved (see `Runner::paired`).
    let (mut probe2, mut floor2) = (CgroupProbe::open(dir)?, HeldFiles::open(dir, &files)?);
    r.paired("paired_probe_over_floor", || probe2.read(ts), || floor2.pread_all());
    r.paired("paired_probe_over_floor_once", || probe2.read(ts), || floor2.pread_once_all());
    let mut orc2 = OpenReadClose::new(dir, &files)?;
    r.paired("paired_open_read_close_over_probe", || orc2.read_all(), || probe2.read(ts));

    // The probe's cost split: I/O + our parsers, no owned sample ...
    r.case("ours_floor_parse", Side::Ours, || {
        let mut errors = 0usize;
        floor.for_each(|name, bytes| errors += usize::from(parse_cgroup_file(name, bytes).is_err())).map(|()| errors)
    });
    // ... the parsers alone on bytes read once ...
    let mut captured = Vec::new();
    floor.for_each(|name, bytes| captured.push((name.to_owned(), bytes.to_vec())))?;
    r.case("ours_parse_only", Side::Ours, || {
        captured.iter().filter(|(name, bytes)| parse_cgroup_file(name, black_box(bytes)).is_err()).count()
    });
    // ... and what a probe without held fds would cost.
    r.case("ours_open_read_close_parse", Side::Ours, || {
        let mut errors = 0usize;
        orc.for_each(|name, bytes| errors += usize::from(parse_cgroup_file(name, bytes).is_err())).map(|()| errors)
    });
    Ok(())
}

/// cgroups-rs 0.5 on the same directory: its v2 controllers read a plain
/// directory (`MemController::new(point, root, v2 = true)` only joins file
/// names to `point`), so the tmpfs copy works as a cgroup.
fn cgroups_rs_cases<R: Runner>(r: &mut R, dir: &Path) -> io::Result<()> {
    let mem = MemController::new(dir.to_path_buf(), dir.to_path_buf(), true);
    let blkio = BlkIoController::new(dir.to_path_buf(), dir.to_path_buf(), true);
    r.case("cgroups_rs_mem_blkio", Side::Peer, || (mem.memory_stat(), blkio.blkio()));
    // Ours on the files cgroups-rs gets values from, through held fds.
    let same = present(dir, &CGROUPS_RS_FILES);
    let mut held = HeldFiles::open(dir, &same)?;
    r.case("ours_floor_parse_mem_io", Side::Ours, || {
        let mut errors = 0usize;
        held.for_each(|name, bytes| errors += usize::from(parse_cgroup_file(name, bytes).is_err())).map(|()| errors)
    });
    r.case("io_floor_pread_mem_io", Side::Baseline, || held.pread_all());
    let mut orc = OpenReadClose::new(dir, &same)?;
    r.case("io_open_read_close_mem_io", Side::Baseline, || orc.read_all());
    Ok(())
}

/// A child cgroup of this process's cgroup v2 directory, removed on drop
/// (after moving this process back if [`enter`](Self::enter) moved it).
#[derive(Debug)]
pub struct ChildCgroup {
    /// The child's directory.
    pub path: PathBuf,
    home: PathBuf,
    entered: bool,
}

impl ChildCgroup {
    /// Creates `stepmon-bench-<pid>` under this process's cgroup v2 directory.
    pub fn create() -> io::Result<ChildCgroup> {
        let cgroup = discover::locate().map_err(io::Error::other)?;
        let path = cgroup.own_dir.join(format!("stepmon-bench-{}", std::process::id()));
        fs::create_dir(&path)?;
        Ok(ChildCgroup { path, home: cgroup.own_dir, entered: false })
    }

    /// Moves this whole process into the child.
    pub fn enter(&mut self) -> io::Result<()> {
        fs::write(self.path.join("cgroup.procs"), std::process::id().to_string())?;
        self.entered = true;
        Ok(())
    }
}

impl Drop for ChildCgroup {
    fn drop(&mut self) {
        if self.entered
            && let Err(e) = fs::write(self.home.join("cgroup.procs"), std::process::id().to_string())
        {
            eprintln!("cannot move back to {}: {e}", self.home.display());
        }
        if let Err(e) = fs::remove_dir(&self.path) {
            eprintln!("cannot remove {}: {e} (remove it by hand)", self.path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::CheckRunner;

    #[test]
    fn sample_files_are_the_fixture() {
        let names: Vec<_> = PURE_V2_STEP.iter().map(|(n, _)| *n).filter(|n| *n != "cgroup.controllers").collect();
        assert_eq!(names.len(), 18);
        assert!(names.iter().all(|n| SAMPLE_FILES.contains(n)));
        for (name, bytes) in PURE_V2_STEP {
            if *name != "cgroup.controllers" {
                parse_cgroup_file(name, bytes).unwrap();
            }
        }
    }

    #[test]
    fn captured_files_are_the_vm_capture_and_parse() {
        let capture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sampler/tests/data/pure-v2-6.1.0-57-amd64");
        assert_eq!(CAPTURED_V2_STEP.len(), 18);
        for (name, bytes) in CAPTURED_V2_STEP {
            assert_eq!(fs::read(capture.join(name)).unwrap(), *bytes, "{name} differs from the VM capture");
            if *name != "cgroup.controllers" {
                assert!(SAMPLE_FILES.contains(name), "{name}");
                parse_cgroup_file(name, bytes).unwrap();
            }
        }
        let mut check = CheckRunner::new("step_captured_v2");
        GROUPS[1].cases(&mut check).unwrap();
        for (function, text) in &check.seen {
            if function.starts_with("ours_") && *function != "ours_probe" {
                assert!(text == "Ok(0)" || text == "0", "step_captured_v2/{function}: {text} parse errors");
            }
        }
    }

    #[test]
    fn fake_v2_cases_succeed_and_cgroups_rs_reads_the_same_values() {
        let mut check = CheckRunner::new("step_fake_v2");
        GROUPS[0].cases(&mut check).unwrap();
        assert!(check.ran("cgroups_rs_mem_blkio"));
        for (function, text) in &check.seen {
            if function.starts_with("ours_") && *function != "ours_probe" {
                assert!(text == "Ok(0)" || text == "0", "step_fake_v2/{function}: {text} parse errors");
            }
        }

        let dir = TmpDir::new().unwrap();
        write_files(dir.path(), PURE_V2_STEP).unwrap();
        let sample = CgroupProbe::open(dir.path()).unwrap().read(timestamp());
        let mem = MemController::new(dir.path().to_path_buf(), dir.path().to_path_buf(), true).memory_stat();
        let ours = sample.memory_stat.unwrap();
        assert_eq!((Some(mem.stat.shmem), Some(mem.stat.pgfault)), (ours.shmem, ours.pgfault));
        assert_eq!(Some(mem.max_usage_in_bytes), ours.peak);
        let io = BlkIoController::new(dir.path().to_path_buf(), dir.path().to_path_buf(), true).blkio();
        // cgroups-rs 0.5.1 finds the one full line but reads every value as 0:
        // its `get_value` splits `rbytes=1048576` at ':' instead of '='. It
        // still does all the work (split, allocate, parse "0"), so it is timed.
        assert_eq!(io.io_stat.len(), 1);
        assert_eq!((io.io_stat[0].major, io.io_stat[0].minor, io.io_stat[0].rbytes, io.io_stat[0].wios), (8, 0, 0, 0));
        assert_eq!(sample.io_stat.unwrap().read_bytes, Some(1_048_576));
    }

    #[test]
    fn real_cgroup_cases_succeed_or_say_why_not() {
        // The idle child: moving the test process (all test threads) is left to the bench.
        let mut check = CheckRunner::new("step_real_idle");
        GROUPS[2].cases(&mut check).unwrap();
        assert!(check.skipped || check.ran("ours_probe"));
    }
}
