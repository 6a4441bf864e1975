//! What the step waited for, from its PSI stall time over the whole step.

use serde::{Deserialize, Serialize};

/// The resource a step waited for most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Bottleneck {
    /// Tasks of the step waited for CPU for at least the threshold share of
    /// the wall time (more than for memory or IO).
    CpuBound,
    /// ... waited for memory (reclaim, swap-in, refaults).
    MemoryBound,
    /// ... waited for block IO.
    IoBound,
    /// No resource reached the threshold: the step ran as fast as it could.
    NotStalled,
    /// No stall time was measured (PSI off, or no pressure files).
    Unknown,
}

/// Why a CPU-bound step's tasks waited for CPU. A task of the step stalls
/// on CPU when it is runnable and not running; each cause is one reason no
/// CPU ran it, shown from the numbers the step has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CpuStallCause {
    /// Its own threads kept the machine's CPUs busy: it used on average at
    /// least [`Thresholds::own_cores_share`](super::Thresholds::own_cores_share) of the machine's CPUs, so its
    /// other runnable threads queued behind them.
    OwnParallelism,
    /// Other work on the machine: [`MachineVerdict`](super::MachineVerdict) found it busy (others'
    /// share of the CPU time, steal, or the machine's CPU pressure beyond
    /// the step's).
    OtherWork,
    /// Its own `cpu.max`: [`ThrottlingVerdict`](super::ThrottlingVerdict) found it throttled (a
    /// throttled task is runnable but not running, which PSI counts).
    OwnLimit,
}

/// What the step waited for: per resource, the share of the wall time in
/// which some task of the step was stalled on it (the `some` line's `total`
/// delta, <https://docs.kernel.org/accounting/psi.html#cgroup2-interface>).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BottleneckVerdict {
    /// The class.
    pub class: Bottleneck,
    /// CPU stall share of the wall time.
    pub cpu_stall_share: Option<f64>,
    /// Memory stall share.
    pub memory_stall_share: Option<f64>,
    /// IO stall share.
    pub io_stall_share: Option<f64>,
    /// Whether the CPU stall is explained by the step's own `cpu.max`: a
    /// throttled task is runnable but not running, which PSI counts as CPU
    /// pressure ([`ThrottlingVerdict`](super::ThrottlingVerdict) has the throttled time itself).
    pub cpu_stall_from_own_limit: Option<bool>,
    /// For a CPU-bound step, every cause of its CPU stall the numbers show
    /// (empty: none could be shown; the reason says what was unknown).
    #[serde(default)]
    pub cpu_stall_causes: Vec<CpuStallCause>,
    /// The machine's online CPUs during the step, when recorded (`/proc/stat`
    /// per-CPU lines).
    #[serde(default)]
    pub machine_cpus: Option<usize>,
    /// In words.
    pub reason: String,
}
