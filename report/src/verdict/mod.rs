//! Verdicts: what a step's numbers mean, each with the numbers behind it
//! and the threshold it was judged by ([`Thresholds`]).
//!
//! * [`BottleneckVerdict`] — what the step waited for, from PSI stall-time
//!   deltas over the whole step (not `avg10`, which forgets after 10 s).
//! * [`ThrottlingVerdict`] — whether its own `cpu.max` held it back.
//! * [`MachineVerdict`] — whether the machine was busy with other work
//!   (others' share of CPU, steal, the machine's CPU pressure).
//! * [`MemoryVerdict`] — OOM kills, `memory.max`/`memory.high` hits, peak
//!   against the limit, page cache against anonymous memory.
//! * [`CollectorVerdict`] — what stepmon itself cost.
//! * `job::JobVerdict` — whether a job of many steps had the right machine
//!   (in the job module: it judges a job's steps).

mod bottleneck;
mod collector;
mod machine;
mod memory;
mod throttling;

pub(crate) use machine::online_cpus;

use std::fmt::Write as _;

use crate::step::Step;
use stepmon_model::source::Bound;
use stepmon_model::verdict::{Bottleneck, MachineVerdict, MemoryOutcome, Thresholds, Verdicts};
#[cfg(doc)]
use stepmon_model::verdict::{BottleneckVerdict, CollectorVerdict, MemoryVerdict, ThrottlingVerdict};

impl Step {
    /// What the numbers mean: [`of`] this step.
    #[must_use]
    pub fn verdicts(&self) -> Verdicts {
        of(self)
    }
}

/// The verdicts on `step` with the default thresholds.
#[must_use]
pub fn of(step: &Step) -> Verdicts {
    with_thresholds(step, Thresholds::default())
}

/// The verdicts on `step` judged by `thresholds`.
#[must_use]
pub fn with_thresholds(step: &Step, thresholds: Thresholds) -> Verdicts {
    let throttling = throttling::judge(step, &thresholds);
    let mut memory = memory::judge(step, &thresholds);
    // Stall times that are not the step's own (the enclosing cgroup's,
    // the machine's) cannot be subtracted from the machine's pressure.
    let shared_pressure = step.sources.pressure.as_ref().filter(|s| !s.is_exact_for_step());
    let machine = match shared_pressure {
        Some(_) => {
            let mut alone = step.clone();
            alone.summary.cpu_stall = stepmon_model::sample::StallSummary::default();
            let mut machine = machine::judge(&alone, &thresholds);
            // Nothing of the step's own to subtract: the machine's stall
            // is everyone's, the step's included.
            machine.reason = machine.reason.replace(
                "tasks outside the step waited for CPU at least",
                "tasks (the step's among them) waited for CPU",
            );
            machine
        }
        None => machine::judge(step, &thresholds),
    };
    let mut bottleneck = bottleneck::judge(step, &thresholds, &throttling, &machine);
    match shared_pressure {
        // The whole machine's stall says nothing of the step's own.
        Some(source) if source.rung == stepmon_model::source::Rung::Machine => {
            let shares: Vec<String> = [
                ("CPU", bottleneck.cpu_stall_share),
                ("memory", bottleneck.memory_stall_share),
                ("IO", bottleneck.io_stall_share),
            ]
            .into_iter()
            .filter_map(|(name, share)| Some(format!("{name} {}", pct(share?))))
            .collect();
            bottleneck.class = Bottleneck::Unknown;
            bottleneck.reason = format!(
                "bottleneck unknown: the step has no stall times of its own, only the whole machine's ({}: {})",
                source.covers,
                shares.join(", ")
            );
        }
        Some(source) => {
            bottleneck.reason = bottleneck.reason.replace("of the step", "of the enclosing cgroup");
            let _ = write!(bottleneck.reason, "; stall times of {}, not of the step alone", source.covers);
        }
        None => {}
    }
    if let Some(source) = step.sources.memory.as_ref().filter(|s| !s.is_exact_for_step()) {
        let what = match source.bound {
            Bound::LowerBound => "at least: the peak is a lower bound",
            Bound::UpperBound => "at most: the peak is an upper bound",
            Bound::Exact => "exact",
        };
        let _ = write!(memory.reason, "; memory of {} ({what})", source.covers);
    }
    // An OOM kill's fix: the job count the advice found to fit.
    if memory.class == MemoryOutcome::OomKilled
        && let advice = crate::advice::parallelism(step)
        && let (Some(jobs), Some(command)) = (advice.suggested_jobs, advice.command.as_deref())
    {
        let _ = write!(memory.reason, "; fix: run at most {jobs} {command} at once (-j{jobs})");
    }
    Verdicts { bottleneck, machine, memory, collector: collector::judge(step, &thresholds), throttling, thresholds }
}

/// The machine verdict alone on `step` (the diff's busy-machine tolerance).
#[must_use]
pub fn machine_of(step: &Step, thresholds: &Thresholds) -> MachineVerdict {
    machine::judge(step, thresholds)
}

/// `0.123` → `12.3%` (verdict sentences).
pub(crate) use crate::units::percent as pct;
