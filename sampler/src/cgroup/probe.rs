//! Reads one cgroup directory into a [`StepSample`].

use std::io;
use std::ops::Range;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use stepmon_cgroupfs_parse::{
    CgroupEvents, ControllerList, CpuMax, CpuStat as RawCpuStat, IoStat as RawIoStat, Limit, MemoryEvents,
    MemoryStat as RawMemoryStat, ParseError, single,
};
use stepmon_fdread::{Dir, HeldFile, is_gone, is_unsupported};
use stepmon_model::system::PressureJson;
use stepmon_psi::Pressure;

use super::absent::Context;
use super::files::CgroupFile;
use crate::probe::{Probe, Tick};
use stepmon_model::missing::{Missing, MissingKind};
use stepmon_model::sample::{CpuStat, IoDevice, IoStat, LimitJson, MemoryEventsJson, MemoryStat, PidsStat, StepSample};

/// Samples one cgroup v2 directory: every file is opened once (relative to
/// the held directory) and re-read with `pread` at offset 0 on each sample.
///
/// Never fails once open: files that do not exist, cannot be read or do not
/// parse leave their fields absent and add a [`Missing`] entry with the
/// reason (controller not enabled, bound to cgroup v1, kernel too old, PSI
/// disabled, cgroup removed, ...).
///
/// A file that cannot be opened at open time is never tried again, and its
/// reason is worked out then, once: every sample copies the same entry.
/// Trying again on each sample would cost a failing path lookup per absent
/// file on every sample (14 of the 19 on a child cgroup of a hybrid host)
/// for a change a step's cgroup does not see in practice: the kernel adds a
/// controller's files to a cgroup only when its parent's
/// `cgroup.subtree_control` enables the controller, which BuildKit does
/// once, when its resource monitor starts (`prepareCgroupControllers` in
/// monitor.go), before any step cgroup exists; PSI (`psi=`, `CONFIG_PSI`), swap accounting and the
/// kernel's version are fixed at boot. The exceptions are a parent that
/// enables a controller, or a write to `cgroup.pressure`, while the step
/// runs: the fields stay absent, with the reason that held at open.
#[derive(Debug)]
pub struct CgroupProbe {
    path: PathBuf,
    /// One per [`CgroupFile::ALL`], by [`CgroupFile::index`].
    files: Vec<Slot>,
    /// The entries for `cpu.stat` without bandwidth keys (cpu controller
    /// not enabled or bound to v1, or no `CONFIG_CFS_BANDWIDTH`).
    cpu_bandwidth_absent: [Missing; 3],
    /// Every file of a sample, one after the other (a sample reads every
    /// file first, then parses them); reused.
    buf: Vec<u8>,
    /// Per file (by [`CgroupFile::index`]): where this sample's bytes are in
    /// `buf`, or why the file could not be read.
    reads: Vec<io::Result<Range<usize>>>,
    /// Length of the last sample's `missing` list: the next one's capacity
    /// (it is the same on every sample unless a read or parse fails).
    missing_len: usize,
    /// The directory is the root of the cgroup v2 hierarchy.
    is_root: bool,
}

/// `ENOENT` (include/uapi/asm-generic/errno-base.h): what opening a file the
/// directory's listing lacks returns, given without the open.
const ENOENT: i32 = 2;

/// A file of the sample as found at open.
#[derive(Debug)]
enum Slot {
    /// Open, read on every sample.
    Held(HeldFile),
    /// Could not be opened (absent, or another error): what every sample
    /// reports for it.
    Unavailable(Fixed),
}

/// The entry of a file that could not be opened.
#[derive(Debug)]
struct Fixed {
    entry: Missing,
    /// An earlier unavailable file (in read order) reports the same field
    /// (e.g. every `memory.*` file names `memoryStat` when the memory
    /// controller is not enabled): that entry is always in the list
    /// before this one, so this one never is.
    repeat: bool,
}

/// Microseconds to nanoseconds, as BuildKit converts `*_usec`.
fn nanos(usec: Option<u64>) -> Option<u64> {
    usec.map(|u| u.saturating_mul(1000))
}

fn limit(value: Limit) -> LimitJson {
    crate::model::limit_json(value)
}

impl CgroupProbe {
    /// Opens the cgroup directory `path` and its files. Fails only if the
    /// directory itself cannot be opened or is not a cgroup v2 directory
    /// (no `cgroup.controllers`).
    pub fn open(path: impl AsRef<Path>) -> io::Result<CgroupProbe> {
        CgroupProbe::open_with_proc(path, Path::new("/proc"))
    }

    /// [`open`](Self::open) with procfs at `proc_root` (a copy of another
    /// host's, a test's): only `<proc_root>/cgroups` is read, to tell
    /// controllers bound to cgroup v1 from controllers not enabled.
    pub fn open_with_proc(path: impl AsRef<Path>, proc_root: &Path) -> io::Result<CgroupProbe> {
        let path = path.as_ref().to_path_buf();
        // Readable, to be listed through the same fd; without read
        // permission on the directory (where an O_PATH open still works),
        // every file is tried instead.
        let (mut dir, listable) = match Dir::open_readable(&path) {
            Ok(dir) => (dir, true),
            Err(error) if error.kind() == io::ErrorKind::PermissionDenied => (Dir::open(&path)?, false),
            Err(error) => return Err(error),
        };
        let mut buf = Vec::new();
        let controllers = HeldFile::open_at(&dir, "cgroup.controllers")?;
        let enabled: Vec<String> = {
            // One show() of a kernfs seq_file, or a regular file: one pread.
            let bytes = controllers.read_single(&mut buf)?;
            let list = ControllerList::parse(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            list.iter().map(str::to_owned).collect()
        };
        // Which files exist comes from the directory itself: one listing
        // (two getdents64 on kernfs) instead of an open that fails for each
        // absent file (14 of the 19 on a step cgroup of a hybrid host,
        // which gets no controller). Only the listed ones are opened.
        let mut listed = [!listable; CgroupFile::ALL.len()];
        if listable {
            match dir.list_names(|name| {
                if let Some(file) = CgroupFile::named(name.as_bytes())
                    && let Some(slot) = listed.get_mut(file.index())
                {
                    *slot = true;
                }
            }) {
                Ok(()) => {}
                // Could not be listed after all: try every file.
                Err(_) => listed = [true; CgroupFile::ALL.len()],
            }
        }
        let opened = CgroupFile::ALL.map(|file| match listed.get(file.index()) {
            Some(true) => HeldFile::open_at(&dir, file.info().name),
            _ => Err(io::Error::from_raw_os_error(ENOENT)),
        });
        // A file that exists but cannot be opened (ELOOP, EACCES) exists all the same.
        let exists = core::array::from_fn(|index| match opened.get(index) {
            Some(Ok(_)) => true,
            Some(Err(error)) => !is_gone(error),
            None => false,
        });
        // Only the root lacks `cgroup.events`; where it exists no more is asked.
        let events = CgroupFile::CgroupEvents.index();
        let is_root = !exists.get(events).copied().unwrap_or(false) && super::root::is_hierarchy_root(&dir)?;
        let context = Context::new(enabled, super::controllers_on_v1(proc_root), is_root, exists);
        let mut files: Vec<Slot> = Vec::with_capacity(CgroupFile::ALL.len());
        for (file, opened) in CgroupFile::ALL.into_iter().zip(opened) {
            let entry = match opened {
                Ok(held) => {
                    files.push(Slot::Held(held));
                    continue;
                }
                Err(error) if is_gone(&error) => context.absent(file),
                Err(error) => {
                    let info = file.info();
                    let reason = format!("cannot open {}: {error}", info.name);
                    Missing::new(info.field, info.name, MissingKind::Io, reason)
                }
            };
            let repeat = files.iter().any(|slot| matches!(slot, Slot::Unavailable(f) if f.entry.field == entry.field));
            files.push(Slot::Unavailable(Fixed { entry, repeat }));
        }
        let cpu_bandwidth_absent = context.cpu_bandwidth_absent();
        let reads = files.iter().map(|_| Ok(0..0)).collect();
        Ok(CgroupProbe { path, files, cpu_bandwidth_absent, buf, reads, missing_len: 0, is_root })
    }

    /// The cgroup directory.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the directory is the root of the cgroup v2 hierarchy (a
    /// directory on cgroup2 with the hierarchy's first inode), where the
    /// files the kernel documents as "non-root" do not exist and are
    /// reported so. A copy of the root, or the root of a cgroup namespace
    /// (a container's own cgroup), is not.
    #[must_use]
    pub fn is_root(&self) -> bool {
        self.is_root
    }

    /// Reads one sample now.
    pub fn read(&mut self, timestamp: Timestamp) -> StepSample {
        // Every file of a sample is one kernfs `show()`: one pread each, all
        // before any parsing. Parsing between the reads ran each parser
        // right after a system call, where it took twice as long as on its
        // own (the kernel entry and exit disturb branch predictors and
        // caches); read back to back, then parsed back to back, it did not.
        let CgroupProbe { files, buf, reads, .. } = &mut *self;
        buf.clear();
        for (slot, read) in files.iter().zip(reads.iter_mut()) {
            if let Slot::Held(held) = slot {
                *read = held.read_single_append(buf);
            }
        }
        let mut sample = StepSample::empty(timestamp);
        // The last sample's length, plus a slot for the network's entry that
        // `StepProbe` may append; nothing when nothing was missing.
        let spare = usize::from(self.missing_len > 0);
        let missing = Vec::with_capacity(self.missing_len.saturating_add(spare));
        let mut reader = Reader { probe: self, missing, failed: false };

        // cpu
        let cpu_stat = reader.parse(CgroupFile::CpuStat, RawCpuStat::parse);
        let cpu_pressure = reader.pressure(CgroupFile::CpuPressure);
        if cpu_stat.is_some() || cpu_pressure.is_some() {
            let raw = cpu_stat.unwrap_or_default();
            sample.cpu_stat = Some(CpuStat {
                usage_nanos: nanos(raw.usage_usec),
                user_nanos: nanos(raw.user_usec),
                system_nanos: nanos(raw.system_usec),
                nr_periods: raw.nr_periods.and_then(|v| u32::try_from(v).ok()),
                nr_throttled: raw.nr_throttled.and_then(|v| u32::try_from(v).ok()),
                throttled_nanos: nanos(raw.throttled_usec),
                pressure: cpu_pressure,
            });
            if cpu_stat.is_some() && raw.nr_periods.is_none() {
                reader.note_cpu_bandwidth_absent();
            }
        }
        if let Some(raw) = cpu_stat {
            sample.stepmon.nice_nanos = nanos(raw.nice_usec);
            sample.stepmon.nr_bursts = raw.nr_bursts;
            sample.stepmon.burst_nanos = nanos(raw.burst_usec);
        }
        if let Some(max) = reader.parse(CgroupFile::CpuMax, CpuMax::parse) {
            sample.stepmon.cpu_max_quota_usec = Some(limit(max.quota_usec));
            sample.stepmon.cpu_max_period_usec = Some(max.period_usec);
        }

        // memory
        // Filled in place: the parsed file is 1,152 bytes, and moving it
        // out of the parser cost more than the copy of the fields we keep.
        let mut raw_memory = RawMemoryStat::default();
        let memory_stat =
            reader.parse(CgroupFile::MemoryStat, |bytes| raw_memory.parse_into(bytes)).map(|()| &raw_memory);
        let events = reader.parse(CgroupFile::MemoryEvents, MemoryEvents::parse);
        let peak = reader.parse(CgroupFile::MemoryPeak, single::parse_u64);
        let swap = reader.parse(CgroupFile::MemorySwapCurrent, single::parse_u64);
        let memory_pressure = reader.pressure(CgroupFile::MemoryPressure);
        sample.stepmon.memory_current = reader.parse(CgroupFile::MemoryCurrent, single::parse_u64);
        sample.stepmon.memory_swap_peak = reader.parse(CgroupFile::MemorySwapPeak, single::parse_u64);
        sample.stepmon.memory_max = reader.parse(CgroupFile::MemoryMax, Limit::parse).map(limit);
        sample.stepmon.memory_high = reader.parse(CgroupFile::MemoryHigh, Limit::parse).map(limit);
        // The object is there when any of its files is (the model's rule),
        // `memory.swap.current` included.
        if memory_stat.is_some() || memory_pressure.is_some() || events.is_some() || peak.is_some() || swap.is_some() {
            let no_memory_stat = RawMemoryStat::default();
            let m = memory_stat.unwrap_or(&no_memory_stat);
            let e = events.unwrap_or_default();
            sample.memory_stat = Some(MemoryStat {
                swap_bytes: swap,
                anon: m.anon,
                file: m.file,
                kernel: m.kernel,
                kernel_stack: m.kernel_stack,
                page_tables: m.pagetables,
                sock: m.sock,
                vmalloc: m.vmalloc,
                shmem: m.shmem,
                file_mapped: m.file_mapped,
                file_dirty: m.file_dirty,
                file_writeback: m.file_writeback,
                slab: m.slab,
                pgscan: m.pgscan,
                pgsteal: m.pgsteal,
                pgfault: m.pgfault,
                pgmajfault: m.pgmajfault,
                peak,
                low_events: e.low.unwrap_or(0),
                high_events: e.high.unwrap_or(0),
                max_events: e.max.unwrap_or(0),
                oom_events: e.oom.unwrap_or(0),
                oom_kill_events: e.oom_kill.unwrap_or(0),
                pressure: memory_pressure,
            });
        }
        sample.stepmon.memory_events = events.map(|e| MemoryEventsJson {
            low: e.low,
            high: e.high,
            max: e.max,
            oom: e.oom,
            oom_kill: e.oom_kill,
            oom_group_kill: e.oom_group_kill,
            sock_throttled: e.sock_throttled,
        });

        // io
        let io_pressure = reader.pressure(CgroupFile::IoPressure);
        let io = reader.with(CgroupFile::IoStat, |bytes| {
            let mut devices = Vec::new();
            // One pass: the totals and every device.
            let io = RawIoStat::parse_with(bytes, |d| {
                devices.push(IoDevice {
                    device: crate::model::device(d.device),
                    read_bytes: d.rbytes,
                    write_bytes: d.wbytes,
                    discard_bytes: d.dbytes,
                    read_ios: d.rios,
                    write_ios: d.wios,
                    discard_ios: d.dios,
                    cost_usage_usec: d.cost_usage_usec,
                });
            })?;
            Ok((io.totals(), devices))
        });
        if io.is_some() || io_pressure.is_some() {
            let totals = io.as_ref().map(|(t, _)| *t).unwrap_or_default();
            sample.io_stat = Some(IoStat {
                read_bytes: totals.rbytes,
                write_bytes: totals.wbytes,
                discard_bytes: totals.dbytes,
                read_ios: totals.rios,
                write_ios: totals.wios,
                discard_ios: totals.dios,
                pressure: io_pressure,
            });
        }
        if let Some((_, devices)) = io {
            sample.stepmon.io_devices = devices;
        }

        // pids
        sample.pids_stat = PidsStat { current: reader.parse(CgroupFile::PidsCurrent, single::parse_u64) };
        sample.stepmon.pids_peak = reader.parse(CgroupFile::PidsPeak, single::parse_u64);
        sample.stepmon.pids_max = reader.parse(CgroupFile::PidsMax, Limit::parse).map(limit);

        // core
        sample.stepmon.irq_pressure = reader.pressure(CgroupFile::IrqPressure);
        sample.stepmon.populated =
            reader.parse(CgroupFile::CgroupEvents, CgroupEvents::parse).and_then(|e| e.populated);

        let missing = reader.missing;
        self.missing_len = missing.len();
        sample.stepmon.missing = missing;
        sample
    }
}

impl Probe for CgroupProbe {
    type Sample = StepSample;

    fn sample(&mut self, tick: Tick) -> StepSample {
        self.read(tick.wall)
    }
}

/// One sample's reads: collects a [`Missing`] entry per absent field, once
/// per field.
struct Reader<'p> {
    probe: &'p mut CgroupProbe,
    missing: Vec<Missing>,
    /// A read or parse failed in this sample (its entry is in `missing`).
    failed: bool,
}

impl Reader<'_> {
    /// Adds a copy of an entry made at open unless its field already has
    /// one. Without a failure earlier in this sample only an earlier
    /// unavailable file can have named the field (`repeat`; the cpu
    /// bandwidth fields are named by no file), so the list is not searched.
    fn note_fixed(missing: &mut Vec<Missing>, failed: bool, fixed: &Fixed) {
        if fixed.repeat || (failed && missing.iter().any(|m| m.field == fixed.entry.field)) {
            return;
        }
        missing.push(fixed.entry.clone());
    }

    fn has(&self, field: &str) -> bool {
        self.missing.iter().any(|m| m.field == field)
    }

    fn note_cpu_bandwidth_absent(&mut self) {
        for entry in &self.probe.cpu_bandwidth_absent {
            if !self.has(&entry.field) {
                self.missing.push(entry.clone());
            }
        }
    }

    /// Reads `file` and hands its bytes to `parse`; `None` (and a missing
    /// entry) if the file is absent, unreadable or malformed.
    fn with<T>(&mut self, file: CgroupFile, parse: impl FnOnce(&[u8]) -> Result<T, ParseError>) -> Option<T> {
        let CgroupProbe { files, buf, reads, .. } = &mut *self.probe;
        let index = file.index();
        if let Slot::Unavailable(fixed) = files.get(index)? {
            Reader::note_fixed(&mut self.missing, self.failed, fixed);
            return None;
        }
        // Read by `CgroupProbe::read` before any parsing.
        let failure = match core::mem::replace(reads.get_mut(index)?, Ok(0..0)) {
            Ok(range) => match parse(buf.get(range)?) {
                Ok(value) => return Some(value),
                Err(error) => Failure::Parse(error),
            },
            Err(error) => Failure::Read(error),
        };
        // Described only when kept (the first failure of a field).
        let info = file.info();
        if !self.has(info.field) {
            let (kind, reason) = match failure {
                Failure::Parse(error) => (MissingKind::Parse, format!("cannot parse {}: {error}", info.name)),
                Failure::Read(error) => read_failure(info.name, &error),
            };
            self.missing.push(Missing::new(info.field, info.name, kind, reason));
            self.failed = true;
        }
        None
    }

    fn parse<T>(&mut self, file: CgroupFile, parse: impl FnOnce(&[u8]) -> Result<T, ParseError>) -> Option<T> {
        self.with(file, parse)
    }

    fn pressure(&mut self, file: CgroupFile) -> Option<PressureJson> {
        self.with(file, |bytes| Pressure::parse(bytes).map(|p| stepmon_sysusage::model::pressure(&p)))
    }
}

/// Why a held file gave no value in this sample.
enum Failure {
    Read(io::Error),
    Parse(ParseError),
}

/// Why a file opened at open time could not be read now.
fn read_failure(name: &str, error: &io::Error) -> (MissingKind, String) {
    if is_gone(error) {
        (MissingKind::CgroupRemoved, format!("{name} could not be read: the cgroup was removed ({error})"))
    } else if is_unsupported(error) && name.ends_with(".pressure") {
        (
            MissingKind::PsiDisabled,
            format!("reading {name} fails with EOPNOTSUPP: pressure stall information is disabled"),
        )
    } else {
        (MissingKind::Io, format!("cannot read {name}: {error}"))
    }
}
