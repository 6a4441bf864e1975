//! A step in brief: what a job record's end line keeps of a step that ran
//! ([`StepBrief`], the `brief` of a [`StepEnd`](crate::job::StepEnd)) in
//! place of its whole run document.
//!
//! A job's views — its table, its verdicts, its timeline, each step's charts
//! — read of a step its summary (totals, peaks, stall shares), the sources
//! of its numbers, stepmon's own cost, its limits, its series (CPU, memory,
//! IO, stall, tasks) and the machine's (CPU busy and stall, memory, online
//! CPUs). That is what a brief keeps: the summary computed from the whole
//! document as a report computes it, the series as columns of numbers, at
//! most [`MAX_POINTS`] samples, the aggregates of the commands a report's
//! `-j` advice weighs ([`StepBrief::workers`]) and its largest process
//! (what the memory verdict names). What it leaves out — the per-sample
//! fields no view of a job draws and the reasons repeated in every sample,
//! the other per-process records, the cgroup paths, the host, the verdicts
//! and advice (a report judges them again) — is in the step's own document
//! (`stepmon run --output`). A `true` step's brief is about 1.5 KB where
//! its document is 15 KB.
//!
//! [`StepBrief::to_document`] makes the brief a run document again, holding
//! what the brief holds, for the views that read documents.
//!
//! ```
//! use stepmon_model::brief::StepBrief;
//! use stepmon_model::document::RunDocument;
//!
//! let json = r#"{"resourceUsage": {"samples": [
//!     {"timestamp": "2026-12-04T10:00:00Z", "cpuStat": {"usageNanos": 0}, "pidsStat": {"current": 1}},
//!     {"timestamp": "2026-12-04T10:00:02Z", "cpuStat": {"usageNanos": 1500000000}, "pidsStat": {"current": 3}}]},
//!   "stepmon": {"command": ["make"], "exitCode": 0,
//!               "start": "2026-12-04T10:00:00Z", "end": "2026-12-04T10:00:02Z"}}"#;
//! let document: RunDocument = serde_json::from_str(json)?;
//! let brief = StepBrief::of(&document).expect("a run's document");
//! assert_eq!((brief.summary.wall_seconds, brief.summary.cpu.usage_seconds), (Some(2.0), Some(1.5)));
//! assert_eq!(brief.series.len(), 2);
//! let again = brief.to_document();
//! let samples = &again.resource_usage.samples;
//! assert_eq!(samples[1].cpu_stat.and_then(|c| c.usage_nanos), Some(1_500_000_000));
//! assert_eq!(samples[1].pids_stat.current, Some(3));
//! # Ok::<(), serde_json::Error>(())
//! ```

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::document::{Collector, RunDocument, RunInfo};
use crate::missing::{Missing, MissingKind};
use crate::sample::{CpuStat, IoStat, LimitJson, MemoryStat, SamplesExt, StepSample, StepSampleExt, UsageSummary};
use crate::source::{EnclosingCgroup, Sources};
use crate::system::{PerCpuStat, PressureJson, PressureValues, SysCPUStat, SysCpuDeltaExt, SysMemoryStat, SysSample};
use crate::verdict::PeakProcess;

/// The most samples a brief keeps of one series: a longer one is thinned
/// to this many, evenly, its first and last kept ([`Series::thinned_from`]
/// says how many there were). The runner's schedule keeps a step's samples
/// to a few dozen already (it thins them as the step runs), so a series is
/// thinned here only when it was recorded otherwise.
pub const MAX_POINTS: usize = 120;

/// A step that ran, in brief: its summary, sources, stepmon's cost, and
/// its series and the machine's as columns. Its name, command and labels
/// are its start line's, its end and exit status its end line's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StepBrief {
    /// When the step started: the origin of every series' times.
    pub start: Timestamp,
    /// The signal that ended it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Its totals, peaks and shares over its wall time, computed from its
    /// whole document as a report computes them.
    #[serde(default)]
    pub summary: UsageSummary,
    /// What stepmon itself cost while measuring it.
    #[serde(default)]
    pub collector: Collector,
    /// Where each field group came from. `covers` is kept only for sources
    /// that are not the step's alone, where the verdicts say it.
    #[serde(default, skip_serializing_if = "Sources::is_empty")]
    pub sources: Sources,
    /// What was not measured, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_measured: Vec<String>,
    /// The run's warnings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The step's own samples.
    #[serde(default, skip_serializing_if = "Series::is_empty")]
    pub series: Series,
    /// The enclosing cgroup's samples, when they were taken (the step had
    /// no cgroup of its own, or its own lacked a controller).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enclosing: Option<Series>,
    /// The machine's samples.
    #[serde(default, skip_serializing_if = "Machine::is_empty")]
    pub machine: Machine,
    /// The step's parallel workers, when it had any: its per-process
    /// numbers cut to the commands that ran
    /// [`ParallelismAdvice::MIN_INSTANCES`](crate::advice::ParallelismAdvice::MIN_INSTANCES)
    /// times or more (their aggregates: counts, peaks, overlap), no process
    /// listed, at most [`MAX_WORKER_COMMANDS`] (those with the most CPU
    /// time) — what a report needs to advise `-j` on the job's steps as it
    /// does on a step's document, a few hundred bytes a command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<crate::processes::Processes>,
    /// Its process with the largest peak RSS, of the document's
    /// per-process records (which a brief leaves out): what the memory
    /// verdict names ("largest process cc1plus (pid 8841, foo.cpp)
    /// 1.2 GiB"). Written as an array, `[command, pid, peak RSS bytes]`
    /// and the label when known: some 40 bytes where a short step's whole
    /// record is to stay within 2 KB.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "compact_peak")]
    pub largest_process: Option<PeakProcess>,
}

/// The most commands [`StepBrief::workers`] keeps (about 400 bytes each).
pub const MAX_WORKER_COMMANDS: usize = 8;

/// `processes` cut to the commands the parallelism advice weighs (run
/// [`ParallelismAdvice::MIN_INSTANCES`](crate::advice::ParallelismAdvice::MIN_INSTANCES)
/// times or more), without the processes themselves; `None` when no command
/// ran that often (nothing to advise on).
fn workers_in_brief(processes: &crate::processes::Processes) -> Option<crate::processes::Processes> {
    // `commands` is most CPU first: the heaviest workers are kept.
    let commands: Vec<_> = processes
        .commands
        .iter()
        .filter(|c| c.count >= crate::advice::ParallelismAdvice::MIN_INSTANCES)
        .take(MAX_WORKER_COMMANDS)
        .cloned()
        .collect();
    if commands.is_empty() {
        return None;
    }
    Some(crate::processes::Processes {
        commands,
        top_by_cpu: Vec::new(),
        top_by_peak_rss: Vec::new(),
        top_by_io: Vec::new(),
        all: Vec::new(),
        reaped: None,
        ..processes.clone()
    })
}

/// A step's (or its enclosing cgroup's) samples as columns: the values the
/// views draw, one per sample; a column no sample has is left out.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Series {
    /// How many samples the document had, when it had more than
    /// [`MAX_POINTS`] (these are a thinned selection of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinned_from: Option<usize>,
    /// Each sample's time, ns after [`StepBrief::start`].
    #[serde(default)]
    pub at: Vec<i64>,
    /// `cpuStat.usageNanos`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_usage_nanos: Vec<Option<u64>>,
    /// `stepmon.memoryCurrent`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_current: Vec<Option<u64>>,
    /// `memoryStat.anon`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_anon: Vec<Option<u64>>,
    /// `memoryStat.file`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_file: Vec<Option<u64>>,
    /// `ioStat.readBytes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io_read_bytes: Vec<Option<u64>>,
    /// `ioStat.writeBytes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io_write_bytes: Vec<Option<u64>>,
    /// `cpuStat.pressure.some.total`, µs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_some_micros: Vec<Option<u64>>,
    /// `memoryStat.pressure.some.total`, µs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_some_micros: Vec<Option<u64>>,
    /// `ioStat.pressure.some.total`, µs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io_some_micros: Vec<Option<u64>>,
    /// `pidsStat.current`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pids: Vec<Option<u64>>,
    /// `stepmon.memoryMax` of the last sample that read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_max: Option<LimitJson>,
    /// `stepmon.cpuMaxQuotaUsec` of the last sample that read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_max_quota_usec: Option<LimitJson>,
    /// `stepmon.cpuMaxPeriodUsec` of the last sample that read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_max_period_usec: Option<u64>,
}

/// The machine's samples over the step as columns (`sysUsage`), and what
/// it had.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Machine {
    /// Its online CPUs (the CPUs of the step's `/proc/stat` delta, else the
    /// most of a machine sample).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<usize>,
    /// `MemTotal`, kB (the largest a sample read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_total_kb: Option<u64>,
    /// How many samples the document had, when it had more than
    /// [`MAX_POINTS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinned_from: Option<usize>,
    /// Each sample's time, ns after [`StepBrief::start`].
    #[serde(default)]
    pub at: Vec<i64>,
    /// The `/proc/stat` CPU columns other than idle and iowait, summed, s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_busy_seconds: Vec<Option<f64>>,
    /// `idle` + `iowait`, s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_idle_seconds: Vec<Option<f64>>,
    /// `/proc/pressure/cpu` `some` total, µs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_some_micros: Vec<Option<u64>>,
    /// `MemAvailable`, kB.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory_available_kb: Vec<Option<u64>>,
}

impl Series {
    /// How many samples it holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.at.len()
    }

    /// Whether it holds none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.at.is_empty()
    }
}

impl Machine {
    /// Whether it holds nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.at.is_empty() && self.cpus.is_none() && self.memory_total_kb.is_none()
    }
}

impl StepBrief {
    /// The brief of a run's `document`; `None` when it is no run's document
    /// as the runner writes one (no `stepmon` part with the run's start and
    /// end), which a job record keeps whole.
    ///
    /// Its summary is the report's of the whole document: over the wall
    /// time the run measured (`stepmon.summary.wallSeconds`, else its end
    /// less its start), by [`crate::summary::summary`].
    #[must_use]
    pub fn of(document: &RunDocument) -> Option<StepBrief> {
        let run = document.stepmon.as_ref()?;
        let (start, end) = (run.start?, run.end?);
        let wall = run
            .summary
            .wall_seconds
            .filter(|w| *w > 0.0)
            .or_else(|| Some(end.duration_since(start).as_secs_f64().max(0.0)));
        let series = Series::of(&document.resource_usage.samples, start);
        let enclosing = run.enclosing_cgroup.as_ref().map(|e| Series::of(&e.samples, start));
        Some(StepBrief {
            start,
            signal: run.signal,
            summary: crate::summary::summary(document, wall),
            collector: run.collector.clone(),
            sources: sources_in_brief(&run.sources),
            not_measured: run.not_measured.clone(),
            warnings: run.warnings.clone(),
            series,
            enclosing,
            machine: Machine::of(document, start),
            workers: run.processes.as_ref().and_then(workers_in_brief),
            largest_process: run.processes.as_ref().and_then(PeakProcess::of),
        })
    }

    /// A run document holding what the brief holds: the run's start,
    /// signal, summary, collector, sources and reasons, the series as
    /// samples (the values kept, no others), the machine's samples, and its
    /// online CPUs as the entries of the step's per-CPU delta (their times
    /// not kept, which its `missing` says). Its command, name, labels, exit
    /// code and end are the job record's start and end lines'.
    #[must_use]
    pub fn to_document(&self) -> RunDocument {
        let mut run = RunInfo {
            signal: self.signal,
            start: Some(self.start),
            collector: self.collector.clone(),
            summary: self.summary.clone(),
            sources: self.sources.clone(),
            not_measured: self.not_measured.clone(),
            warnings: self.warnings.clone(),
            processes: self.workers.clone(),
            ..RunInfo::default()
        };
        run.enclosing_cgroup = self
            .enclosing
            .as_ref()
            .map(|e| EnclosingCgroup { samples: e.samples(self.start), ..EnclosingCgroup::default() });
        let mut document = RunDocument { stepmon: Some(run), ..RunDocument::default() };
        document.resource_usage.samples = self.series.samples(self.start);
        document.sys_usage = self.machine.samples(self.start);
        if let Some(cpus) = self.machine.cpus {
            let delta = SysCpuDeltaExt {
                per_cpu: (0..cpus)
                    .map(|cpu| PerCpuStat::new(u32::try_from(cpu).unwrap_or(u32::MAX), &SysCPUStat::default()))
                    .collect(),
                missing: vec![Missing::new(
                    "stepmon.sysCpu.perCpu",
                    "/proc/stat",
                    MissingKind::NotMeasured,
                    "a job record's brief step end keeps how many CPUs were online, not their times \
                     (the step's own run document has them)",
                )],
                ..SysCpuDeltaExt::default()
            };
            document.resource_usage.stepmon = Some(SamplesExt { sys_cpu: Some(delta), missing: Vec::new() });
        }
        document
    }
}

/// [`StepBrief::largest_process`] as `[command, pid, peakRssBytes]`, with
/// its label fourth when it has one.
mod compact_peak {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::verdict::PeakProcess;

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Compact {
        Labelled(String, u32, u64, String),
        Plain(String, u32, u64),
    }

    #[allow(clippy::ref_option)] // serde's `with` passes the field by reference
    pub(super) fn serialize<S: Serializer>(process: &Option<PeakProcess>, serializer: S) -> Result<S::Ok, S::Error> {
        process
            .as_ref()
            .map(|p| match &p.label {
                Some(label) => Compact::Labelled(p.command.clone(), p.pid, p.peak_rss_bytes, label.clone()),
                None => Compact::Plain(p.command.clone(), p.pid, p.peak_rss_bytes),
            })
            .serialize(serializer)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<PeakProcess>, D::Error> {
        Ok(Option::<Compact>::deserialize(deserializer)?.map(|compact| match compact {
            Compact::Labelled(command, pid, peak_rss_bytes, label) => {
                PeakProcess { command, pid, peak_rss_bytes, label: Some(label) }
            }
            Compact::Plain(command, pid, peak_rss_bytes) => PeakProcess { command, pid, peak_rss_bytes, label: None },
        }))
    }
}

/// `sources` with `covers` left out where no view says it: the sources
/// that are the step's alone and exact.
fn sources_in_brief(sources: &Sources) -> Sources {
    let brief = |source: &Option<crate::source::Source>| {
        source.clone().map(|mut s| {
            if s.is_exact_for_step() {
                s.covers.clear();
            }
            s
        })
    };
    Sources {
        cpu: brief(&sources.cpu),
        memory: brief(&sources.memory),
        io: brief(&sources.io),
        pids: brief(&sources.pids),
        pressure: brief(&sources.pressure),
        network: brief(&sources.network),
    }
}

/// The indices of at most [`MAX_POINTS`] of `len` samples, evenly spread,
/// the first and the last among them; `None` when all are kept.
fn thinned(len: usize) -> Option<Vec<usize>> {
    if len <= MAX_POINTS {
        return None;
    }
    let last = len - 1;
    Some((0..MAX_POINTS).map(|k| (k * last + (MAX_POINTS - 1) / 2) / (MAX_POINTS - 1)).collect())
}

/// `t` as ns after `start` (saturated at i64's bounds: 292 years).
fn nanos_after(start: Timestamp, t: Timestamp) -> i64 {
    let nanos = t.duration_since(start).as_nanos();
    i64::try_from(nanos).unwrap_or(if nanos < 0 { i64::MIN } else { i64::MAX })
}

/// `nanos` ns after `start` (`start` itself when out of range).
fn after(start: Timestamp, nanos: i64) -> Timestamp {
    start.checked_add(SignedDuration::from_nanos(nanos)).unwrap_or(start)
}

/// The values `pick` finds in `items`, one per item; empty when none has one.
fn column<S, T: Copy>(items: &[&S], pick: impl Fn(&S) -> Option<T>) -> Vec<Option<T>> {
    let values: Vec<Option<T>> = items.iter().map(|s| pick(s)).collect();
    if values.iter().all(Option::is_none) { Vec::new() } else { values }
}

/// The value of `column` for item `i`.
fn cell<T: Copy>(column: &[Option<T>], i: usize) -> Option<T> {
    column.get(i).copied().flatten()
}

/// The `some` total of a PSI reading.
fn some_total(pressure: Option<PressureJson>) -> Option<u64> {
    pressure?.some?.total
}

/// A PSI reading of which only the `some` total is known.
fn some_only(total: Option<u64>) -> Option<PressureJson> {
    total.map(|total| PressureJson {
        some: Some(PressureValues { total: Some(total), ..PressureValues::default() }),
        full: None,
    })
}

/// The items of `all` to keep, and how many there were when thinned.
fn kept<T>(all: &[T]) -> (Vec<&T>, Option<usize>) {
    match thinned(all.len()) {
        Some(indices) => (indices.into_iter().filter_map(|i| all.get(i)).collect(), Some(all.len())),
        None => (all.iter().collect(), None),
    }
}

impl Series {
    /// The series of `samples`, times after `start`.
    fn of(samples: &[StepSample], start: Timestamp) -> Series {
        let (kept, thinned_from) = kept(samples);
        let last = |pick: &dyn Fn(&StepSample) -> Option<LimitJson>| samples.iter().rev().find_map(pick);
        Series {
            thinned_from,
            at: kept.iter().map(|s| nanos_after(start, s.timestamp)).collect(),
            cpu_usage_nanos: column(&kept, |s| s.cpu_stat?.usage_nanos),
            memory_current: column(&kept, |s| s.stepmon.memory_current),
            memory_anon: column(&kept, |s| s.memory_stat?.anon),
            memory_file: column(&kept, |s| s.memory_stat?.file),
            io_read_bytes: column(&kept, |s| s.io_stat?.read_bytes),
            io_write_bytes: column(&kept, |s| s.io_stat?.write_bytes),
            cpu_some_micros: column(&kept, |s| some_total(s.cpu_stat?.pressure)),
            memory_some_micros: column(&kept, |s| some_total(s.memory_stat?.pressure)),
            io_some_micros: column(&kept, |s| some_total(s.io_stat?.pressure)),
            pids: column(&kept, |s| s.pids_stat.current),
            memory_max: last(&|s| s.stepmon.memory_max),
            cpu_max_quota_usec: last(&|s| s.stepmon.cpu_max_quota_usec),
            cpu_max_period_usec: samples.iter().rev().find_map(|s| s.stepmon.cpu_max_period_usec),
        }
    }

    /// The series as samples holding its values (the limits on the last),
    /// times after `start`.
    fn samples(&self, start: Timestamp) -> Vec<StepSample> {
        let count = self.at.len();
        (0..count)
            .map(|i| {
                let mut sample = StepSample::empty(after(start, self.at[i]));
                let cpu = (cell(&self.cpu_usage_nanos, i), some_only(cell(&self.cpu_some_micros, i)));
                if cpu != (None, None) {
                    sample.cpu_stat = Some(CpuStat { usage_nanos: cpu.0, pressure: cpu.1, ..CpuStat::default() });
                }
                let memory = MemoryStat {
                    anon: cell(&self.memory_anon, i),
                    file: cell(&self.memory_file, i),
                    pressure: some_only(cell(&self.memory_some_micros, i)),
                    ..MemoryStat::default()
                };
                if memory != MemoryStat::default() {
                    sample.memory_stat = Some(memory);
                }
                let io = IoStat {
                    read_bytes: cell(&self.io_read_bytes, i),
                    write_bytes: cell(&self.io_write_bytes, i),
                    pressure: some_only(cell(&self.io_some_micros, i)),
                    ..IoStat::default()
                };
                if io != IoStat::default() {
                    sample.io_stat = Some(io);
                }
                sample.pids_stat.current = cell(&self.pids, i);
                sample.stepmon =
                    StepSampleExt { memory_current: cell(&self.memory_current, i), ..StepSampleExt::default() };
                if i + 1 == count {
                    sample.stepmon.memory_max = self.memory_max;
                    sample.stepmon.cpu_max_quota_usec = self.cpu_max_quota_usec;
                    sample.stepmon.cpu_max_period_usec = self.cpu_max_period_usec;
                }
                sample
            })
            .collect()
    }
}

/// The `/proc/stat` columns other than idle and iowait, summed, s.
fn busy(c: &SysCPUStat) -> f64 {
    crate::round_millis(c.user + c.nice + c.system + c.irq + c.softirq + c.steal)
}

impl Machine {
    /// The machine's samples of `document`, times after `start`.
    fn of(document: &RunDocument, start: Timestamp) -> Machine {
        let sys = &document.sys_usage;
        let (kept, thinned_from) = kept(sys);
        let delta_cpus =
            document.resource_usage.stepmon.as_ref().and_then(|e| e.sys_cpu.as_ref()).map(|c| c.per_cpu.len());
        let sampled_cpus = sys.iter().filter_map(|s| s.stepmon.as_ref()).map(|e| e.per_cpu.len()).max();
        Machine {
            cpus: delta_cpus.filter(|n| *n > 0).or(sampled_cpus.filter(|n| *n > 0)),
            memory_total_kb: sys.iter().filter_map(|s| s.memory_stat?.total).max(),
            thinned_from,
            at: kept.iter().map(|s| nanos_after(start, s.timestamp)).collect(),
            cpu_busy_seconds: column(&kept, |s| s.cpu_stat.as_ref().map(busy)),
            cpu_idle_seconds: column(&kept, |s| s.cpu_stat.map(|c| crate::round_millis(c.idle + c.iowait))),
            cpu_some_micros: column(&kept, |s| some_total(s.cpu_pressure)),
            memory_available_kb: column(&kept, |s| s.memory_stat?.available),
        }
    }

    /// The machine's samples holding its values, times after `start`: the
    /// CPU as busy (in `user`) and idle seconds, which is what a CPU busy
    /// share is made of; `MemTotal` on each that has a memory reading.
    fn samples(&self, start: Timestamp) -> Vec<SysSample> {
        (0..self.at.len())
            .map(|i| {
                let mut sample = SysSample::new(after(start, self.at[i]));
                if let (Some(busy), Some(idle)) = (cell(&self.cpu_busy_seconds, i), cell(&self.cpu_idle_seconds, i)) {
                    sample.cpu_stat = Some(SysCPUStat { user: busy, idle, ..SysCPUStat::default() });
                }
                sample.cpu_pressure = some_only(cell(&self.cpu_some_micros, i));
                let available = cell(&self.memory_available_kb, i);
                if available.is_some() || self.memory_total_kb.is_some() {
                    sample.memory_stat =
                        Some(SysMemoryStat { total: self.memory_total_kb, available, ..SysMemoryStat::default() });
                }
                sample
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
