//! What the step waited for, from its PSI stall time over the whole step.

use super::machine::online_cpus;
use super::pct;
use crate::step::Step;
use crate::units::seconds;
use stepmon_model::verdict::{
    Bottleneck, BottleneckVerdict, CpuStallCause, MachineLoad, MachineVerdict, Thresholds, ThrottlingVerdict,
};

/// Judges `step`; `throttling` and `machine` (its other verdicts) tell
/// the causes of a CPU stall apart.
#[must_use]
pub(crate) fn judge(
    step: &Step,
    thresholds: &Thresholds,
    throttling: &ThrottlingVerdict,
    machine: &MachineVerdict,
) -> BottleneckVerdict {
    let s = &step.summary;
    let shares = [
        (Bottleneck::CpuBound, "CPU", s.cpu_stall.some_share),
        (Bottleneck::MemoryBound, "memory", s.memory_stall.some_share),
        (Bottleneck::IoBound, "IO", s.io_stall.some_share),
    ];
    let measured: Vec<_> = shares.iter().filter_map(|(c, n, v)| v.map(|v| (*c, *n, v))).collect();
    let worst = measured.iter().copied().max_by(|a, b| a.2.total_cmp(&b.2));
    let cpu_stall_from_own_limit = throttling.throttled;
    let all = measured.iter().map(|(_, n, v)| format!("{n} {}", pct(*v))).collect::<Vec<_>>().join(", ");
    let stalled_seconds =
        [("CPU", s.cpu_stall.some_seconds), ("memory", s.memory_stall.some_seconds), ("IO", s.io_stall.some_seconds)]
            .into_iter()
            .filter_map(|(n, v)| Some(format!("{n} {}", seconds(v?))))
            .collect::<Vec<_>>();
    let machine_cpus = online_cpus(step);
    let mut cpu_stall_causes = Vec::new();
    let (class, reason) = match worst {
        None if !stalled_seconds.is_empty() => (
            Bottleneck::Unknown,
            format!(
                "bottleneck unknown: the step's wall time is unknown, so its stall time ({}) has no share",
                stalled_seconds.join(", ")
            ),
        ),
        None => (Bottleneck::Unknown, "bottleneck unknown: no stall time (PSI) was measured for the step".to_owned()),
        Some((class, name, share)) if share >= thresholds.stall_share => {
            let cause = if class == Bottleneck::CpuBound {
                let (causes, words) = cpu_causes(step, thresholds, throttling, machine, machine_cpus);
                cpu_stall_causes = causes;
                words
            } else {
                String::new()
            };
            (
                class,
                format!(
                    "{name}-bound: some task of the step waited for {name} {} of the wall time{cause} (stalled: {all}; threshold {})",
                    pct(share),
                    pct(thresholds.stall_share)
                ),
            )
        }
        Some(_) => (
            Bottleneck::NotStalled,
            format!(
                "not stalled: the step waited for no resource {} of the wall time or more (stalled: {all})",
                pct(thresholds.stall_share)
            ),
        ),
    };
    BottleneckVerdict {
        class,
        cpu_stall_share: s.cpu_stall.some_share,
        memory_stall_share: s.memory_stall.some_share,
        io_stall_share: s.io_stall.some_share,
        cpu_stall_from_own_limit,
        cpu_stall_causes,
        machine_cpus,
        reason,
    }
}

/// The causes of a CPU-bound step's stall that its numbers show, and the
/// words for the verdict (`; <cause>; <cause>` or `; cause unknown (...)`).
#[allow(clippy::cast_precision_loss)]
fn cpu_causes(
    step: &Step,
    thresholds: &Thresholds,
    throttling: &ThrottlingVerdict,
    machine: &MachineVerdict,
    cpus: Option<usize>,
) -> (Vec<CpuStallCause>, String) {
    let cores = step.summary.cpu.average_cores;
    let mut causes = Vec::new();
    let mut words = Vec::new();
    // Why a cause was not shown, for when none is.
    let mut not_shown = Vec::new();
    match (cores, cpus) {
        (Some(cores), Some(cpus)) if cores >= thresholds.own_cores_share * cpus as f64 => {
            causes.push(CpuStallCause::OwnParallelism);
            words.push(format!(
                "its own threads kept the machine's {cpus} CPUs busy ({cores:.2} cores on average, {} of them)",
                pct(cores / cpus as f64)
            ));
        }
        (Some(cores), Some(cpus)) => not_shown.push(format!("{cores:.2} cores on average of {cpus} CPUs")),
        (_, None) => words.push(
            "the machine's CPU count is unknown, so whether its own threads filled the CPUs is not known".to_owned(),
        ),
        (None, Some(_)) => not_shown.push("its CPU time is unknown".to_owned()),
    }
    match machine.class {
        MachineLoad::Busy => {
            causes.push(CpuStallCause::OtherWork);
            words.push("other work competed for the CPUs".to_owned());
        }
        MachineLoad::Quiet => not_shown.push("the machine quiet".to_owned()),
        _ => not_shown.push("the machine's load unknown".to_owned()),
    }
    match throttling.throttled {
        Some(true) => {
            causes.push(CpuStallCause::OwnLimit);
            words.push("its own cpu.max throttled it".to_owned());
        }
        Some(false) => not_shown.push("not throttled by its own cpu.max".to_owned()),
        None => not_shown.push("throttling not measured".to_owned()),
    }
    if causes.is_empty() {
        words.push(format!("cause unknown ({})", not_shown.join(", ")));
    }
    (causes, words.iter().map(|w| format!("; {w}")).collect())
}
