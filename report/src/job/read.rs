//! Lines of a job record back into steps.

use jiff::Timestamp;
use serde_json::Value;
use stepmon_sampler::model::StepSample;

use super::record::{Record, SampleOf, StepCollected, StepEnd, StepStart};
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
    /// Who finished it after its stepmon was killed (`stepmon gc`), when.
    pub collected: Option<StepCollected>,
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
    },
    /// BuildKit took it from its cache: it did not run, so it has no usage
    /// (shown as "cached", never as a step that used nothing).
    Cached,
}

impl JobStep {
    fn new(id: String) -> JobStep {
        JobStep { id, start: None, samples: Vec::new(), samples_of: None, end: None, collected: None }
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
                    info.summary.wall_seconds = Some(last.duration_since(first).as_secs_f64().max(0.0));
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

/// A known record read straight into its kind's struct. serde reads an
/// internally tagged enum ([`Record`]) by first buffering the whole line
/// into a tree of its own (serde's private `Content`: an allocation per key
/// and string) and then reading the variant out of that tree — two passes
/// over every line, most of the time of a large job's report. Every writer
/// of a record (serde) writes the tag first, so the line's first bytes name
/// the kind; the kind's struct skips the `kind` field as it skips any field
/// it does not know. `None` when the line does not start that way or does
/// not read as that kind: the caller reads it as before.
fn by_kind(line: &str) -> Option<Record> {
    let (kind, _) = line.strip_prefix(RECORD_START)?.split_once('"')?;
    match kind {
        "sample" => serde_json::from_str(line).ok().map(|s| Record::Sample(Box::new(s))),
        "stepEnd" => serde_json::from_str(line).ok().map(Record::StepEnd),
        "stepStart" => serde_json::from_str(line).ok().map(Record::StepStart),
        "stepCollected" => serde_json::from_str(line).ok().map(Record::StepCollected),
        _ => None,
    }
}

fn parse(line: &str) -> Parsed {
    if let Some(record) = by_kind(line) {
        return Parsed::Record(Box::new(record));
    }
    // The common case in one pass; only a line that is not a known record
    // is read again, to tell an unknown kind from a broken line.
    if let Ok(record) = serde_json::from_str::<Record>(line) {
        return Parsed::Record(Box::new(record));
    }
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(e) => return Parsed::Bad(e.to_string()),
    };
    let Some(kind) = value.get("kind").and_then(Value::as_str) else {
        return Parsed::Bad("not a record (no \"kind\")".to_owned());
    };
    if !matches!(kind, "stepStart" | "sample" | "stepEnd" | "stepCollected") {
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
        Record::StepCollected(r) => &r.step,
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
        Record::StepCollected(collected) => step.collected = Some(collected),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::record::SampleRecord;

    fn written(record: &Record) -> String {
        serde_json::to_string(record).expect("JSON")
    }

    #[test]
    fn each_kind_as_written_reads_straight_into_its_struct() {
        let at: Timestamp = "2026-12-01T10:00:00Z".parse().unwrap();
        let sample: StepSample = serde_json::from_str(r#"{"timestamp": "2026-12-01T10:00:01Z"}"#).unwrap();
        let records = [
            Record::StepStart(StepStart::new(7, at, "build".to_owned(), vec!["make".to_owned()])),
            Record::Sample(Box::new(SampleRecord::new("7.1".to_owned(), SampleOf::Step, sample))),
            Record::StepEnd(StepEnd::new("7.1".to_owned(), at, 3)),
            Record::StepCollected(StepCollected::new("7.1".to_owned(), at, "stepmon gc".to_owned())),
        ];
        for record in records {
            let line = written(&record);
            assert_eq!(by_kind(&line).as_ref(), Some(&record), "{line}");
            assert!(matches!(parse(&line), Parsed::Record(r) if *r == record));
        }
    }

    #[test]
    fn lines_not_led_by_a_known_kind_are_left_to_the_tagged_read() {
        // Another key first (a hand-written or re-serialised line): the
        // tagged read still reads it.
        let line = r#"{"step":"7.1","at":"2026-12-01T10:00:00Z","by":"gc","kind":"stepCollected"}"#;
        assert_eq!(by_kind(line), None);
        assert!(matches!(parse(line), Parsed::Record(r) if matches!(*r, Record::StepCollected(_))));
        // Led by a known kind but not that kind's fields: the same error as
        // the tagged read gives.
        let broken = r#"{"kind":"stepEnd","step":"7.1"}"#;
        assert_eq!(by_kind(broken), None);
        let expected = serde_json::from_str::<Record>(broken).unwrap_err().to_string();
        assert!(matches!(parse(broken), Parsed::Bad(reason) if reason == expected));
        assert!(matches!(parse(r#"{"kind":"future","x":1}"#), Parsed::Unknown(k) if k == "future"));
    }
}
