//! What a step's recording yields: BuildKit's `resourceUsage` (`Samples`)
//! and `sysUsage`, plus stepmon's additions.

use serde::{Deserialize, Serialize};

use super::step::StepSample;
use crate::missing::Missing;
use crate::system::{SysCPUStat, SysCpuDeltaExt, SysSample};

/// BuildKit's `Samples` (the value of a step's `resourceUsage`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Samples {
    /// Periodic samples, thinned, then the final sample.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub samples: Vec<StepSample>,
    /// Whole-machine `/proc/stat` CPU time between the step's start and its
    /// end, seconds.
    #[serde(rename = "sysCPUStat", skip_serializing_if = "Option::is_none", default)]
    pub sys_cpu_stat: Option<SysCPUStat>,
    /// stepmon's additions.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stepmon: Option<SamplesExt>,
}

/// stepmon's additions to [`Samples`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplesExt {
    /// Steal share, wall time and per-CPU breakdown of the `sysCPUStat` delta.
    pub sys_cpu: Option<SysCpuDeltaExt>,
    /// Why anything of the recording as a whole is absent (e.g. `sysCPUStat`).
    #[serde(default)]
    pub missing: Vec<Missing>,
}

/// Everything recorded for one step: its samples and the machine's samples
/// over the same time.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepUsage {
    /// The step's samples (BuildKit's `resourceUsage`).
    pub resource_usage: Samples,
    /// The machine's samples during the step (BuildKit's `sysUsage`).
    #[serde(default)]
    pub sys_usage: Vec<SysSample>,
}
