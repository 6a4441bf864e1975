//! The step's cgroups in the cgroup v1 hierarchies (hybrid and v1-only
//! hosts), read into the same [`StepSample`] fields as cgroup v2, where
//! the meaning is the same
//! (<https://docs.kernel.org/admin-guide/cgroup-v1/index.html>):
//!
//! | sample field | v1 file |
//! |---|---|
//! | `cpuStat.usageNanos` | `cpuacct.usage` (ns) |
//! | `cpuStat.userNanos`, `systemNanos` | `cpuacct.stat` (`USER_HZ` ticks: 10 ms steps) |
//! | `cpuStat.nrPeriods`, `nrThrottled`, `throttledNanos` | `cpu.stat` (`throttled_time` ns) |
//! | `stepmon.cpuMaxQuotaUsec`, `cpuMaxPeriodUsec` | `cpu.cfs_quota_us` (-1: `max`), `cpu.cfs_period_us` |
//! | `memoryStat.anon` | `memory.stat` `total_rss` (anonymous and swap cache, no shmem) |
//! | `memoryStat.file` | `total_cache` (page cache, shmem included, as v2's `file`) |
//! | `memoryStat.shmem`, `fileMapped`, `fileDirty`, `fileWriteback`, `pgfault`, `pgmajfault` | `total_shmem`, `total_mapped_file`, `total_dirty`, `total_writeback`, `total_pgfault`, `total_pgmajfault` |
//! | `memoryStat.swapBytes` | `total_swap` (with swap accounting) |
//! | `memoryStat.peak` | `memory.max_usage_in_bytes` |
//! | `stepmon.memoryCurrent` | `memory.usage_in_bytes` |
//! | `stepmon.memoryMax` | `memory.limit_in_bytes` |
//! | `stepmon.memoryEvents.oomKill`, `memoryStat.oomKillEvents` | `memory.oom_control` `oom_kill` (4.13+) |
//! | `stepmon.memoryEvents.max`, `memoryStat.maxEvents` | `memory.failcnt` (charges that hit the limit) |
//! | `pidsStat.current`, `stepmon.pidsPeak`, `stepmon.pidsMax`, `stepmon.pidsEvents` | `pids.current`, `pids.peak`, `pids.max`, `pids.events` |
//! | `ioStat` bytes and IOs | `blkio.throttle.io_service_bytes_recursive`, `io_serviced_recursive` |
//!
//! Not in v1: `kernel`, `kernelStack`, `pageTables`, `sock`, `slab`,
//! `vmalloc` (v2's `memory.stat` breakdown), `memory.events` `high`/`low`/
//! `oom_group_kill`, PSI per cgroup. blk-throttle's counters
//! (`blkio.throttle.*`) count only on devices with a throttle rule (seen on
//! Debian's 6.1 and on 6.18); stepmon never sets rules, so its runner gives
//! no blkio directory and the step's IO comes from its process tree. The
//! mapping is kept for callers whose devices have rules.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use stepmon_cgroupfs_parse::v1::{
    BlkioStat, CpuStatV1, CpuacctStat, MemoryStatV1, OomControl, cfs_quota_us, limit_in_bytes,
};
use stepmon_cgroupfs_parse::{Limit, PidsEvents, single};
use stepmon_fdread::{Dir, HeldFile};

use stepmon_model::missing::{Missing, MissingKind};
use stepmon_model::sample::{MemoryEventsJson, PidsEventsJson, StepSample};

/// `USER_HZ` of `cpuacct.stat`: 100 on every Linux architecture's ABI.
const USER_HZ: u64 = 100;

/// The step's directory in each v1 hierarchy (`None` where it has none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CgroupV1Dirs {
    /// In the memory hierarchy.
    pub memory: Option<PathBuf>,
    /// In the pids hierarchy.
    pub pids: Option<PathBuf>,
    /// In the cpu hierarchy (throttling, quota).
    pub cpu: Option<PathBuf>,
    /// In the cpuacct hierarchy (usage).
    pub cpuacct: Option<PathBuf>,
    /// In the blkio hierarchy; `None` also where its counters do not count
    /// (Linux 6.10+ without throttle rules).
    pub blkio: Option<PathBuf>,
}

impl CgroupV1Dirs {
    /// Whether no directory is set.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.memory.is_none()
            && self.pids.is_none()
            && self.cpu.is_none()
            && self.cpuacct.is_none()
            && self.blkio.is_none()
    }
}

/// The files of one sample.
#[derive(Debug)]
struct Files {
    memory_stat: Option<HeldFile>,
    memory_usage: Option<HeldFile>,
    memory_max_usage: Option<HeldFile>,
    memory_limit: Option<HeldFile>,
    memory_failcnt: Option<HeldFile>,
    memory_oom: Option<HeldFile>,
    pids_current: Option<HeldFile>,
    pids_peak: Option<HeldFile>,
    pids_max: Option<HeldFile>,
    pids_events: Option<HeldFile>,
    cpuacct_usage: Option<HeldFile>,
    cpuacct_stat: Option<HeldFile>,
    cpu_stat: Option<HeldFile>,
    cpu_quota: Option<HeldFile>,
    cpu_period: Option<HeldFile>,
    blkio_bytes: Option<HeldFile>,
    blkio_ios: Option<HeldFile>,
}

/// Opens a hierarchy's directory once: its files are opened relative to it,
/// not each by its whole path (a v1 step's memory directory lies 5 levels
/// deep; every path walked again was a lookup per level).
fn open_dir(dir: Option<&Path>) -> Option<Dir> {
    Dir::open(dir?).ok()
}

fn open(dir: Option<&Dir>, name: &str) -> Option<HeldFile> {
    HeldFile::open_at(dir?, name).ok()
}

/// Reads the step's v1 cgroups into its samples.
#[derive(Debug)]
pub struct CgroupV1Probe {
    dirs: CgroupV1Dirs,
    files: Files,
    buf: Vec<u8>,
}

impl CgroupV1Probe {
    /// Opens the files of `dirs` (a file that cannot be opened leaves its
    /// field absent, with a reason, in every sample).
    #[must_use]
    pub fn open(dirs: CgroupV1Dirs) -> CgroupV1Probe {
        let (m, p, c, a, b) = (
            open_dir(dirs.memory.as_deref()),
            open_dir(dirs.pids.as_deref()),
            open_dir(dirs.cpu.as_deref()),
            open_dir(dirs.cpuacct.as_deref()),
            open_dir(dirs.blkio.as_deref()),
        );
        let (m, p, c, a, b) = (m.as_ref(), p.as_ref(), c.as_ref(), a.as_ref(), b.as_ref());
        let files = Files {
            memory_stat: open(m, "memory.stat"),
            memory_usage: open(m, "memory.usage_in_bytes"),
            memory_max_usage: open(m, "memory.max_usage_in_bytes"),
            memory_limit: open(m, "memory.limit_in_bytes"),
            memory_failcnt: open(m, "memory.failcnt"),
            memory_oom: open(m, "memory.oom_control"),
            pids_current: open(p, "pids.current"),
            pids_peak: open(p, "pids.peak"),
            pids_max: open(p, "pids.max"),
            pids_events: open(p, "pids.events"),
            cpuacct_usage: open(a, "cpuacct.usage"),
            cpuacct_stat: open(a, "cpuacct.stat"),
            cpu_stat: open(c, "cpu.stat"),
            cpu_quota: open(c, "cpu.cfs_quota_us"),
            cpu_period: open(c, "cpu.cfs_period_us"),
            blkio_bytes: open(b, "blkio.throttle.io_service_bytes_recursive"),
            blkio_ios: open(b, "blkio.throttle.io_serviced_recursive"),
        };
        CgroupV1Probe { dirs, files, buf: Vec::with_capacity(4096) }
    }

    /// The directories read.
    #[must_use]
    pub fn dirs(&self) -> &CgroupV1Dirs {
        &self.dirs
    }

    /// Reads `file` and parses it; a missing entry for `field` when it fails.
    fn read<T>(
        buf: &mut Vec<u8>,
        missing: &mut Vec<Missing>,
        file: Option<&HeldFile>,
        (field, name): (&'static str, &'static str),
        parse: impl FnOnce(&[u8]) -> Result<T, stepmon_cgroupfs_parse::ParseError>,
    ) -> Option<T> {
        let Some(file) = file else {
            missing.push(Missing::new(
                field,
                name,
                MissingKind::Absent,
                format!("{name} does not exist in the step's cgroup v1"),
            ));
            return None;
        };
        // Every file read here is one `seq_show` per read (cgroup v1's
        // files go through `cgroup_seqfile_show`, kernel/cgroup/cgroup.c;
        // only `tasks` and `cgroup.procs` iterate), so a short read is the
        // end: one `pread` each instead of two.
        match file.read_single(buf) {
            Ok(bytes) => match parse(bytes) {
                Ok(value) => Some(value),
                Err(e) => {
                    missing.push(Missing::new(field, name, MissingKind::Parse, format!("{name}: {e}")));
                    None
                }
            },
            Err(e) => {
                missing.push(Missing::new(field, name, MissingKind::Io, format!("cannot read {name}: {e}")));
                None
            }
        }
    }

    /// Fills the fields of `sample` that the step's cgroup v2 left absent
    /// (its entries for them in `missing` are replaced by this probe's).
    pub fn fill(&mut self, sample: &mut StepSample) {
        let mut missing = Vec::new();
        let buf = &mut self.buf;
        let f = &self.files;
        if self.dirs.memory.is_some() && sample.memory_stat.is_none_or(|m| m.anon.is_none()) {
            sample
                .stepmon
                .missing
                .retain(|m| !m.field.starts_with("memoryStat") && !m.field.starts_with("stepmon.memory"));
            let stat = Self::read(
                buf,
                &mut missing,
                f.memory_stat.as_ref(),
                ("memoryStat", "memory.stat"),
                MemoryStatV1::parse,
            );
            let peak = Self::read(
                buf,
                &mut missing,
                f.memory_max_usage.as_ref(),
                ("memoryStat.peak", "memory.max_usage_in_bytes"),
                single::parse_u64,
            );
            let mut memory = sample.memory_stat.unwrap_or_default();
            if let Some(s) = stat {
                memory.anon = s.total_rss;
                memory.file = s.total_cache;
                memory.shmem = s.total_shmem;
                memory.file_mapped = s.total_mapped_file;
                memory.file_dirty = s.total_dirty;
                memory.file_writeback = s.total_writeback;
                memory.pgfault = s.total_pgfault;
                memory.pgmajfault = s.total_pgmajfault;
                memory.swap_bytes = s.total_swap;
            }
            memory.peak = peak;
            sample.memory_stat = Some(memory);
            sample.stepmon.memory_current = Self::read(
                buf,
                &mut missing,
                f.memory_usage.as_ref(),
                ("stepmon.memoryCurrent", "memory.usage_in_bytes"),
                single::parse_u64,
            );
            sample.stepmon.memory_max = Self::read(
                buf,
                &mut missing,
                f.memory_limit.as_ref(),
                ("stepmon.memoryMax", "memory.limit_in_bytes"),
                limit_in_bytes,
            )
            .map(crate::model::limit_json);
            let oom = Self::read(
                buf,
                &mut missing,
                f.memory_oom.as_ref(),
                ("stepmon.memoryEvents", "memory.oom_control"),
                OomControl::parse,
            );
            let failcnt = Self::read(
                buf,
                &mut missing,
                f.memory_failcnt.as_ref(),
                ("stepmon.memoryEvents", "memory.failcnt"),
                single::parse_u64,
            );
            sample.stepmon.memory_events =
                Some(MemoryEventsJson { oom_kill: oom.and_then(|o| o.oom_kill), max: failcnt, ..Default::default() });
            // BuildKit's own counters of the same meaning (omitted at 0).
            if let Some(memory) = sample.memory_stat.as_mut() {
                memory.oom_kill_events = oom.and_then(|o| o.oom_kill).unwrap_or(0);
                memory.max_events = failcnt.unwrap_or(0);
            }
            if oom.is_some_and(|o| o.oom_kill.is_none()) {
                missing.push(Missing::new(
                    "stepmon.memoryEvents.oomKill",
                    "memory.oom_control",
                    MissingKind::KernelTooOld,
                    "memory.oom_control has no oom_kill count before Linux 4.13",
                ));
            }
        }
        if self.dirs.pids.is_some() && sample.pids_stat.current.is_none() {
            sample.stepmon.missing.retain(|m| !m.field.starts_with("pidsStat") && !m.field.starts_with("stepmon.pids"));
            sample.pids_stat.current = Self::read(
                buf,
                &mut missing,
                f.pids_current.as_ref(),
                ("pidsStat.current", "pids.current"),
                single::parse_u64,
            );
            sample.stepmon.pids_peak = Self::read(
                buf,
                &mut missing,
                f.pids_peak.as_ref(),
                ("stepmon.pidsPeak", "pids.peak"),
                single::parse_u64,
            );
            sample.stepmon.pids_max =
                Self::read(buf, &mut missing, f.pids_max.as_ref(), ("stepmon.pidsMax", "pids.max"), Limit::parse)
                    .map(crate::model::limit_json);
            sample.stepmon.pids_events = Self::read(
                buf,
                &mut missing,
                f.pids_events.as_ref(),
                ("stepmon.pidsEvents", "pids.events"),
                PidsEvents::parse,
            )
            .map(|e| PidsEventsJson { max: e.max });
        }
        let mut cpu = sample.cpu_stat.unwrap_or_default();
        let mut touched = false;
        if self.dirs.cpuacct.is_some() && cpu.usage_nanos.is_none() {
            sample.stepmon.missing.retain(|m| {
                !matches!(&*m.field, "cpuStat" | "cpuStat.usageNanos" | "cpuStat.userNanos" | "cpuStat.systemNanos")
            });
            cpu.usage_nanos = Self::read(
                buf,
                &mut missing,
                f.cpuacct_usage.as_ref(),
                ("cpuStat.usageNanos", "cpuacct.usage"),
                single::parse_u64,
            );
            let ticks = Self::read(
                buf,
                &mut missing,
                f.cpuacct_stat.as_ref(),
                ("cpuStat.userNanos", "cpuacct.stat"),
                CpuacctStat::parse,
            );
            let nanos = |t: Option<u64>| t.map(|t| t.saturating_mul(1_000_000_000 / USER_HZ));
            cpu.user_nanos = nanos(ticks.and_then(|t| t.user));
            cpu.system_nanos = nanos(ticks.and_then(|t| t.system));
            touched = true;
        }
        if self.dirs.cpu.is_some() && cpu.nr_periods.is_none() {
            sample.stepmon.missing.retain(|m| {
                !matches!(&*m.field, "cpuStat.nrPeriods" | "cpuStat.nrThrottled" | "cpuStat.throttledNanos")
                    && !m.field.starts_with("stepmon.cpuMax")
            });
            if let Some(stat) = Self::read(
                buf,
                &mut missing,
                f.cpu_stat.as_ref(),
                ("cpuStat.nrThrottled", "cpu.stat"),
                CpuStatV1::parse,
            ) {
                cpu.nr_periods = stat.nr_periods.and_then(|n| u32::try_from(n).ok());
                cpu.nr_throttled = stat.nr_throttled.and_then(|n| u32::try_from(n).ok());
                cpu.throttled_nanos = stat.throttled_time;
            }
            sample.stepmon.cpu_max_quota_usec = Self::read(
                buf,
                &mut missing,
                f.cpu_quota.as_ref(),
                ("stepmon.cpuMaxQuotaUsec", "cpu.cfs_quota_us"),
                cfs_quota_us,
            )
            .map(crate::model::limit_json);
            sample.stepmon.cpu_max_period_usec = Self::read(
                buf,
                &mut missing,
                f.cpu_period.as_ref(),
                ("stepmon.cpuMaxPeriodUsec", "cpu.cfs_period_us"),
                single::parse_u64,
            );
            touched = true;
        }
        if touched {
            sample.cpu_stat = Some(cpu);
        }
        if self.dirs.blkio.is_some() && sample.io_stat.is_none_or(|i| i.read_bytes.is_none()) {
            sample.stepmon.missing.retain(|m| !m.field.starts_with("ioStat"));
            let bytes = Self::read(
                buf,
                &mut missing,
                f.blkio_bytes.as_ref(),
                ("ioStat", "blkio.throttle.io_service_bytes_recursive"),
                |b| BlkioStat::parse(b).map(|s| s.totals()),
            );
            let ios = Self::read(
                buf,
                &mut missing,
                f.blkio_ios.as_ref(),
                ("ioStat.readIOs", "blkio.throttle.io_serviced_recursive"),
                |b| BlkioStat::parse(b).map(|s| s.totals()),
            );
            let mut io = sample.io_stat.unwrap_or_default();
            io.read_bytes = bytes.and_then(|t| t.read).or(bytes.map(|_| 0));
            io.write_bytes = bytes.and_then(|t| t.write).or(bytes.map(|_| 0));
            io.discard_bytes = bytes.and_then(|t| t.discard);
            io.read_ios = ios.and_then(|t| t.read).or(ios.map(|_| 0));
            io.write_ios = ios.and_then(|t| t.write).or(ios.map(|_| 0));
            io.discard_ios = ios.and_then(|t| t.discard);
            sample.io_stat = Some(io);
        }
        sample.stepmon.missing.extend(missing);
    }
}

/// A sample of the step's v1 cgroups alone (a step with no cgroup v2).
#[must_use]
pub fn sample_only(probe: &mut CgroupV1Probe, timestamp: Timestamp) -> StepSample {
    let mut sample = StepSample::empty(timestamp);
    probe.fill(&mut sample);
    sample
}
