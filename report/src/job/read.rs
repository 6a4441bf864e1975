//! Lines of a job record back into steps.

use jiff::Timestamp;
use serde_json::Value;
use stepmon_sampler::model::StepSample;

use super::record::{Record, SampleOf, StepEnd, StepStart};
use crate::document::{RunDocument, RunInfo};
use crate::source::EnclosingCgroup;
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
    /// Its samples as they were taken.
    pub samples: Vec<StepSample>,
    /// Whose samples they are (of the first sample line).
    pub samples_of: Option<SampleOf>,
    /// Its end line (`None`: it never ended in the record).
    pub end: Option<StepEnd>,
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
    /// Its result came from a cache: it did not run (a BuildKit step).
    Cached,
    /// The record has no end for it: stepmon was killed (or its host went
    /// away, or the disk filled) while it ran.
    Interrupted {
        /// The time of its last line in the record.
        record_ends: Option<Timestamp>,
    },
}

impl JobStep {
    fn new(id: String) -> JobStep {
        JobStep { id, start: None, samples: Vec::new(), samples_of: None, end: None }
    }

    /// How it ended.
    #[must_use]
    pub fn status(&self) -> StepStatus {
        match &self.end {
            Some(StepEnd { error: Some(error), exit_code, .. }) => {
                StepStatus::NotRun { exit_code: *exit_code, error: error.clone() }
            }
            Some(end) => StepStatus::Ended { exit_code: end.exit_code },
            None => StepStatus::Interrupted { record_ends: self.last_recorded() },
        }
    }

    /// The time of its last sample, else of its start.
    #[must_use]
    pub fn last_recorded(&self) -> Option<Timestamp> {
        self.samples.last().map(|s| s.timestamp).or(self.start.as_ref().map(|s| s.start))
    }

    /// The step as every view reads it: its run document when it ended, else
    /// one made of its start and the samples it had, its wall time up to
    /// its last sample, its end unknown.
    #[must_use]
    pub fn to_step(&self) -> Step {
        if let Some(document) = self.end.as_ref().and_then(|e| e.document.as_deref()) {
            return Step::from_run(document);
        }
        let mut info = RunInfo::default();
        if let Some(start) = &self.start {
            info.command.clone_from(&start.command);
            info.name = Some(start.name.clone());
            info.labels.clone_from(&start.labels);
            info.start = Some(start.start);
        } else {
            info.name = Some(format!("step {}", self.id));
        }
        let mut document = RunDocument::default();
        match &self.end {
            Some(end) => {
                info.exit_code = Some(end.exit_code);
                info.end = Some(end.end);
            }
            None => {
                let first = info.start.or(self.samples.first().map(|s| s.timestamp));
                if let (Some(first), Some(last)) = (first, self.last_recorded()) {
                    info.summary.wall_seconds = last.duration_since(first).as_secs_f64().max(0.0);
                }
                if self.samples_of == Some(SampleOf::Enclosing) {
                    let mut enclosing = EnclosingCgroup::default();
                    enclosing.samples.clone_from(&self.samples);
                    info.enclosing_cgroup = Some(enclosing);
                } else {
                    document.resource_usage.samples.clone_from(&self.samples);
                }
            }
        }
        document.stepmon = Some(info);
        Step::from_run(&document)
    }
}

/// A line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Lost {
    /// Its number in the file, from 1.
    pub line: usize,
    /// Its length, bytes.
    pub bytes: usize,
    /// Whether it is the file's last line (a torn write: the writer died or
    /// the disk filled while appending it).
    pub last: bool,
    /// What was wrong with it.
    pub reason: String,
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.last { "the last line, cut short (a torn write)" } else { "unreadable" };
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

enum Parsed {
    Record(Box<Record>),
    Unknown(String),
    Bad(String),
}

fn parse(line: &str) -> Parsed {
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(e) => return Parsed::Bad(e.to_string()),
    };
    let Some(kind) = value.get("kind").and_then(Value::as_str) else {
        return Parsed::Bad("not a record (no \"kind\")".to_owned());
    };
    if !matches!(kind, "stepStart" | "sample" | "stepEnd") {
        return Parsed::Unknown(kind.to_owned());
    }
    match serde_json::from_value::<Record>(value) {
        Ok(record) => Parsed::Record(Box::new(record)),
        Err(e) => Parsed::Bad(e.to_string()),
    }
}

/// The start of a record: what follows a torn line when another writer
/// appended after it.
const RECORD_START: &str = "{\"kind\":\"";

/// Reads a job record's text: every line that parses, in order; lines that
/// do not are [`JobRecord::lost`] (a torn line followed, on the same line,
/// by a whole record keeps that record), lines of unknown kinds are
/// [`JobRecord::unknown`].
#[must_use]
pub fn read(text: &str) -> JobRecord {
    let mut job = JobRecord::default();
    // Step id → its index in `job.steps`.
    let mut ids = std::collections::HashMap::new();
    let count = text.lines().count();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let lost = |reason: String, bytes: usize| Lost { line: number, bytes, last: number == count, reason };
        match parse(line) {
            Parsed::Record(record) => add(&mut job, &mut ids, *record),
            Parsed::Unknown(kind) => job.unknown.push(Unknown { line: number, kind }),
            Parsed::Bad(reason) => {
                let glued =
                    line.match_indices(RECORD_START).filter(|(at, _)| *at > 0).find_map(|(at, _)| {
                        match parse(&line[at..]) {
                            Parsed::Record(record) => Some((at, record)),
                            _ => None,
                        }
                    });
                match glued {
                    Some((at, record)) => {
                        job.lost.push(Lost { last: false, ..lost(reason, at) });
                        add(&mut job, &mut ids, *record);
                    }
                    None => job.lost.push(lost(reason, line.len())),
                }
            }
        }
    }
    job
}

fn add(job: &mut JobRecord, ids: &mut std::collections::HashMap<String, usize>, record: Record) {
    let id = match &record {
        Record::StepStart(r) => &r.step,
        Record::Sample(r) => &r.step,
        Record::StepEnd(r) => &r.step,
    };
    let at = *ids.entry(id.clone()).or_insert_with(|| {
        job.steps.push(JobStep::new(id.clone()));
        job.steps.len() - 1
    });
    let step = &mut job.steps[at];
    match record {
        Record::StepStart(start) => step.start = Some(start),
        Record::Sample(sample) => {
            step.samples_of.get_or_insert(sample.of);
            step.samples.push(sample.sample);
        }
        Record::StepEnd(end) => step.end = Some(end),
    }
}
