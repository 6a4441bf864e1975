//! The thresholds behind every verdict, in one place (docs/usage.md lists
//! them). Shares are of the step's wall time unless said otherwise.

use serde::{Deserialize, Serialize};

/// Where a verdict tips. [`Thresholds::default`](super::Thresholds::default) is what `stepmon` uses.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Thresholds {
    /// A resource is a bottleneck when some task of the step was stalled on
    /// it (PSI `some` stall time) for at least this share of the wall time.
    pub stall_share: f64,
    /// A CPU-bound step's own threads are a cause of its CPU stall when it
    /// used on average at least this share of the machine's CPUs: they kept
    /// the CPUs busy, so its other runnable threads queued behind them.
    /// (Absent in verdicts of older versions: the default then.)
    #[serde(default = "default_own_cores_share")]
    pub own_cores_share: f64,
    /// The step counts as throttled when its own `cpu.max` held it back for
    /// at least this share of the wall time.
    pub throttled_share: f64,
    /// The machine was busy when work other than the step used at least
    /// this share of all CPUs' time during the step.
    pub others_busy_share: f64,
    /// Steal time (the hypervisor running something else) of at least this
    /// share of all CPUs' time is reported.
    pub steal_share: f64,
    /// The machine's CPU pressure (`/proc/pressure/cpu` `some`) beyond the
    /// step's own CPU pressure, of at least this share of the wall time,
    /// means tasks outside the step queued for CPU.
    pub machine_stall_share: f64,
    /// A peak of at least this share of `memory.max` is "near the limit".
    pub near_limit_share: f64,
    /// stepmon's own CPU time above this share of the step's wall time is
    /// reported as noticeable overhead.
    pub collector_cpu_share: f64,
}

fn default_own_cores_share() -> f64 {
    Thresholds::default().own_cores_share
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            stall_share: 0.10,
            own_cores_share: 0.80,
            throttled_share: 0.05,
            others_busy_share: 0.50,
            steal_share: 0.05,
            machine_stall_share: 0.10,
            near_limit_share: 0.90,
            collector_cpu_share: 0.01,
        }
    }
}
