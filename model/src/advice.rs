//! Advice: what to change next time, from what a step measured. Today one
//! piece: how many parallel workers (`-j`) the step's memory and cores hold
//! ([`ParallelismAdvice`]), computed by `stepmon-report` (docs/parallelism.md).

use serde::{Deserialize, Serialize};

use crate::processes::Lifetime;
use crate::source::Bound;

/// Everything advised about one step (`stepmon.advice` in the document).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Advice {
    /// How many workers to run at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<ParallelismAdvice>,
}

/// What bounds the advised job count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum LimitedBy {
    /// The memory the step could use, at the workers' p95 peak and the
    /// headroom (or the step was OOM-killed, or ran more at once than fit).
    Memory,
    /// The cores: CPU was the step's bottleneck and fewer cores than fit
    /// in memory.
    Cpu,
    /// Neither held the step back: the count is what memory allows.
    None,
}

/// Why there is no advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum NoAdvice {
    /// No per-process records (taskstats and sampling both unavailable, or
    /// a document without processes).
    NoProcessRecords,
    /// No command ran at least [`ParallelismAdvice::MIN_INSTANCES`] times.
    TooFewInstances,
    /// The repeated commands have no peak RSS recorded.
    NoPeaks,
    /// The document predates recorded worker concurrency.
    NoLifetimes,
    /// Neither a memory limit nor the machine's memory is known.
    MemoryUnknown,
}

/// The workers' peak RSS distribution (nearest rank) and its bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PeakBytes {
    /// Median.
    pub p50: u64,
    /// 95th percentile.
    pub p95: u64,
    /// Largest.
    pub max: u64,
    /// Exact (taskstats `hiwater_rss` at exit), or a lower bound (sampled
    /// `VmHWM`: a worker that grew after the last sample, or lived between
    /// two, is missed).
    pub bound: Bound,
}

/// Where the memory the step could use came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum MemorySource {
    /// The step's own cgroup's `memory.max` (v1 `memory.limit_in_bytes`).
    StepLimit,
    /// The enclosing cgroup's limit (a container's).
    EnclosingLimit,
    /// The machine's `MemTotal` less the most that the rest of the machine
    /// used while the step ran (`sysUsage`).
    MachineLessOthers,
}

/// Where the cores came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CoresSource {
    /// The step's own `cpu.max`.
    StepLimit,
    /// The enclosing cgroup's `cpu.max`.
    EnclosingLimit,
    /// The machine's online CPUs.
    OnlineCpus,
}

/// How many of the step's parallel workers fit its memory and cores
/// (`stepmon.advice.parallelism`). Every number is absent when unknown;
/// `noAdvice` says why nothing was advised.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ParallelismAdvice {
    /// The worker command (`ac_comm`: `rustc`, `cc1plus`, `python3`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// How many times it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances: Option<u64>,
    /// The most of them alive at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_concurrency: Option<u64>,
    /// How their lifetimes were known (the concurrency's resolution).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifetimes: Option<Lifetime>,
    /// Their peak RSS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_bytes: Option<PeakBytes>,
    /// The input of the one with the largest peak (its args' label:
    /// `foo.cpp`, a crate name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub largest_input: Option<String>,
    /// The memory the step could use, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_available_bytes: Option<u64>,
    /// Where that came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_source: Option<MemorySource>,
    /// The share of that memory kept free: the workers planned at their p95
    /// peak fill the rest.
    pub headroom: f64,
    /// How many workers fit in memory at the p95 peak with the headroom.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fits_in_memory: Option<u64>,
    /// The cores the step could use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cores: Option<f64>,
    /// Where those came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cores_source: Option<CoresSource>,
    /// The step's CPU stall (PSI `some`) over its wall time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_stall_share: Option<f64>,
    /// How much the workers computed: their CPU time over the part of their
    /// lifetimes in which they were not queued for a CPU (their lifetimes
    /// summed less their run-queue wait, taskstats' `cpu_delay_total`; a
    /// sampled document has no wait, so the share is a lower bound there).
    /// A worker that computes runs whenever it is not queued (near 1), one
    /// that sleeps or waits for IO hardly; unlike the step's CPU stall, a
    /// shared machine's other work does not move it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workers_cpu_share: Option<f64>,
    /// Whether the workers are CPU-bound ([`Self::CPU_BOUND_SHARE`]): more of
    /// them than cores do not finish sooner.
    pub cpu_bound: bool,
    /// Processes of the step the kernel OOM-killed.
    pub oom_kills: u64,
    /// The advised job count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggested_jobs: Option<u64>,
    /// What bounds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<LimitedBy>,
    /// Why there is no advice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_advice: Option<NoAdvice>,
    /// The advice in one line, for a reader of the JSON alone (rendered by
    /// `stepmon-report` from the fields above).
    pub reason: String,
}

impl ParallelismAdvice {
    /// A command must run at least this many times to be the step's workers.
    pub const MIN_INSTANCES: u64 = 3;
    /// The share of the available memory kept free by default.
    pub const HEADROOM: f64 = 0.10;
    /// Workers that computed at least this share of the time they were not
    /// queued for a CPU ([`Self::workers_cpu_share`]) are CPU-bound.
    pub const CPU_BOUND_SHARE: f64 = 0.5;
}
