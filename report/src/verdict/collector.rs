//! What stepmon itself cost while recording the step.

use super::pct;
use crate::step::Step;
use crate::units::seconds;
use stepmon_model::verdict::{CollectorVerdict, Thresholds};

/// Judges `step`; `None` unless stepmon recorded it.
#[must_use]
#[allow(clippy::cast_precision_loss)]
pub(crate) fn judge(step: &Step, thresholds: &Thresholds) -> Option<CollectorVerdict> {
    let c = &step.run.as_ref()?.collector;
    let cpu_share = c.cpu_seconds.zip(step.wall_seconds.filter(|w| *w > 0.0)).map(|(cpu, wall)| cpu / wall);
    let negligible = cpu_share.map(|s| s < thresholds.collector_cpu_share);
    let rss = c.max_rss_bytes.map_or_else(String::new, |b| format!(", peak RSS {:.1} MiB", b as f64 / 1048576.0));
    let cpu = match (c.cpu_seconds, cpu_share) {
        (Some(cpu), Some(share)) => format!("{} CPU ({} of the wall time)", seconds(cpu), pct(share)),
        (Some(cpu), None) => format!("{} CPU", seconds(cpu)),
        _ => "CPU not measured".to_owned(),
    };
    let head = match negligible {
        Some(true) => "collector overhead negligible",
        Some(false) => "collector overhead noticeable",
        None => "collector overhead",
    };
    let reason = format!("{head}: stepmon took {cpu}{rss}, {} step and {} machine samples", c.samples, c.sys_samples);
    Some(CollectorVerdict {
        negligible,
        cpu_seconds: c.cpu_seconds,
        cpu_share,
        max_rss_bytes: c.max_rss_bytes,
        samples: c.samples,
        sys_samples: c.sys_samples,
        reason,
    })
}
