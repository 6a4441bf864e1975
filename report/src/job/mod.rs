//! A CI job's record: the steps of one job (`stepmon run --job FILE`) in one
//! append-only JSON Lines file, and the job they make when read back.
//!
//! Each line is one [`Record`]: a [`StepStart`] when a step starts, a
//! [`SampleRecord`] for each of its samples as it is taken, a [`StepEnd`]
//! with its whole run document when it ends. Steps of one job may run at
//! once and append to the same file; their lines interleave and are told
//! apart by [`StepStart::step`]. A writer (`stepmon run --job`, or a
//! builder through the libraries) turns each record into a line with
//! [`line()`] and appends it with a single `write(2)` (`stepmon_outfile::Appender`),
//! so a line is either whole or, when the writer
//! died or the disk filled mid-write, the file's torn last line: [`read`]
//! names such lines as lost and keeps everything else, and a step whose
//! `stepEnd` never came is [`StepStatus::Interrupted`], with the samples it
//! had — never dropped, never presented as complete.
//!
//! No I/O here: [`read`] takes the file's text, [`line()`] gives the bytes.
//!
//! ```
//! use stepmon_report::job::{self, Record, StepStart, StepStatus};
//!
//! let start = StepStart::new(41, "2026-12-04T10:00:00Z".parse()?, "build".into(), vec!["make".into()]);
//! let text = String::from_utf8(job::line(&Record::StepStart(start))?)?;
//! assert!(job::looks_like_record(&text));
//! let record = job::read(&text);
//! assert!(matches!(record.steps[0].status(), StepStatus::Interrupted { .. }));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod entry;
mod read;
mod table;
mod text;
mod torn;
mod verdict;
pub mod views;

pub use entry::Entry;
pub use read::{JobRecord, JobStep, Lost, StepStatus, Unknown, read};
pub use stepmon_model::job::{Record, SampleOf, SampleRecord, StepCollected, StepEnd, StepStart};
pub use text::{render, to_json};
pub use torn::TornLine;
pub use verdict::{CPU_STARVED_SHARE, JobVerdict, MEMORY_BOUND_HEADROOM, OVER_PROVISIONED_SHARE};

/// `record` as one line of a job record: its JSON (`kind` first) and a
/// newline, to be appended with one `write(2)`.
///
/// # Errors
/// serde_json's, should a value not serialise.
pub fn line(record: &Record) -> Result<Vec<u8>, serde_json::Error> {
    let mut line = serde_json::to_vec(record)?;
    line.push(b'\n');
    Ok(line)
}

/// Whether `text` is a job record rather than a run document or a
/// provenance: its first line is a record (`{"kind":...`), also when that
/// line is torn.
#[must_use]
pub fn looks_like_record(text: &str) -> bool {
    text.trim_start().starts_with("{\"kind\":")
}
