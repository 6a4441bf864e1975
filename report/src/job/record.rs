//! A job record's steps as the report reads them: each step's start, its
//! samples, its end (whole document or brief) and its events; what was lost
//! and what was not understood. Filled by `super::read`.

use jiff::Timestamp;
use serde::Serialize;
use stepmon_model::brief::StepBrief;
use stepmon_model::document::{RunDocument, RunInfo};
use stepmon_model::event::StepEvent;
use stepmon_model::job::{SampleOf, StepCollected, StepEnd, StepStart};
use stepmon_model::sample::StepSample;
use stepmon_model::source::EnclosingCgroup;

use crate::step::Step;

/// What a job record holds.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct JobRecord {
    /// The steps, in the order of their first line.
    pub steps: Vec<JobStep>,
    /// Lines that could not be read.
    pub lost: Vec<Lost>,
    /// Lines of a kind this version does not know (a newer writer's), skipped.
    pub unknown: Vec<Unknown>,
}

/// One step of a job record.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct JobStep {
    /// Its id in the job.
    pub id: String,
    /// Its start line (`None` when that line was lost).
    pub start: Option<StepStart>,
    /// Its samples as they were taken, read from its sample lines when its
    /// end does not carry them (an interrupted step, or one that could not
    /// run); empty when its end has its run document or its brief.
    pub samples: Vec<StepSample>,
    /// How many whole sample records of it the record holds (read or not).
    pub sample_lines: usize,
    /// Whose samples they are (of its first sample line; `None` when none
    /// was read, as when its end has a run document or a brief).
    pub samples_of: Option<SampleOf>,
    /// Its events (`stepEvent` lines: its memory near what bounds it), in
    /// the order they were appended. A run document in its end (records of
    /// earlier versions) has them again (`stepmon.events`); a brief end has
    /// none, nor has an interrupted step: its step ([`JobStep::to_step`])
    /// has them from here.
    pub events: Vec<StepEvent>,
    /// Its end line (`None`: it never ended in the record).
    pub end: Option<StepEnd>,
    /// Who finished it after its stepmon was killed (`stepmon gc`), when.
    pub collected: Option<StepCollected>,
    /// Its line that was cut short (a short write: the disk filled) when
    /// it never ended: why its record stops.
    pub torn: Option<TornLine>,
}

/// How a step of a job record ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StepStatus {
    /// It ran to its end; stepmon exited with `exit_code` for it.
    Ended {
        /// The step's exit status.
        exit_code: i32,
    },
    /// It could not run (e.g. command not found).
    NotRun {
        /// The exit status stepmon gave.
        exit_code: i32,
        /// Why.
        error: String,
    },
    /// The record has no end for it: stepmon was killed (or its host went
    /// away, or the disk filled) while it ran.
    Interrupted {
        /// The time of its last line in the record.
        record_ends: Option<Timestamp>,
        /// Its line cut short by a short write, when its record stops with
        /// one: the disk may have filled (a killed stepmon tears no line).
        torn: Option<TornLine>,
    },
    /// BuildKit took it from its cache: it did not run, so it has no usage
    /// (shown as "cached", never as a step that used nothing).
    Cached,
}

impl JobStep {
    pub(super) fn new(id: String) -> JobStep {
        JobStep {
            id,
            start: None,
            samples: Vec::new(),
            sample_lines: 0,
            samples_of: None,
            events: Vec::new(),
            end: None,
            collected: None,
            torn: None,
        }
    }

    /// How it ended.
    #[must_use]
    pub fn status(&self) -> StepStatus {
        match &self.end {
            Some(StepEnd { error: Some(error), exit_code, .. }) => {
                StepStatus::NotRun { exit_code: *exit_code, error: error.clone() }
            }
            Some(end) => StepStatus::Ended { exit_code: end.exit_code },
            None => StepStatus::Interrupted { record_ends: self.last_recorded(), torn: self.torn },
        }
    }

    /// The time of its last sample, else of its start.
    #[must_use]
    pub fn last_recorded(&self) -> Option<Timestamp> {
        self.samples.last().map(|s| s.timestamp).or(self.start.as_ref().map(|s| s.start))
    }

    /// The step as every view reads it: its run document (or its brief)
    /// when it ended, else one made of its start and the samples it had,
    /// its wall time up to its last sample, its end unknown.
    #[must_use]
    pub fn to_step(&self) -> Step {
        self.clone().into_step()
    }

    /// [`JobStep::to_step`], taking the step's run document and samples
    /// rather than copying them.
    #[must_use]
    pub fn into_step(self) -> Step {
        let last_recorded = self.last_recorded();
        let JobStep { id, start, samples, samples_of, events, end, .. } = self;
        if let Some(StepEnd { document: Some(document), .. }) = end {
            return Step::from_run_document(*document);
        }
        if let Some(StepEnd { brief: Some(brief), exit_code, end, .. }) = &end {
            return from_brief(brief, start, *exit_code, *end, events);
        }
        let mut info = RunInfo { events, ..RunInfo::default() };
        if let Some(start) = start {
            info.command = start.command;
            info.name = Some(start.name);
            info.labels = start.labels;
            info.start = Some(start.start);
        } else {
            info.name = Some(format!("step {id}"));
        }
        let mut document = RunDocument::default();
        match &end {
            Some(end) => {
                info.exit_code = Some(end.exit_code);
                info.end = Some(end.end);
            }
            None => {
                let first = info.start.or(samples.first().map(|s| s.timestamp));
                if let (Some(first), Some(last)) = (first, last_recorded) {
                    info.summary.wall_seconds = Some(last.duration_since(first).as_secs_f64().max(0.0));
                }
                if samples_of == Some(SampleOf::Enclosing) {
                    info.enclosing_cgroup = Some(EnclosingCgroup { samples, ..EnclosingCgroup::default() });
                } else {
                    document.resource_usage.samples = samples;
                }
            }
        }
        document.stepmon = Some(info);
        Step::from_run_document(document)
    }
}

/// The step of a brief end: the brief's document with the start line's
/// command, name and labels, the end line's exit status and end and the
/// record's `events` (a brief has none of its own), its summary the
/// brief's (computed from the whole document, which its series, a part of
/// it, would not give again).
fn from_brief(
    brief: &StepBrief,
    start: Option<StepStart>,
    exit_code: i32,
    end: Timestamp,
    events: Vec<StepEvent>,
) -> Step {
    let mut document = brief.to_document();
    if let Some(info) = document.stepmon.as_mut() {
        if let Some(start) = start {
            (info.command, info.name, info.labels) = (start.command, Some(start.name), start.labels);
        }
        info.exit_code = brief.signal.is_none().then_some(exit_code);
        info.end = Some(end);
        info.events = events;
    }
    let mut step = Step::from_run_document(document);
    step.summary = brief.summary.clone();
    step.largest_process.clone_from(&brief.largest_process);
    step
}

/// A line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Lost {
    /// Its number in the file, from 1.
    pub line: usize,
    /// Its length, bytes.
    pub bytes: usize,
    /// Whether it is the file's last line.
    pub last: bool,
    /// Whether it was cut short (a short write: the disk filled, or the host
    /// went away, while its writer appended it): the file's last line with
    /// no newline after it, or a line another record was glued to.
    pub torn: bool,
    /// What was wrong with it.
    pub reason: String,
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match (self.torn, self.last) {
            (true, true) => "the last line, cut short (a torn write: the disk may have filled)",
            (true, false) => "cut short (a torn write: the disk may have filled), another line glued after it",
            (false, true) => "the last line, unreadable",
            (false, false) => "unreadable",
        };
        write!(f, "line {} ({} bytes) lost: {what}: {}", self.line, self.bytes, self.reason)
    }
}

/// A line of a kind this version does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unknown {
    /// Its number in the file, from 1.
    pub line: usize,
    /// Its `kind`.
    pub kind: String,
}

/// A line of the record cut short (a short write), attributed to a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TornLine {
    /// Its number in the file, from 1.
    pub line: usize,
    /// How many of its bytes were written.
    pub bytes: usize,
}
