//! Whether the step's own `cpu.max` held it back.

use super::pct;
use crate::step::Step;
use crate::units::seconds;
use stepmon_model::verdict::{Thresholds, ThrottlingVerdict};

/// Judges `step`.
#[must_use]
#[allow(clippy::cast_precision_loss)]
pub(crate) fn judge(step: &Step, thresholds: &Thresholds) -> ThrottlingVerdict {
    let cpu = &step.summary.cpu;
    let wall = step.wall_seconds.filter(|w| *w > 0.0);
    let share = cpu.throttled_seconds.zip(wall).map(|(t, w)| t / w);
    let last = step.usage.resource_usage.samples.last();
    let limit_cores = last.and_then(|s| {
        let quota = match s.stepmon.cpu_max_quota_usec? {
            stepmon_model::sample::LimitJson::Value(q) => q,
            stepmon_model::sample::LimitJson::Max(_) => return None,
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
