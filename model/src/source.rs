//! Where each number of a run came from: the rung of the measurement ladder
//! that filled each field group ([`Sources`]), and whether it is exact
//! ([`Bound`]).
//!
//! `stepmon-runner` chooses the rung per resource, best first ([`Rung`]'s
//! order); a document records it per field group, and summaries, verdicts,
//! `diff` and every export carry it. Documents without this record (older
//! versions, BuildKit imports) are the step's own cgroup throughout. What
//! each rung covers and misses: the repository's `docs/measurement-ladder.md`.

use serde::{Deserialize, Serialize};

use crate::sample::{StepSample, StepUsage};

/// A source of measurements, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Rung {
    /// The step's own cgroup v2 (created for it): exact, the step alone.
    CgroupV2,
    /// The step's own cgroup v1 hierarchies (hybrid and v1-only hosts).
    CgroupV1,
    /// The step's own cgroup v2 as a transient systemd scope, asked of
    /// systemd where it manages stepmon's cgroup (a service or session
    /// scope holding other processes): exact, the step alone.
    SystemdScope,
    /// The step's own Windows job object: the kernel's accounting of every
    /// process of the step (the job holds the first before it runs, and
    /// each process it starts): exact for the whole tree
    /// (<https://learn.microsoft.com/en-us/windows/win32/procthread/job-objects>).
    JobObject,
    /// The step's processes, reaped by stepmon as child subreaper: the sum
    /// of their `wait4` rusage (what GNU time reports, for the whole tree).
    ProcessTree,
    /// The step's first process's `wait4` rusage, which includes the
    /// descendants it waited for (macOS, the BSDs: no subreaper, so
    /// orphans are missed): a lower bound of the tree.
    ProcessRusage,
    /// The cgroup stepmon runs in (a container's, a user session's): deltas
    /// over the step, including the other processes it holds.
    EnclosingCgroup,
    /// The whole machine (`/proc`).
    Machine,
    /// The step's own network namespace.
    NetworkNamespace,
}

impl Rung {
    /// The JSON name (`cgroupV2`, `processTree`, ...).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Rung::CgroupV2 => "cgroupV2",
            Rung::CgroupV1 => "cgroupV1",
            Rung::SystemdScope => "systemdScope",
            Rung::JobObject => "jobObject",
            Rung::ProcessTree => "processTree",
            Rung::ProcessRusage => "processRusage",
            Rung::EnclosingCgroup => "enclosingCgroup",
            Rung::Machine => "machine",
            Rung::NetworkNamespace => "networkNamespace",
        }
    }

    /// Words for people: `the step's cgroup`, `process tree`, ...
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            Rung::CgroupV2 => "step cgroup",
            Rung::CgroupV1 => "step cgroup v1",
            Rung::SystemdScope => "step's systemd scope",
            Rung::JobObject => "step's job object",
            Rung::ProcessTree => "process tree",
            Rung::ProcessRusage => "first process's rusage",
            Rung::EnclosingCgroup => "enclosing cgroup",
            Rung::Machine => "whole machine",
            Rung::NetworkNamespace => "network namespace",
        }
    }
}

/// How a value relates to the step's true value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Bound {
    /// What the source counts, exactly.
    #[default]
    Exact,
    /// At least this much: the true value may be higher (a gauge sampled at
    /// intervals; a peak between two samples is missed).
    LowerBound,
    /// At most this much: the true value may be lower (a cgroup v1
    /// `memory.max_usage_in_bytes` that stepmon may not reset: it includes
    /// what the cgroup held before the step and stepmon itself).
    UpperBound,
}

/// The source of one field group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// Where the numbers came from.
    pub rung: Rung,
    /// Exact, or a lower bound.
    #[serde(default)]
    pub bound: Bound,
    /// What the numbers cover, in words ("the step's cgroup", "includes 3
    /// other processes of the enclosing cgroup /docker/abc"); empty, and
    /// left out, in a job record's brief step end where no view says it
    /// ([`crate::brief::StepBrief::sources`]).
    #[serde(default)]
    pub covers: String,
}

impl Source {
    /// An exact source.
    #[must_use]
    pub fn exact(rung: Rung, covers: impl Into<String>) -> Source {
        Source { rung, bound: Bound::Exact, covers: covers.into() }
    }

    /// An upper bound.
    #[must_use]
    pub fn upper_bound(rung: Rung, covers: impl Into<String>) -> Source {
        Source { rung, bound: Bound::UpperBound, covers: covers.into() }
    }

    /// A lower bound.
    #[must_use]
    pub fn lower_bound(rung: Rung, covers: impl Into<String>) -> Source {
        Source { rung, bound: Bound::LowerBound, covers: covers.into() }
    }

    /// Whether the numbers are the step's alone (not shared with other
    /// processes) and exact.
    #[must_use]
    pub fn is_exact_for_step(&self) -> bool {
        self.bound == Bound::Exact
            && matches!(
                self.rung,
                Rung::CgroupV2 | Rung::CgroupV1 | Rung::SystemdScope | Rung::JobObject | Rung::ProcessTree
            )
    }

    /// `process tree`, `enclosing cgroup, lower bound`.
    #[must_use]
    pub fn label(&self) -> String {
        match self.bound {
            Bound::Exact => self.rung.words().to_owned(),
            Bound::LowerBound => format!("{}, lower bound", self.rung.words()),
            Bound::UpperBound => format!("{}, upper bound", self.rung.words()),
        }
    }
}

/// The field groups of a run and their sources; `None`: not measured (the
/// run's `notMeasured` says why).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Sources {
    /// CPU time (user, system, average cores, throttling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Source>,
    /// Memory peak, anon/file split, OOM and limit events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<Source>,
    /// Block IO bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io: Option<Source>,
    /// Number of tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pids: Option<Source>,
    /// Pressure stall (PSI).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pressure: Option<Source>,
    /// Network traffic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<Source>,
}

/// A field group of [`Sources`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    /// [`Sources::cpu`].
    Cpu,
    /// [`Sources::memory`].
    Memory,
    /// [`Sources::io`].
    Io,
    /// [`Sources::pids`].
    Pids,
    /// [`Sources::pressure`].
    Pressure,
    /// [`Sources::network`].
    Network,
}

impl Group {
    /// Every group, in the order summaries show them.
    pub const ALL: [Group; 6] = [Group::Cpu, Group::Memory, Group::Io, Group::Pids, Group::Pressure, Group::Network];

    /// `cpu`, `memory`, ...
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Group::Cpu => "cpu",
            Group::Memory => "memory",
            Group::Io => "io",
            Group::Pids => "pids",
            Group::Pressure => "pressure",
            Group::Network => "network",
        }
    }
}

impl Sources {
    /// Whether no group has a recorded source (a document of an older
    /// version, or a BuildKit step: everything is the step's cgroup).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        Group::ALL.iter().all(|g| self.get(*g).is_none())
    }

    /// The source of `group`.
    #[must_use]
    pub fn get(&self, group: Group) -> Option<&Source> {
        match group {
            Group::Cpu => self.cpu.as_ref(),
            Group::Memory => self.memory.as_ref(),
            Group::Io => self.io.as_ref(),
            Group::Pids => self.pids.as_ref(),
            Group::Pressure => self.pressure.as_ref(),
            Group::Network => self.network.as_ref(),
        }
    }

    /// Sets the source of `group`.
    pub fn set(&mut self, group: Group, source: Option<Source>) {
        let slot = match group {
            Group::Cpu => &mut self.cpu,
            Group::Memory => &mut self.memory,
            Group::Io => &mut self.io,
            Group::Pids => &mut self.pids,
            Group::Pressure => &mut self.pressure,
            Group::Network => &mut self.network,
        };
        *slot = source;
    }

    /// The rung of `group`, if measured.
    #[must_use]
    pub fn rung(&self, group: Group) -> Option<Rung> {
        self.get(group).map(|s| s.rung)
    }
}

/// The step's process tree as stepmon reaped it (`wait4` rusage of every
/// process it waited for, summed; each includes the descendants that
/// process itself waited for).
///
/// What it misses: children of a parent that ignores `SIGCHLD` (the kernel
/// reaps them and their usage is lost), and a process that escaped the tree
/// (started through another service). A process still running when the
/// main process exits counts once it is killed (or waited for) and reaped.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProcessTree {
    /// User CPU time, s (`ru_utime`).
    pub user_seconds: f64,
    /// System CPU time, s (`ru_stime`).
    pub system_seconds: f64,
    /// The largest single process's peak resident set, bytes (`ru_maxrss`).
    pub max_rss_bytes: u64,
    /// Bytes read from storage (`ru_inblock` × 512, task IO accounting).
    pub block_read_bytes: u64,
    /// Bytes written to storage (`ru_oublock` × 512).
    pub block_write_bytes: u64,
    /// Voluntary context switches (`ru_nvcsw`).
    pub voluntary_context_switches: u64,
    /// Involuntary context switches (`ru_nivcsw`).
    pub involuntary_context_switches: u64,
    /// Minor page faults (`ru_minflt`).
    pub minor_faults: u64,
    /// Major page faults (`ru_majflt`).
    pub major_faults: u64,
    /// Processes stepmon reaped: the main process and every orphan of the
    /// step reparented to it.
    pub processes_reaped: u64,
    /// Processes stepmon killed when the main process had exited.
    pub leftovers_killed: u64,
    /// The tree's memory, sampled (where no memory cgroup covers the step
    /// alone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<TreeMemory>,
}

/// The step's process tree's memory, sampled: at each sample the sum over
/// its live processes of `Pss_Anon + Pss_Shmem` (`/proc/PID/smaps_rollup`,
/// Linux 5.3+: a page shared by N processes counts 1/N in each, so the tree
/// counts it once), or before 5.3 `RssAnon + RssShmem` (`status`: shared
/// pages counted in every process that maps them). A lower bound: a peak
/// between two samples is missed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TreeMemory {
    /// The largest sum, bytes.
    pub peak_bytes: u64,
    /// Samples taken (one at the start, one at the end, and every interval).
    pub samples: u64,
    /// The interval between samples, ms.
    pub interval_ms: u64,
    /// Which files the sums came from.
    pub from: TreeMemoryFrom,
}

/// Where [`TreeMemory`]'s sums came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TreeMemoryFrom {
    /// `smaps_rollup`'s `Pss_Anon + Pss_Shmem`.
    #[default]
    SmapsRollup,
    /// `status`'s `RssAnon + RssShmem` (kernels before 5.3): shared pages
    /// counted in every process.
    Status,
}

impl ProcessTree {
    /// User + system CPU time, s.
    #[must_use]
    pub fn cpu_seconds(&self) -> f64 {
        self.user_seconds + self.system_seconds
    }
}

/// What the operating system itself accounted for the step as a whole, off
/// Linux: a Windows job object's counters ([`Rung::JobObject`]) or, on
/// macOS and the BSDs, the first process's `wait4` rusage
/// ([`Rung::ProcessRusage`]). Each field is `None` where that source has no
/// such number or gave none (the run's `notMeasured` says why): never a
/// made-up zero.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Accounting {
    /// User CPU time, s (a job's `TotalUserTime`; `ru_utime`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_seconds: Option<f64>,
    /// Kernel CPU time, s (a job's `TotalKernelTime`; `ru_stime`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_seconds: Option<f64>,
    /// Memory peak, bytes: a job's `PeakJobMemoryUsed` (the most committed
    /// private memory of all its processes at once), or `ru_maxrss` (the
    /// largest resident set of one process: a lower bound of the tree's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_peak_bytes: Option<u64>,
    /// The largest committed private memory of one process of a job,
    /// bytes (`PeakProcessMemoryUsed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process_memory_peak_bytes: Option<u64>,
    /// Bytes read by a job's processes (`ReadTransferCount`: every read
    /// call, of files, pipes and devices, cache hits included; not storage
    /// traffic).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_bytes: Option<u64>,
    /// Bytes written by a job's processes (`WriteTransferCount`, as
    /// `read_bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_bytes: Option<u64>,
    /// Bytes of a job's other I/O operations (`OtherTransferCount`: device
    /// control and the like).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_io_bytes: Option<u64>,
    /// Processes the step started, its first included (a job's
    /// `TotalProcesses`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processes: Option<u64>,
    /// Processes still running when the first one had exited, then killed
    /// (a job's `ActiveProcesses` then; macOS and the BSDs: those of the
    /// step's process group).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leftovers_killed: Option<u64>,
}

/// The cgroup stepmon ran in, sampled over the step because the step had
/// no cgroup of its own (or its own lacked a controller this one has).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EnclosingCgroup {
    /// Its directory.
    pub cgroup: String,
    /// Whether it is the root cgroup (then it covers the whole machine).
    pub root: bool,
    /// Processes in it (and its descendants) at the start, other than
    /// stepmon; `None` when they could not be counted.
    pub other_processes_at_start: Option<u64>,
    /// stepmon's own CPU time over the step, s: subtracted from the
    /// cgroup's CPU delta in [`EnclosingCgroup::cpu_seconds_without_stepmon`].
    pub stepmon_cpu_seconds: Option<f64>,
    /// The cgroup's memory peak since the step started, bytes: `memory.peak`
    /// reset for stepmon's own file handle (Linux 6.12+, a writable file).
    pub memory_peak_since_start: Option<u64>,
    /// The cgroup v1 directories its memory and task counts were read from
    /// (a host with v1 hierarchies: a container's, a login session's), where
    /// `cgroup`'s cgroup v2 has no memory or pids files or there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cgroup_v1: Vec<String>,
    /// Its memory usage when the step started, bytes (`memory.current`, or
    /// cgroup v1 `memory.usage_in_bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_usage_at_start: Option<u64>,
    /// Its memory peak when the step started, bytes (cgroup v1
    /// `memory.max_usage_in_bytes`, which stepmon never resets: others may
    /// rely on it; or `memory.peak` where it could not be reset for
    /// stepmon's file handle: before Linux 6.12, a read-only cgroupfs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_peak_at_start: Option<u64>,
    /// Whether its memory numbers come from a cgroup v1 memory cgroup
    /// (`memory.usage_in_bytes`, `memory.max_usage_in_bytes`) rather than
    /// its cgroup v2 (`memory.current`, `memory.peak`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub memory_v1: bool,
    /// Its samples, as a step's (`resourceUsage.samples` shape).
    pub samples: Vec<StepSample>,
}

impl EnclosingCgroup {
    /// Who else the numbers include, in words.
    #[must_use]
    pub fn covers(&self) -> String {
        if self.root {
            return format!("the root cgroup {}: every process on the machine", self.cgroup);
        }
        match self.other_processes_at_start {
            Some(0) => format!("the enclosing cgroup {} (no other process at the start)", self.cgroup),
            Some(1) => format!("the enclosing cgroup {}, which held 1 other process at the start", self.cgroup),
            Some(n) => format!("the enclosing cgroup {}, which held {n} other processes at the start", self.cgroup),
            None => format!("the enclosing cgroup {} and whatever else ran in it", self.cgroup),
        }
    }

    /// The samples as a step's usage.
    #[must_use]
    pub fn usage(&self) -> StepUsage {
        let mut usage = StepUsage::default();
        usage.resource_usage.samples.clone_from(&self.samples);
        usage
    }

    /// Its CPU time over the step less stepmon's own, s.
    #[must_use]
    pub fn cpu_seconds_without_stepmon(&self) -> Option<f64> {
        // The `cpu.stat` usage delta from the first sample to the last, as
        // the step's summary counts it from its first sample.
        let usage_nanos = |s: Option<&StepSample>| s.and_then(|s| s.cpu_stat).and_then(|c| c.usage_nanos);
        let last = usage_nanos(self.samples.last())?;
        let nanos = last.saturating_sub(usage_nanos(self.samples.first()).unwrap_or(0));
        #[allow(clippy::cast_precision_loss)] // ns counts far below 2^53 (104 days)
        let seconds = nanos as f64 / 1e9;
        Some((seconds - self.stepmon_cpu_seconds.unwrap_or(0.0)).max(0.0))
    }

    /// The memory peak over the step and how it is known: reset
    /// `memory.peak` (exact), `memory.peak` that rose during the step (the
    /// new peak happened during it: exact), else the largest sampled
    /// `memory.current` (a lower bound).
    ///
    /// A cgroup v1 memory peak (`memory.max_usage_in_bytes`, never reset)
    /// is an upper bound: it includes what the cgroup held before the step
    /// and stepmon itself, and a peak from before the step when it never
    /// rose; the largest sampled usage is the lower bound beside it
    /// ([`EnclosingCgroup::memory_sampled_max`]).
    #[must_use]
    pub fn memory_peak(&self) -> Option<(u64, Bound)> {
        if let Some(peak) = self.memory_peak_since_start {
            return Some((peak, Bound::Exact));
        }
        if self.memory_peak_at_start.is_some() {
            let last = self.samples.iter().rev().find_map(|s| s.memory_stat.and_then(|m| m.peak));
            if let Some(peak) = last {
                return Some((peak, Bound::UpperBound));
            }
        }
        let peaks: Vec<u64> = self.samples.iter().filter_map(|s| s.memory_stat.and_then(|m| m.peak)).collect();
        if let (Some(first), Some(last)) = (peaks.first(), peaks.last())
            && last > first
        {
            return Some((*last, Bound::Exact));
        }
        self.samples.iter().filter_map(|s| s.stepmon.memory_current).max().map(|current| (current, Bound::LowerBound))
    }

    /// The largest sampled memory usage (a lower bound of the cgroup's peak).
    #[must_use]
    pub fn memory_sampled_max(&self) -> Option<u64> {
        self.samples.iter().filter_map(|s| s.stepmon.memory_current).max()
    }

    /// The task count's peak over the step, the same way as
    /// [`EnclosingCgroup::memory_peak`] (`pids.peak` that rose, else the
    /// largest sampled `pids.current`).
    #[must_use]
    pub fn pids_peak(&self) -> Option<(u64, Bound)> {
        let peaks: Vec<u64> = self.samples.iter().filter_map(|s| s.stepmon.pids_peak).collect();
        if let (Some(first), Some(last)) = (peaks.first(), peaks.last())
            && last > first
        {
            return Some((*last, Bound::Exact));
        }
        self.samples.iter().filter_map(|s| s.pids_stat.current).max().map(|current| (current, Bound::LowerBound))
    }
}
