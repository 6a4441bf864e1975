//! The parallelism advice ([`stepmon_report::advice`]) as a gauge: the job count the
//! step's memory and cores hold, labelled by the worker command (`worker`) (a kernel
//! `comm`, 15 bytes at most, one per step) and what bounds it (`limited_by`, three
//! values), so the label sets stay bounded.

use stepmon_model::advice::LimitedBy;

use super::{Family, Kind, Value};

/// The `limited_by` label's value.
pub(super) fn limited_by(l: LimitedBy) -> &'static str {
    match l {
        LimitedBy::Memory => "memory",
        LimitedBy::Cpu => "cpu",
        LimitedBy::None => "none",
    }
}

pub(super) const FAMILIES: &[Family] = &[Family {
    name: "stepmon_step_suggested_jobs",
    kind: Kind::Gauge,
    unit: None,
    help: "How many of the step's parallel workers its memory (p95 worker peak, 10% headroom) and cores hold (docs/parallelism.md).",
    points: |x| {
        let Some(advice) = x.step.advice().parallelism else { return Vec::new() };
        let (Some(jobs), Some(command), Some(limit)) = (advice.suggested_jobs, advice.command, advice.limited_by)
        else {
            return Vec::new();
        };
        vec![(vec![("worker", command), ("limited_by", limited_by(limit).to_owned())], Value::Unsigned(jobs))]
    },
}];
