//! Lines of a job record back into steps, and the torn lines among them
//! (a line its writer's `write(2)` cut short) attributed to their steps.

use jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;
use stepmon_model::brief::StepBrief;
use stepmon_model::document::{RunDocument, RunInfo};
use stepmon_model::event::StepEvent;
use stepmon_model::job::{Record, SampleOf, SampleRecord, StepCollected, StepEnd, StepStart};
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
    fn new(id: String) -> JobStep {
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
        "stepEvent" => serde_json::from_str(line).ok().map(Record::StepEvent),
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

/// How a sample line starts as every writer lays it out (its `kind` first,
/// then its `step`).
const SAMPLE_START: &str = "{\"kind\":\"sample\",\"step\":\"";

/// The step id of a line laid out as a sample record, when the id has no
/// escapes (every writer's ids are `<pid>.<ns>`). Only the line's first
/// bytes are looked at: whether the line is a whole record is for the
/// caller to check.
fn sample_step(line: &str) -> Option<&str> {
    let (id, _) = line.strip_prefix(SAMPLE_START)?.split_once('"')?;
    (!id.contains('\\')).then_some(id)
}

/// A sample whose reading waits for the end of the file: a step whose
/// `stepEnd` carries its brief or its run document has its samples there,
/// so its sample lines are counted (or compared with them), not read again.
enum Deferred<'a> {
    /// A sample line of the step at `at` (with nothing glued to it).
    Line { at: usize, number: usize, line: &'a str, last: bool },
    /// A sample record glued to a torn line (read already, to tell it from
    /// the torn part), of the step at `at`.
    Glued { at: usize, sample: Box<SampleRecord> },
}

/// The record being read: the steps by id, with the line number each was
/// first read from (steps are ordered by it), and the samples whose
/// reading waits for the end of the file, in the file's order.
#[derive(Default)]
struct Reading<'a> {
    job: JobRecord,
    ids: std::collections::HashMap<String, usize>,
    first_line: Vec<Option<usize>>,
    deferred: Vec<Deferred<'a>>,
    /// Whether the deferred samples are being read (the file's end seen).
    reading_deferred: bool,
    /// Per step: how far its sample lines matched its document's samples.
    matched: Vec<Matched>,
    /// Whether the file's last line has no newline after it.
    ends_cut: bool,
    /// The torn lines and whose they were, as far as they say.
    torn: Vec<(TornLine, TornId)>,
}

/// How far the sample lines of a step matched its document's samples: the
/// next sample to match, and the last one written out (kept while lines
/// that are not in the document, e.g. thinned out of it, are read).
#[derive(Default)]
struct Matched {
    next: usize,
    written: Option<(usize, Vec<u8>)>,
}

/// Reads a job record's text: every line that parses, in order; lines that
/// do not are [`JobRecord::lost`] (a torn line followed, on the same line,
/// by a whole record keeps that record), lines of unknown kinds are
/// [`JobRecord::unknown`].
///
/// Every sample is in the record twice: on its sample line, appended as the
/// step ran (so that a killed step keeps it), and in the step's `stepEnd`:
/// in its brief's series, or in the run document of a record of an earlier
/// version. A step with a brief is read from it, its sample lines counted
/// ([`JobStep::sample_lines`]) and not read. A step that has a document is
/// read from it: each of its sample lines that is, byte for byte, that
/// document's next sample as the writer writes a sample line (the line the
/// writer wrote) is counted and not read again — it reads as that sample,
/// which was read already; any other sample line is read as ever (lost with
/// the same reason when it does not read).
#[must_use]
pub fn read(text: &str) -> JobRecord {
    let mut reading = Reading { ends_cut: !text.ends_with('\n'), ..Reading::default() };
    let mut lines = text.lines().enumerate().peekable();
    while let Some((index, line)) = lines.next() {
        let (number, last) = (index + 1, lines.peek().is_none());
        if line.trim().is_empty() {
            continue;
        }
        // A line with another record glued to it is read at once, the
        // glued record in its place.
        if let Some(id) = sample_step(line)
            && !line[1..].contains(RECORD_START)
        {
            let at = reading.index_of(id);
            reading.deferred.push(Deferred::Line { at, number, line, last });
            continue;
        }
        reading.line(number, line, last);
    }
    // Every end is known now.
    reading.reading_deferred = true;
    for deferred in std::mem::take(&mut reading.deferred) {
        match deferred {
            Deferred::Line { at, number, line, .. } if reading.in_document(at, line) => {
                reading.job.steps[at].sample_lines += 1;
                reading.read_at(at, number);
            }
            Deferred::Line { number, line, last, .. } => reading.line(number, line, last),
            Deferred::Glued { at, .. } if reading.documented(at) => reading.job.steps[at].sample_lines += 1,
            Deferred::Glued { at, sample } => reading.job.steps[at].add_sample(*sample),
        }
    }
    reading.finish()
}

impl JobStep {
    fn add_sample(&mut self, sample: SampleRecord) {
        self.samples_of.get_or_insert(sample.of);
        self.samples.push(sample.sample);
        self.sample_lines += 1;
    }
}

impl<'a> Reading<'a> {
    /// The index of step `id` in the steps, added when new.
    fn index_of(&mut self, id: &str) -> usize {
        if let Some(at) = self.ids.get(id) {
            return *at;
        }
        self.job.steps.push(JobStep::new(id.to_owned()));
        self.first_line.push(None);
        self.matched.push(Matched::default());
        self.ids.insert(id.to_owned(), self.job.steps.len() - 1);
        self.job.steps.len() - 1
    }

    /// Whether the step at `at` ended with its samples (its run document or
    /// its brief).
    fn documented(&self, at: usize) -> bool {
        self.job.steps[at].end.as_ref().is_some_and(StepEnd::carries_samples)
    }

    /// Whether `line`, a sample line of the step at `at`, is its run
    /// document's next sample as the writer lays out a sample line
    /// (`{"kind":"sample","step":ID,"of":OF,"sample":SAMPLE}`, serde's
    /// compact JSON of the record): the line the writer wrote for it, which
    /// reads as that sample.
    fn in_document(&mut self, at: usize, line: &str) -> bool {
        let step = &self.job.steps[at];
        // A brief's series is made of the samples its lines hold: not read again.
        if step.end.as_ref().is_some_and(|e| e.brief.is_some() && e.document.is_none()) {
            return line.starts_with(SAMPLE_START);
        }
        let Some(document) = step.end.as_ref().and_then(|e| e.document.as_deref()) else { return false };
        let Some(rest) = line.strip_prefix(SAMPLE_START).and_then(|r| r.strip_prefix(step.id.as_str())) else {
            return false;
        };
        let (samples, body) = if let Some(body) = rest.strip_prefix("\",\"of\":\"step\",\"sample\":") {
            (&document.resource_usage.samples, body)
        } else if let Some(body) = rest.strip_prefix("\",\"of\":\"enclosing\",\"sample\":")
            && let Some(enclosing) = document.stepmon.as_ref().and_then(|r| r.enclosing_cgroup.as_ref())
        {
            (&enclosing.samples, body)
        } else {
            return false;
        };
        let matched = &mut self.matched[at];
        let (Some(body), Some(sample)) = (body.strip_suffix('}'), samples.get(matched.next)) else { return false };
        let written = match &mut matched.written {
            Some((index, bytes)) if *index == matched.next => bytes,
            slot => {
                let mut bytes = slot.take().map(|(_, b)| b).unwrap_or_default();
                bytes.clear();
                if serde_json::to_writer(&mut bytes, sample).is_err() {
                    return false;
                }
                &mut slot.insert((matched.next, bytes)).1
            }
        };
        let same = body.as_bytes() == written.as_slice();
        matched.next += usize::from(same);
        same
    }

    /// Line `number` was read for the step at `at`.
    fn read_at(&mut self, at: usize, number: usize) {
        let first = &mut self.first_line[at];
        *first = Some(first.map_or(number, |f| f.min(number)));
    }

    /// Reads line `number`, `line` (`last`: the file's last line).
    fn line(&mut self, number: usize, line: &'a str, last: bool) {
        let lost = |reason: String, bytes: usize| Lost { line: number, bytes, last, torn: false, reason };
        match parse(line) {
            Parsed::Record(record) => self.add(number, *record),
            Parsed::Unknown(kind) => self.job.unknown.push(Unknown { line: number, kind }),
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
                        self.job.lost.push(Lost { last: false, torn: true, ..lost(reason, at) });
                        self.torn.push((TornLine { line: number, bytes: at }, step_of(&line[..at])));
                        match *record {
                            // Its place among the step's samples is this
                            // line's: it waits with the others.
                            Record::Sample(sample) if !self.reading_deferred => {
                                let step = self.index_of(&sample.step);
                                self.read_at(step, number);
                                self.deferred.push(Deferred::Glued { at: step, sample });
                            }
                            record => self.add(number, record),
                        }
                    }
                    None if last && self.ends_cut => {
                        self.job.lost.push(Lost { torn: true, ..lost(reason, line.len()) });
                        self.torn.push((TornLine { line: number, bytes: line.len() }, step_of(line)));
                    }
                    None => self.job.lost.push(lost(reason, line.len())),
                }
            }
        }
    }

    fn add(&mut self, number: usize, record: Record) {
        let id = match &record {
            Record::StepStart(r) => &r.step,
            Record::Sample(r) => &r.step,
            Record::StepEnd(r) => &r.step,
            Record::StepCollected(r) => &r.step,
            Record::StepEvent(r) => &r.step,
        };
        let at = self.index_of(id);
        self.read_at(at, number);
        let step = &mut self.job.steps[at];
        match record {
            Record::StepStart(start) => step.start = Some(start),
            Record::Sample(sample) => step.add_sample(*sample),
            Record::StepEnd(end) => step.end = Some(end),
            Record::StepCollected(collected) => step.collected = Some(collected),
            Record::StepEvent(record) => step.events.push(record.event),
        }
    }

    /// The steps in the order of the first line read of each (a sample line
    /// whose reading was deferred keeps its place), the lost lines in
    /// order. A step of whose lines none could be read is no step.
    fn finish(self) -> JobRecord {
        let Reading { mut job, first_line, torn, .. } = self;
        // A torn line is its writer's last: why its step has no end.
        for (line, id) in torn {
            if let Some(at) = owner(&job.steps, &id)
                && job.steps[at].end.is_none()
            {
                job.steps[at].torn = Some(line);
            }
        }
        let mut steps: Vec<(usize, JobStep)> =
            first_line.into_iter().zip(job.steps).filter_map(|(first, step)| Some((first?, step))).collect();
        steps.sort_by_key(|(first, _)| *first);
        job.steps = steps.into_iter().map(|(_, step)| step).collect();
        // A sample glued to a torn line was read on the way: the document
        // has it too.
        for step in job.steps.iter_mut().filter(|s| s.end.as_ref().is_some_and(StepEnd::carries_samples)) {
            step.samples.clear();
            step.samples_of = None;
        }
        job.lost.sort_by_key(|lost| lost.line);
        job
    }
}

// Torn lines: a line its writer's `write(2)` cut short.
//
// The writer appends each line with one `write(2)` (`stepmon-job`); a
// write reaches the page cache whole before it returns, so a stepmon killed
// (even by SIGKILL) leaves whole lines only. A line is cut short when the
// write was short: the file system filled up mid-line (write(2): "the
// number of bytes written may be less than count if, for example, there is
// insufficient space on the underlying physical medium"), or the host went
// away before the page reached the disk. Such a line is the file's last
// (no newline after it), or another step's line follows it on the same
// line. Its first bytes still say whose it was, as far as they got.

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

/// How far a torn line got into its step's id: every writer starts a
/// line with `{"kind":"KIND","step":"ID"` (its `kind` first, then `step`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TornId {
    /// The whole id (its closing quote was written).
    Whole(String),
    /// The id's first bytes (maybe none): the line stops in it or before.
    Partial(String),
}

/// Whose `torn` (a line's written bytes) was.
pub(crate) fn step_of(torn: &str) -> TornId {
    const STEP: &str = "\",\"step\":\"";
    let after_kind = torn.strip_prefix("{\"kind\":\"").and_then(|rest| rest.split_once(STEP)).map(|(_, id)| id);
    match after_kind {
        Some(id) => match id.split_once('"') {
            Some((id, _)) => TornId::Whole(id.to_owned()),
            None => TornId::Partial(id.to_owned()),
        },
        None => TornId::Partial(String::new()),
    }
}

/// The step among `steps` that a torn line of `id` was of: the one with
/// that id; for a partial id, the only step without an end whose id starts
/// with it (a torn line is its writer's last: its step's end never came).
pub(crate) fn owner(steps: &[JobStep], id: &TornId) -> Option<usize> {
    match id {
        TornId::Whole(id) => steps.iter().position(|s| s.id == *id),
        TornId::Partial(part) => {
            let mut open = steps.iter().enumerate().filter(|(_, s)| s.end.is_none() && s.id.starts_with(part.as_str()));
            match (open.next(), open.next()) {
                (Some((at, _)), None) => Some(at),
                _ => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stepmon_model::event::{MemoryBound, MemoryNearLimit};
    use stepmon_model::job::{SampleRecord, StepEventRecord};

    /// A memory event at `at`, 9.5 s into its step.
    fn event(at: Timestamp) -> StepEvent {
        let memory = MemoryNearLimit::new(MemoryBound::OwnLimit, "memory.max".into(), 100 << 20, 95 << 20, 0.9);
        StepEvent::memory_near_limit(at, 9.5, memory)
    }

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
            Record::StepEvent(StepEventRecord::new("7.1".to_owned(), event(at))),
        ];
        for record in records {
            let line = written(&record);
            assert_eq!(by_kind(&line).as_ref(), Some(&record), "{line}");
            assert!(matches!(parse(&line), Parsed::Record(r) if *r == record));
        }
    }

    #[test]
    fn the_sample_lines_the_writer_writes_are_found_in_the_document() {
        let at: Timestamp = "2026-12-01T10:00:00Z".parse().unwrap();
        let sample = |cpu: u64| -> StepSample {
            serde_json::from_str(&format!(
                r#"{{"timestamp": "2026-12-01T10:00:01Z", "cpuStat": {{"usageNanos": {cpu}}}, "memoryStat": {{"anon": 7}}}}"#
            ))
            .unwrap()
        };
        let mut document = RunDocument::default();
        document.resource_usage.samples = vec![sample(1), sample(2)];
        let mut end = StepEnd::new("7.1".to_owned(), at, 0);
        end.document = Some(Box::new(document));
        let sample_line =
            |cpu| written(&Record::Sample(Box::new(SampleRecord::new("7.1".to_owned(), SampleOf::Step, sample(cpu)))));
        let (end_line, first, second, other) =
            (written(&Record::StepEnd(end)), sample_line(1), sample_line(2), sample_line(3));
        let mut reading = Reading::default();
        reading.line(1, &end_line, false);
        // In order; a line that is not the next one is not matched (and
        // the next stays next).
        assert!(!reading.in_document(0, &second));
        assert!(reading.in_document(0, &first));
        assert!(!reading.in_document(0, &other));
        assert!(reading.in_document(0, &second));
        assert!(!reading.in_document(0, &second), "each document sample once");
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

    #[test]
    fn an_interrupted_or_brief_steps_events_come_from_its_lines_a_documented_ones_from_its_document() {
        let at: Timestamp = "2026-12-01T10:00:00Z".parse().unwrap();
        let start = StepStart::new(7, at, "build".to_owned(), vec!["make".to_owned()]);
        let id = start.step.clone();
        let event_line = written(&Record::StepEvent(StepEventRecord::new(id.clone(), event(at))));
        let text = format!("{}\n{event_line}\n", written(&Record::StepStart(start)));
        let record = read(&text);
        assert!(record.unknown.is_empty() && record.lost.is_empty(), "{record:?}");
        let [step] = record.steps.as_slice() else { panic!("{record:?}") };
        assert_eq!(step.events, [event(at)]);
        // Interrupted: its step has them from the lines.
        assert_eq!(step.to_step().run.unwrap().events, [event(at)]);
        // Ended with a document: the document's (which has them too).
        let mut end = StepEnd::new(id, at, 137);
        let mut document = RunDocument::default();
        document.stepmon =
            Some(RunInfo { events: vec![event(at), event(at)], start: Some(at), end: Some(at), ..RunInfo::default() });
        end.document = Some(Box::new(document.clone()));
        let record = read(&format!("{text}{}\n", written(&Record::StepEnd(end.clone()))));
        assert_eq!(record.steps[0].to_step().run.unwrap().events.len(), 2, "the document's");
        // Ended in brief (which keeps no events): the lines'.
        end.brief = Some(Box::new(StepBrief::of(&document).unwrap()));
        end.document = None;
        let record = read(&format!("{text}{}\n", written(&Record::StepEnd(end))));
        assert_eq!(record.steps[0].to_step().run.unwrap().events, [event(at)]);
    }

    #[test]
    fn a_torn_line_names_its_step_as_far_as_it_got() {
        assert_eq!(step_of(r#"{"kind":"sample","step":"7.1","of":"st"#), TornId::Whole("7.1".to_owned()));
        assert_eq!(step_of(r#"{"kind":"stepEnd","step":"7."#), TornId::Partial("7.".to_owned()));
        assert_eq!(step_of(r#"{"kind":"stepE"#), TornId::Partial(String::new()));
        assert_eq!(step_of(""), TornId::Partial(String::new()));
    }
}
