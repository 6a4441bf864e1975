//! A CI job's record read back: the steps of one job (`stepmon run --job
//! FILE`) in one append-only JSON Lines file, and the job they make.
//!
//! Each line is one [`Record`]: a [`StepStart`] when a step starts, a
//! [`SampleRecord`] for each of its samples as it is taken, a [`StepEnd`]
//! with the step in brief when it ends (records of earlier versions: its
//! whole run document). Steps of one job may run at
//! once and append to the same file; their lines interleave and are told
//! apart by [`StepStart::step`]. The writer is `stepmon-job`'s `JobWriter`
//! (`stepmon run --job`, or a builder through the libraries): it turns each
//! record into a line (`stepmon_job::line`: compact JSON, `kind` first) and
//! appends it with a single `write(2)` (`stepmon_outfile::Appender`), so a
//! line is either whole or, when the writer died or the disk filled
//! mid-write, the file's torn last line: [`read`] names such lines as lost
//! and keeps everything else, and a step whose `stepEnd` never came is
//! [`StepStatus::Interrupted`], with the samples it had — never dropped,
//! never presented as complete.
//!
//! No I/O here: [`read`] takes the file's text.
//!
//! ```
//! use stepmon_model::job::{Record, StepStart};
//! use stepmon_report::job::{self, StepStatus};
//!
//! let start = StepStart::new(41, "2026-12-04T10:00:00Z".parse()?, "build".into(), vec!["make".into()]);
//! // The line a writer appends (`stepmon_job::line`).
//! let text = serde_json::to_string(&Record::StepStart(start))? + "\n";
//! assert!(job::looks_like_record(&text));
//! let record = job::read(&text);
//! assert!(matches!(record.steps[0].status(), StepStatus::Interrupted { .. }));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(doc)]
use stepmon_model::job::{Record, SampleRecord, StepEnd, StepStart};

pub mod axis;
mod entry;
pub mod notable;
mod reach;
mod read;
mod record;
pub mod table;
mod text;
mod verdict;

pub use entry::Entry;
use stepmon_model::source::Rung;

/// Whether `step`'s memory is not its own: a step without a cgroup of its
/// own is measured by the cgroup around it or the machine
/// ([`Rung::EnclosingCgroup`], [`Rung::Machine`]), which hold other
/// processes too, so that its memory numbers bound the step's from above.
/// A job's views leave such numbers out of its sums (two steps in one
/// enclosing cgroup would count it twice) and mark them in its table. (The
/// step's own v1 cgroup whose peak is an upper bound, never reset, is
/// still the step's alone: it stays.)
#[must_use]
pub fn memory_not_own(step: &crate::Step) -> bool {
    step.sources.memory.as_ref().is_some_and(|s| matches!(s.rung, Rung::EnclosingCgroup | Rung::Machine))
}
pub use read::{JobRecord, JobStep, Lost, StepStatus, TornLine, Unknown, read};
pub use text::{render, to_json};
pub use verdict::{CPU_STARVED_SHARE, JobVerdict, MEMORY_BOUND_HEADROOM, OVER_PROVISIONED_SHARE, SIZING_MIN_SECONDS};

/// Whether `text` is a job record rather than a run document or a
/// provenance: its first line is a record (`{"kind":...`), also when that
/// line is torn.
#[must_use]
pub fn looks_like_record(text: &str) -> bool {
    text.trim_start().starts_with("{\"kind\":")
}
