//! What stepmon's recorded step usage means.
//!
//! * [`Step`] — one measured step: a `stepmon run` document
//!   ([`stepmon_model::document::RunDocument`], read with
//!   [`Step::from_run`]) or a BuildKit step, with its summary.
//! * [`verdict`] — why a step was slow (CPU-, memory- or IO-bound from PSI
//!   stall time, throttled by its own `cpu.max`), whether the machine was
//!   busy, OOM kills and limit hits, and what stepmon itself cost — each with
//!   the numbers behind it and the thresholds it was judged by
//!   ([`stepmon_model::verdict::Verdicts`], [`stepmon_model::verdict::Thresholds`]).
//! * [`advice`] — how many parallel workers the step's memory and cores hold.
//! * [`text`] — the human summary; [`units`] — the numbers as people read them.
//! * [`diff`] — two runs of the same step, field by field, with changes
//!   beyond the noise flagged.
//! * [`job`] — a CI job's record read back, its table and its verdict.
//!
//! The formats tools read are `stepmon-export`'s (and `stepmon-otlp`'s);
//! reading provenance and build history bundles is `stepmon-import`'s.
//! No I/O happens here: callers pass text or values in and get text or
//! values out. The types of what is judged and of the verdicts are
//! `stepmon-model`'s, named by their one path there; this crate defines
//! what it computes (steps, diffs, job tables) and re-exports none of them.
//!
//! ```
//! use stepmon_model::document::RunDocument;
//! use stepmon_report::Step;
//!
//! let json = r#"{"resourceUsage": {"samples": [
//!     {"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {"usageNanos": 0}, "pidsStat": {}},
//!     {"timestamp": "2026-11-30T10:00:02Z", "cpuStat": {"usageNanos": 1500000000}, "pidsStat": {}}]},
//!   "sysUsage": [],
//!   "stepmon": {"command": ["make"], "exitCode": 0,
//!     "start": "2026-11-30T10:00:00Z", "end": "2026-11-30T10:00:02Z"}}"#;
//! let document: RunDocument = serde_json::from_str(json)?;
//! let step = Step::from_run(&document);
//! assert_eq!(step.summary.cpu.average_cores, Some(0.75));
//! let verdicts = step.verdicts();
//! assert!(verdicts.bottleneck.reason.starts_with("bottleneck unknown"));
//! # Ok::<(), serde_json::Error>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod advice;
pub mod build;
pub mod compose;
mod cpus;
pub mod diff;
pub mod event;
pub mod fixed;
pub mod job;
pub mod processes;
pub mod series;
pub mod source;
pub mod step;
pub mod text;
pub mod units;
pub mod verdict;

pub use step::{Origin, Step, WallSource};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
