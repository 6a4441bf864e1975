//! Whether the step's own `cpu.max` held it back.

use serde::{Deserialize, Serialize};

/// The step against its own CPU limit (`cpu.stat` `throttled_usec`,
/// `nr_throttled`; <https://docs.kernel.org/admin-guide/cgroup-v2.html#cpu-interface-files>).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThrottlingVerdict {
    /// Throttled for at least [`Thresholds::throttled_share`](super::Thresholds::throttled_share) of the wall
    /// time; `None` when not measured (no cpu controller for the step).
    pub throttled: Option<bool>,
    /// Time throttled, s.
    pub throttled_seconds: Option<f64>,
    /// Throttled time / wall time.
    pub throttled_share: Option<f64>,
    /// Enforcement periods in which the step was throttled.
    pub throttled_periods: Option<u32>,
    /// The step's `cpu.max` quota in cores, when it had one.
    pub limit_cores: Option<f64>,
    /// In words.
    pub reason: String,
}
