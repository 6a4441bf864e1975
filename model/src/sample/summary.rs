//! The numbers a person reads first, computed from a recorded
//! [`StepUsage`](super::StepUsage) by `stepmon-report`: totals over the
//! step, peaks, stall time and share of wall time, and how busy the machine
//! was. Every value is `None` when the samples do not hold what it needs
//! (the samples' `missing` lists say why).

use serde::{Deserialize, Serialize};

/// CPU of the step.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CpuSummary {
    /// User time, s.
    pub user_seconds: Option<f64>,
    /// System time, s.
    pub system_seconds: Option<f64>,
    /// Total CPU time, s.
    pub usage_seconds: Option<f64>,
    /// Average cores in use: CPU time / wall time.
    pub average_cores: Option<f64>,
    /// Time throttled by the step's own `cpu.max`, s.
    pub throttled_seconds: Option<f64>,
    /// Periods in which it was throttled.
    pub throttled_periods: Option<u32>,
}

/// Memory of the step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemorySummary {
    /// `memory.peak` (high-water mark of `memory.current`), bytes.
    pub peak_bytes: Option<u64>,
    /// Anonymous memory in the sample with the most memory, bytes.
    pub anon_at_peak_bytes: Option<u64>,
    /// Page cache in the sample with the most memory, bytes.
    pub file_at_peak_bytes: Option<u64>,
    /// Processes killed by the OOM killer during the step.
    pub oom_kills: Option<u64>,
    /// Group OOM kills during the step.
    pub oom_group_kills: Option<u64>,
    /// Times `memory.max` was hit.
    pub max_hits: Option<u64>,
    /// Times `memory.high` throttled the step.
    pub high_hits: Option<u64>,
}

/// Block IO of the step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IoSummary {
    /// Bytes read.
    pub read_bytes: Option<u64>,
    /// Bytes written.
    pub write_bytes: Option<u64>,
}

/// Stall time of one resource (PSI) over the step.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StallSummary {
    /// Time some task of the step was stalled, s.
    pub some_seconds: Option<f64>,
    /// Share of wall time with some task stalled.
    pub some_share: Option<f64>,
    /// Time all its tasks were stalled, s.
    pub full_seconds: Option<f64>,
}

/// The machine during the step (from `sysCPUStat`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineSummary {
    /// Share of all CPUs' time spent busy (not idle, not iowait).
    pub cpu_busy_share: Option<f64>,
    /// Share of all CPUs' time busy with work other than the step's.
    pub others_busy_share: Option<f64>,
    /// Share of CPU time taken by the hypervisor (steal).
    pub steal_share: Option<f64>,
}

/// The summary of one step.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageSummary {
    /// Wall time of the step, s; `None` when unknown (a BuildKit step with
    /// only its final sample and no vertex timing: the step's `wallSource`
    /// says so), never a made-up 0 — and then no share of it either.
    pub wall_seconds: Option<f64>,
    /// CPU.
    pub cpu: CpuSummary,
    /// Memory.
    pub memory: MemorySummary,
    /// Block IO.
    pub io: IoSummary,
    /// Peak number of tasks (`pids.peak`, else the highest `pids.current` seen).
    pub pids_peak: Option<u64>,
    /// CPU pressure.
    pub cpu_stall: StallSummary,
    /// Memory pressure.
    pub memory_stall: StallSummary,
    /// IO pressure.
    pub io_stall: StallSummary,
    /// Bytes received by the step (its own network namespace only).
    pub net_rx_bytes: Option<u64>,
    /// Bytes sent by the step.
    pub net_tx_bytes: Option<u64>,
    /// The machine.
    pub machine: MachineSummary,
}
