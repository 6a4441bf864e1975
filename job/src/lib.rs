//! A CI job's record, written as its steps run: the steps of one job in one
//! append-only JSON Lines file, a [`Record`] per line — what `stepmon run
//! --job FILE` writes and `stepmon report FILE` reads back
//! (`stepmon_report::job::read`).
//!
//! * [`JobWriter`]: one step's lines. [`JobWriter::open`] appends its
//!   [`StepStart`](stepmon_model::job::StepStart) (made by [`start()`]), [`JobWriter::append_sample`] each
//!   [`LiveSample`](stepmon_model::job::LiveSample) the runner hands over as it takes it (or
//!   [`JobWriter::follow`], on a thread of its own), and [`JobWriter::end`]
//!   its [`StepEnd`] with the step in brief
//!   ([`StepBrief`](stepmon_model::brief::StepBrief): what a job's views
//!   read of it, not its whole run document), then syncs the file when
//!   its [`Durability`] says so (by default at the end of a step of
//!   [`LONG_STEP`] or longer).
//! * [`JobWriter::events`]: an [`EventAppender`] for the step's events
//!   ([`StepEvent`](stepmon_model::event::StepEvent), a `stepEvent` line each) as they happen, from any
//!   thread.
//! * [`line()`]: a record as one line, the bytes every writer appends.
//! * [`action`]: what a build action builds, from its command line and
//!   cargo's environment ([`action::identify`]): the name a launcher
//!   (`stepmon wrap`) gives its step's start line
//!   ([`StepStart::action`](stepmon_model::job::StepStart::action)).
//! * [`build`]: the variables `stepmon build` sets for a build (cargo's
//!   `RUSTC_WRAPPER`, CMake's launchers, make's `CC`), chaining a wrapper
//!   set already.
//! * [`mark_orphans`]: what `stepmon gc` does for the steps of killed
//!   writers (a `stepCollected` line each), by the markers
//!   ([`MarkerDirs`]) every writer leaves while its step runs; the
//!   markers of writers still running ([`MarkerDirs::running`]) say which
//!   record each running step is in (`stepmon top`).
//!
//! Each line goes out in one `write(2)` on an `O_APPEND` descriptor
//! (`stepmon_outfile::Appender`), so any number of writers — steps running
//! at once, in one process or many — share one record without tearing each
//! other's lines. A failed or short write (a full disk) stops the record of
//! that step, never the step: the writer keeps why ([`JobWriter::stopped`],
//! [`EndReport`]) and prints nothing; the caller says it.
//!
//! Only `stepmon-model`, `stepmon-outfile`, serde, jiff and the
//! `/proc/PID/stat` parser of `stepmon-sysusage`: a builder that runs steps
//! with `stepmon-runner` writes the record without compiling the exports of
//! `stepmon-report`.
//!
//! ```
//! use stepmon_job::JobWriter;
//! use stepmon_model::job::{LiveSample, Record, SampleOf};
//! use stepmon_model::sample::StepSample;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("job.jsonl");
//! let command = vec!["make".to_owned(), "-j8".to_owned()];
//! let mut writer = JobWriter::open(&path, stepmon_job::start(Some("build"), &[], &command))?;
//! let sample: StepSample = serde_json::from_str(r#"{"timestamp": "2026-12-04T10:00:00Z"}"#)?;
//! assert!(writer.append_sample(LiveSample::new(SampleOf::Step, sample)).is_written());
//! let report = writer.end(0, None, None);
//! assert!(report.stopped.is_none() && report.sync.is_none());
//!
//! let text = std::fs::read_to_string(&path)?;
//! let kinds: Vec<&str> = text.lines().map(|l| l.split('"').nth(3).unwrap_or("")).collect();
//! assert_eq!(kinds, ["stepStart", "sample", "stepEnd"]);
//! let first: Record = serde_json::from_str(text.lines().next().unwrap_or(""))?;
//! assert!(matches!(first, Record::StepStart(start) if start.name == "build"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod action;
pub mod build;
mod durability;
mod error;
mod events;
mod marker;
mod start;
mod stop;
mod writer;

pub use durability::{Durability, LONG_STEP};
pub use error::JobError;
pub use events::EventAppender;
pub use marker::{Collected, MarkerDirs, RunningMarker, mark_collected, mark_orphans};
pub use start::start;
pub use stop::Appended;
pub use writer::{EndReport, JobWriter};

use stepmon_model::job::{Record, StepEnd};

/// `record` as one line of a job record: its JSON, compact, `kind` first
/// (serde writes an internally tagged enum's tag first), and a newline — to
/// be appended with one `write(2)`. A step's end in brief leaves out the
/// brief's fields that are not known (`null`) and its empty words (a
/// source's `covers`): a reader takes them as absent, as it would `null`.
///
/// The reader relies on this layout: it finds a record glued to the end of
/// a torn line by its leading `{"kind":"`, and tells a sample line that
/// repeats a sample of its step's run document by its bytes.
///
/// # Errors
/// serde_json's, should a value not serialise.
pub fn line(record: &Record) -> Result<Vec<u8>, serde_json::Error> {
    let mut line = match record {
        Record::StepEnd(end) if end.brief.is_some() => end_in_brief(end)?,
        record => serde_json::to_vec(record)?,
    };
    line.push(b'\n');
    Ok(line)
}

/// The line of `end`, which has a brief: serde's layout of the record with
/// the brief last (where serde writes it: `StepEnd` declares it last),
/// written without its `null` and empty-string members. A brief of a step of
/// milliseconds has a dozen of them (a summary's unmeasured numbers, each
/// exact source's `covers`): about 170 bytes of a 2 KB record.
fn end_in_brief(end: &StepEnd) -> Result<Vec<u8>, serde_json::Error> {
    let mut head = end.clone();
    let mut brief = serde_json::to_value(head.brief.take())?;
    leave_out_unknown(&mut brief);
    let mut line = serde_json::to_vec(&Record::StepEnd(head))?;
    // `{..."exitCode":0}` → `{..."exitCode":0,"brief":{...}}`
    line.pop();
    line.extend_from_slice(b",\"brief\":");
    serde_json::to_writer(&mut line, &brief)?;
    line.push(b'}');
    Ok(line)
}

/// `value` without the members of its objects (at any depth) that are
/// `null` or `""`; arrays keep every element (a column's `null` is a
/// sample's, in its place).
fn leave_out_unknown(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(members) => {
            members.retain(|_, v| !(v.is_null() || v.as_str() == Some("")));
            members.values_mut().for_each(leave_out_unknown);
        }
        Value::Array(items) => items.iter_mut().for_each(leave_out_unknown),
        _ => {}
    }
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
