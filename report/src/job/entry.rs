//! One step of a job as every view reads it.

use stepmon_model::action::Action;

use super::read::{JobStep, StepStatus};
use crate::step::Step;

/// One step of a job and how it ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Entry {
    /// The step. When its action names what it builds
    /// ([`Action::names_what_it_builds`]), its name is the action's words
    /// (`serde 1.0.219 (lib)`): every view of the step shows it so.
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
    /// What it builds, when a launcher ran it as an action of a build
    /// (`stepmon wrap`): its start line's
    /// [`StepStart::action`](stepmon_model::job::StepStart::action).
    pub action: Option<Action>,
}

impl Entry {
    /// A step of a run file (or a provenance): it ended, with the run's exit
    /// status when the file has one.
    #[must_use]
    pub fn of_run(step: Step, from: String) -> Entry {
        let exit_code = step.run.as_ref().and_then(|r| r.exit_code.or(r.signal.map(|s| 128 + s))).unwrap_or(0);
        Entry { step, status: StepStatus::Ended { exit_code }, from, group: None, collected: None, action: None }
    }

    /// A step of a job record.
    #[must_use]
    pub fn of_job(step: &JobStep, from: String) -> Entry {
        let action = step.start.as_ref().and_then(|s| s.action.clone());
        let (status, collected) = (step.status(), step.collected.clone());
        Entry { step: step.to_step(), status, from, group: None, collected, action }.named_by_action()
    }

    /// A step of a job record, taking its run document and samples rather
    /// than copying them ([`Entry::of_job`] for a step that is kept).
    #[must_use]
    pub fn from_job(step: JobStep, from: String) -> Entry {
        let action = step.start.as_ref().and_then(|s| s.action.clone());
        let (status, collected) = (step.status(), step.collected.clone());
        Entry { step: step.into_step(), status, from, group: None, collected, action }.named_by_action()
    }

    /// The same entry in `group`.
    #[must_use]
    pub fn in_group(mut self, group: String) -> Entry {
        self.group = Some(group);
        self
    }

    /// The entry with its step named by its action, when that names what
    /// it builds: the words are made here, where the step is shown, and
    /// the record keeps the typed action.
    fn named_by_action(mut self) -> Entry {
        if let Some(action) = self.action.as_ref().filter(|a| a.names_what_it_builds()) {
            self.step.name = action.to_string();
        }
        self
    }

    /// Its name in a list of the job's steps: the words of its action when
    /// that names what it builds (two compiles of one compiler differ by
    /// what they build), else [`Step::label`] (its name and a short form of
    /// its command, so that two steps of one program stay apart).
    #[must_use]
    pub fn label(&self) -> String {
        match &self.action {
            Some(action) if action.names_what_it_builds() => self.step.name.clone(),
            // A CI script's command is its shell and a temporary file: its
            // first command line tells it apart instead.
            Some(Action::Script(script)) => match &script.line {
                Some(line) if *line != self.step.name => format!("{} ({line})", self.step.name),
                _ => self.step.name.clone(),
            },
            _ => self.step.label(),
        }
    }
}
