//! Whether the rest of the machine was busy while the step ran.

use super::pct;
use crate::step::Step;
use stepmon_model::verdict::{MachineLoad, MachineVerdict, Thresholds};

/// The machine's CPU `some` stall share between its first and last sample
/// inside the step's time (all of them when the step's times are unknown).
#[allow(clippy::cast_precision_loss)]
fn machine_cpu_stall(step: &Step) -> Option<f64> {
    let inside = |t: jiff::Timestamp| {
        // Half a second of slack on each side; at the ends of the time
        // range, no bound.
        let slack = jiff::SignedDuration::from_millis(500);
        let after = step.start.and_then(|s| s.checked_sub(slack).ok()).is_none_or(|s| t >= s);
        let before = step.end.and_then(|e| e.checked_add(slack).ok()).is_none_or(|e| t <= e);
        after && before
    };
    let readings: Vec<(jiff::Timestamp, u64)> = step
        .usage
        .sys_usage
        .iter()
        .filter(|s| inside(s.timestamp))
        .filter_map(|s| Some((s.timestamp, s.cpu_pressure?.some?.total?)))
        .collect();
    let (first, last) = (readings.first()?, readings.last()?);
    let seconds = last.0.duration_since(first.0).as_secs_f64();
    (seconds > 0.0).then(|| last.1.saturating_sub(first.1) as f64 / 1e6 / seconds)
}

pub(crate) use crate::cpus::online_cpus;

/// Judges `step`.
#[must_use]
pub(crate) fn judge(step: &Step, thresholds: &Thresholds) -> MachineVerdict {
    let m = &step.summary.machine;
    let machine_stall = machine_cpu_stall(step);
    let mut signs = Vec::new();
    if let Some(o) = m.others_busy_share.filter(|o| *o >= thresholds.others_busy_share) {
        signs.push(format!("other work used {} of all CPU time", pct(o)));
    }
    if let Some(s) = m.steal_share.filter(|s| *s >= thresholds.steal_share) {
        signs.push(format!("the hypervisor stole {}", pct(s)));
    }
    // The machine's pressure includes the step's own stalls (its tasks
    // are the machine's too, and throttled ones count as waiting): only
    // what exceeds the step's stall share points at others.
    // A step stall without a share (wall time unknown) cannot be subtracted.
    let step_stall = match (step.summary.cpu_stall.some_share, step.summary.cpu_stall.some_seconds) {
        (Some(share), _) => Some(share),
        (None, Some(_)) => None,
        (None, None) => Some(0.0),
    };
    let beyond_step = machine_stall.zip(step_stall).map(|(p, own)| p - own);
    if let Some(p) = beyond_step.filter(|p| *p >= thresholds.machine_stall_share) {
        signs.push(format!("tasks outside the step waited for CPU at least {} of the time", pct(p)));
    }
    let known = m.others_busy_share.is_some() || m.steal_share.is_some() || machine_stall.is_some();
    let numbers = [
        m.cpu_busy_share.map(|b| format!("CPUs {} busy", pct(b))),
        m.others_busy_share.map(|o| format!("others {}", pct(o))),
        m.steal_share.map(|s| format!("steal {}", pct(s))),
        machine_stall.map(|p| format!("machine CPU stall {}", pct(p))),
        step.summary.cpu_stall.some_share.map(|p| format!("step CPU stall {}", pct(p))),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ");
    let (class, reason) = if !signs.is_empty() {
        (MachineLoad::Busy, format!("machine busy: {} ({numbers})", signs.join("; ")))
    } else if known {
        (MachineLoad::Quiet, format!("machine quiet: {numbers}"))
    } else {
        (MachineLoad::Unknown, "machine load unknown: no machine CPU numbers over the step".to_owned())
    };
    MachineVerdict {
        class,
        cpu_busy_share: m.cpu_busy_share,
        others_busy_share: m.others_busy_share,
        steal_share: m.steal_share,
        machine_cpu_stall_share: machine_stall,
        step_cpu_stall_share: step.summary.cpu_stall.some_share,
        reason,
    }
}
