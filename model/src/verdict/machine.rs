//! Whether the rest of the machine was busy while the step ran.

use serde::{Deserialize, Serialize};

/// How busy the machine was with work other than the step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum MachineLoad {
    /// Other work, steal and the machine's CPU pressure stayed below their thresholds.
    Quiet,
    /// At least one of them reached its threshold.
    Busy,
    /// No machine CPU numbers over the step.
    Unknown,
}

/// The machine during the step: from the per-step `/proc/stat` delta
/// (`sysCPUStat`) minus the step's own CPU time, and from
/// `/proc/pressure/cpu` (<https://docs.kernel.org/accounting/psi.html>).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineVerdict {
    /// The class.
    pub class: MachineLoad,
    /// Share of all CPUs' time that was busy.
    pub cpu_busy_share: Option<f64>,
    /// Share of all CPUs' time busy with work other than the step's.
    pub others_busy_share: Option<f64>,
    /// Share of all CPUs' time taken by the hypervisor.
    pub steal_share: Option<f64>,
    /// Share of the wall time in which some task on the machine waited for
    /// CPU (machine samples taken during the step).
    pub machine_cpu_stall_share: Option<f64>,
    /// The same for the step's own tasks, for comparison.
    pub step_cpu_stall_share: Option<f64>,
    /// In words.
    pub reason: String,
}
