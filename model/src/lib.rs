//! The data stepmon records, each type defined once: what a run of a
//! measured step produces, what a job record holds, and what `stepmon
//! report` reads back.
//!
//! * [`sample`] — BuildKit's per-step `Sample` / `Samples` JSON
//!   (`resourceUsage`) with stepmon's additions, a recording
//!   ([`StepUsage`]) and its summary numbers ([`UsageSummary`]).
//! * [`system`] — BuildKit's whole-machine `SysSample` (`sysUsage`).
//! * [`network`] — BuildKit's `NetworkSample`.
//! * [`missing`] — why a reading lacks something ([`Missing`]).
//! * [`document`] — the run document `stepmon run -o` writes
//!   ([`RunDocument`]: the two BuildKit keys plus a `stepmon` object).
//! * [`source`] — where each number came from (the rung of the placement
//!   ladder) and its bound.
//! * [`processes`] — the step's processes one by one, bounded.
//! * [`result`] — a finished step's numbers as a small typed value, each
//!   with its source, bound and reason, and stepmon's own cost.
//! * [`summary`] — the numbers a person reads first, computed from the
//!   samples and the sources (pure arithmetic: the runner fills them as a
//!   step ends).
//! * [`verdict`] — what the numbers mean, as `stepmon-report` judged them.
//! * [`advice`] — what to change next time (the parallelism a step's
//!   memory and cores hold), as `stepmon-report` advised it.
//! * [`labels`] — a step's name, labels and CI context.
//! * [`action`] — what one action of a build builds (a crate, an object,
//!   a link's output), as a launcher named it.
//! * [`job`] — the lines of a job record, and the live samples a job
//!   record's writer takes from the runner.
//! * [`brief`] — a step that ran, in brief: what a job record's end line
//!   keeps of it in place of its whole document.
//! * [`event`] — what happened while a step ran (its memory near what
//!   bounds it), as it happened.
//! * [`progress`] — a running step's numbers now, from two of its samples.
//!
//! Only serde and jiff: no I/O, no kernel calls — the readers
//! (`stepmon-sysusage`, `stepmon-sampler`) and the runner
//! (`stepmon-runner`) fill these types, and `stepmon-report` computes
//! verdicts and exports from them. It builds on every platform,
//! `wasm32-unknown-unknown` included. `docs/data-model.md` describes the
//! document field by field.
//!
//! ```
//! use stepmon_model::RunDocument;
//!
//! let json = r#"{"resourceUsage": {"samples": [
//!     {"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {"usageNanos": 1500000000}, "pidsStat": {}}]},
//!   "sysUsage": [],
//!   "stepmon": {"command": ["make"], "exitCode": 0}}"#;
//! let document: RunDocument = serde_json::from_str(json)?;
//! let run = document.stepmon.as_ref().unwrap();
//! assert_eq!(run.exit_code, Some(0));
//! let cpu = document.resource_usage.samples[0].cpu_stat.and_then(|c| c.usage_nanos);
//! assert_eq!(cpu, Some(1_500_000_000));
//! # Ok::<(), serde_json::Error>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod action;
pub mod advice;
pub mod brief;
pub mod document;
pub mod event;
mod float;
pub mod job;
pub mod labels;
pub mod missing;
pub mod network;
pub mod processes;
pub mod progress;
pub mod result;
pub mod sample;
pub mod source;
pub mod summary;
pub mod system;
pub mod verdict;

pub use document::{Collector, Host, NotEnabled, RunDocument, RunInfo};
pub use float::round_millis;
pub use job::{LiveSample, SampleOf};
pub use labels::{CiContext, Label};
pub use missing::{Missing, MissingKind};
pub use sample::{StepSample, StepUsage, UsageSummary};
pub use source::{Bound, Group, Rung, Source, Sources};
pub use verdict::Verdicts;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
