//! Whether the step's own `cpu.max` held it back.

use serde::{Deserialize, Serialize};

use super::{Thresholds, pct};
use crate::step::Step;
use crate::units::seconds;

/// The step against its own CPU limit (`cpu.stat` `throttled_usec`,
/// `nr_throttled`; <https://docs.kernel.org/admin-guide/cgroup-v2.html#cpu-interface-files>).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ThrottlingVerdict {
    /// Throttled for at least [`Thresholds::throttled_share`] of the wall
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

impl ThrottlingVerdict {
    /// Judges `step`.
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn of(step: &Step, thresholds: &Thresholds) -> ThrottlingVerdict {
        let cpu = &step.summary.cpu;
        let wall = step.wall_seconds.filter(|w| *w > 0.0);
        let share = cpu.throttled_seconds.zip(wall).map(|(t, w)| t / w);
        let last = step.usage.resource_usage.samples.last();
        let limit_cores = last.and_then(|s| {
            let quota = match s.stepmon.cpu_max_quota_usec? {
                stepmon_sampler::model::LimitJson::Value(q) => q,
                stepmon_sampler::model::LimitJson::Max(_) => return None,
            };
            let period = s.stepmon.cpu_max_period_usec.filter(|p| *p > 0)?;
            Some(quota as f64 / period as f64)
        });
        let throttled = share.map(|s| s >= thresholds.throttled_share);
        let limit = limit_cores.map_or_else(String::new, |c| format!(" (cpu.max {c:.2} cores)"));
        let reason = match (throttled, cpu.throttled_seconds, share) {
            (Some(true), Some(t), Some(s)) => format!(
                "throttled: its own cpu.max{limit} held it back {}, {} of the wall time, in {} periods",
                seconds(t),
                pct(s),
                cpu.throttled_periods.unwrap_or(0)
            ),
            (Some(false), Some(t), Some(s)) => {
                format!("not throttled: {} ({}) held back by its own cpu.max{limit}", seconds(t), pct(s))
            }
            _ if cpu.throttled_seconds.is_none() => {
                "throttling not measured: no cpu.stat throttling counters for the step".to_owned()
            }
            _ => "throttling not judged: the step's wall time is unknown".to_owned(),
        };
        ThrottlingVerdict {
            throttled,
            throttled_seconds: cpu.throttled_seconds,
            throttled_share: share,
            throttled_periods: cpu.throttled_periods,
            limit_cores,
            reason,
        }
    }
}
