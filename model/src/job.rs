//! The lines of a job record: the steps of one CI job (`stepmon run --job
//! FILE`) in one append-only JSON Lines file, a [`Record`] per line —
//! [`StepStart`], a [`SampleRecord`] per sample, a [`StepEventRecord`] per
//! event of a running step ([`crate::event::StepEvent`]), [`StepEnd`] with
//! the step in brief ([`StepBrief`]; records of earlier versions: the whole
//! run document), and [`StepCollected`] when `stepmon gc` cleaned up after a
//! killed stepmon. `stepmon-job` writes a job record, `stepmon-report` reads
//! one back; [`LiveSample`] is what the runner hands the writer as a step
//! runs.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::action::Action;
use crate::brief::StepBrief;
use crate::document::RunDocument;
use crate::event::StepEvent;
use crate::labels::Label;
use crate::sample::StepSample;

/// One line of a job record, tagged by `kind`. The tag comes first in every
/// line (serde writes an internally tagged enum's tag first), which lets
/// `stepmon_report::job::read` find a record glued to the end of a torn one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Record {
    /// A step started.
    StepStart(StepStart),
    /// A sample of a running step.
    Sample(Box<SampleRecord>),
    /// An event of a running step, appended as it happened (its run
    /// document's `stepmon.events` has it again once the step ends).
    StepEvent(StepEventRecord),
    /// A step ended.
    StepEnd(StepEnd),
    /// A step whose stepmon was killed was finished by `stepmon gc`: its
    /// cgroups killed and removed. The step stays interrupted (its end is
    /// still unknown); this says who cleaned up after it, and when.
    StepCollected(StepCollected),
}

/// A step started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepStart {
    /// The step's id in the job, unique across the steps of one job on one
    /// host: `<pid of stepmon>.<start, ns since the epoch>`.
    pub step: String,
    /// Its name (`stepmon run --name`, else the program's base name).
    pub name: String,
    /// Its labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<Label>,
    /// The command and its arguments.
    pub command: Vec<String>,
    /// When stepmon started it.
    pub start: Timestamp,
    /// The host's name.
    #[serde(default)]
    pub host: String,
    /// What the step builds, when a launcher ran it as an action of a
    /// build (`stepmon wrap`); absent in records of other steps and of
    /// older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
}

impl StepStart {
    /// A start record of `command`, named `name`, started at `start` by the
    /// process `pid`.
    #[must_use]
    pub fn new(pid: u32, start: Timestamp, name: String, command: Vec<String>) -> StepStart {
        StepStart {
            step: format!("{pid}.{}", start.as_nanosecond()),
            name,
            labels: Vec::new(),
            command,
            start,
            host: String::new(),
            action: None,
        }
    }
}

/// Whose sample a [`SampleRecord`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SampleOf {
    /// The step's own cgroup.
    Step,
    /// The enclosing cgroup (the step had none of its own; others' usage is
    /// in it too).
    Enclosing,
}

/// One sample of a running step as the runner hands it over while the step
/// runs (`stepmon_runner::StepOptions::live`), for a job record's writer
/// (`stepmon-job`) to append as a [`SampleRecord`] of its step.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LiveSample {
    /// Whose sample it is.
    pub of: SampleOf,
    /// The sample.
    pub sample: StepSample,
}

impl LiveSample {
    /// The sample `sample` of `of`.
    #[must_use]
    pub fn new(of: SampleOf, sample: StepSample) -> LiveSample {
        LiveSample { of, sample }
    }
}

/// One sample of a running step, as it was taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SampleRecord {
    /// The step's id ([`StepStart::step`]).
    pub step: String,
    /// Whose sample it is.
    pub of: SampleOf,
    /// The sample.
    pub sample: StepSample,
}

impl SampleRecord {
    /// The sample `sample` of `of` in the step `step`.
    #[must_use]
    pub fn new(step: String, of: SampleOf, sample: StepSample) -> SampleRecord {
        SampleRecord { step, of, sample }
    }
}

/// A step ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepEnd {
    /// The step's id ([`StepStart::step`]).
    pub step: String,
    /// When it ended.
    pub end: Timestamp,
    /// The status stepmon exited with for it (the step's code, 128 + N for
    /// a signal, 127 not found).
    pub exit_code: i32,
    /// Why it did not run, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The whole run document (what `stepmon run --output` writes), when it
    /// ran: what records of earlier versions hold, and what a writer keeps
    /// of a document that has no [`StepBrief`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<Box<RunDocument>>,
    /// The step in brief, when it ran: what the views of a job read of it
    /// (a few KB at most where its document is tens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brief: Option<Box<StepBrief>>,
}

impl StepEnd {
    /// Whether the end carries the step's samples (its document, or its
    /// brief's series): its sample lines say nothing more.
    #[must_use]
    pub fn carries_samples(&self) -> bool {
        self.document.is_some() || self.brief.is_some()
    }

    /// The end of the step `step` at `end` with `exit_code`.
    #[must_use]
    pub fn new(step: String, end: Timestamp, exit_code: i32) -> StepEnd {
        StepEnd { step, end, exit_code, error: None, document: None, brief: None }
    }
}

/// `stepmon gc` finished an interrupted step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepCollected {
    /// The step's id ([`StepStart::step`]).
    pub step: String,
    /// When its cgroups were removed.
    pub at: Timestamp,
    /// Who removed them (`stepmon gc`).
    pub by: String,
}

impl StepCollected {
    /// The step `step` collected by `by` at `at`.
    #[must_use]
    pub fn new(step: String, at: Timestamp, by: String) -> StepCollected {
        StepCollected { step, at, by }
    }
}

/// An event of a running step, in a job record: a `stepEvent` line.
///
/// ```
/// use stepmon_model::event::{MemoryBound, MemoryNearLimit, StepEvent};
/// use stepmon_model::job::{Record, StepEventRecord};
///
/// let memory = MemoryNearLimit::new(MemoryBound::OwnLimit, "memory.max".into(), 100, 95, 0.9);
/// let event = StepEvent::memory_near_limit("2026-12-04T10:00:00Z".parse()?, 9.5, memory);
/// let line = serde_json::to_string(&Record::StepEvent(StepEventRecord::new("7.1".into(), event)))?;
/// assert!(line.starts_with(r#"{"kind":"stepEvent","step":"7.1","event":{"at":"#), "{line}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepEventRecord {
    /// The step's id ([`StepStart::step`]).
    pub step: String,
    /// The event.
    pub event: StepEvent,
}

impl StepEventRecord {
    /// The event `event` of the step `step`.
    #[must_use]
    pub fn new(step: String, event: StepEvent) -> StepEventRecord {
        StepEventRecord { step, event }
    }
}
