//! One step of a job as every view reads it.

use super::read::{JobStep, StepStatus};
use crate::step::Step;

/// One step of a job and how it ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Entry {
    /// The step.
    pub step: Step,
    /// How it ended.
    pub status: StepStatus,
    /// The file it was read from.
    pub from: String,
    /// The group it belongs to (a BuildKit build's steps share one), when
    /// any: the trace draws a group's steps on one process track.
    pub group: Option<String>,
    /// Who finished it after its stepmon was killed (`stepmon gc`), when.
    pub collected: Option<stepmon_model::job::StepCollected>,
}

impl Entry {
    /// A step of a run file (or a provenance): it ended, with the run's exit
    /// status when the file has one.
    #[must_use]
    pub fn of_run(step: Step, from: String) -> Entry {
        let exit_code = step.run.as_ref().and_then(|r| r.exit_code.or(r.signal.map(|s| 128 + s))).unwrap_or(0);
        Entry { step, status: StepStatus::Ended { exit_code }, from, group: None, collected: None }
    }

    /// A step of a job record.
    #[must_use]
    pub fn of_job(step: &JobStep, from: String) -> Entry {
        Entry { step: step.to_step(), status: step.status(), from, group: None, collected: step.collected.clone() }
    }

    /// A step of a job record, taking its run document and samples rather
    /// than copying them ([`Entry::of_job`] for a step that is kept).
    #[must_use]
    pub fn from_job(step: JobStep, from: String) -> Entry {
        let (status, collected) = (step.status(), step.collected.clone());
        Entry { step: step.into_step(), status, from, group: None, collected }
    }

    /// The same entry in `group`.
    #[must_use]
    pub fn in_group(mut self, group: String) -> Entry {
        self.group = Some(group);
        self
    }
}
