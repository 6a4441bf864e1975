//! Did this step get worse? stepmon's measurements of many runs kept in one
//! SQLite file, and the tests that tell a change from run-to-run noise.
//!
//! * [`RunRecord`] — one run of one step: what makes it comparable with
//!   others ([`RunKey`]: step, labels, repository, job, runner class), its
//!   time, commit, machine verdict and [`Measure`]s.
//! * [`Store`] (Linux) — the file: safe for two processes adding at once,
//!   readable with the `sqlite3` shell, its schema versioned.
//! * [`check`] — a run's metrics against the last runs of its key, by a
//!   percent, z, t or IQR [`Test`] with floors below which nothing is
//!   flagged; runs on a busy machine are left out of the wall, CPU and
//!   stall baselines.
//! * [`render`] — the verdicts as text, JSON, Markdown or Bencher Metric
//!   Format.
//! * [`trends`] and [`show`] — each stored run judged against the runs
//!   before it (`stepmon baseline show`), as a table, JSON, SVG or HTML.
//! * [`prometheus`] — the runs a fleet's exports left in a Prometheus-API
//!   server, read from its `query_range` answers, each run once.
//!
//! ```
//! use stepmon_history::{Machine, Measure, Policy, RunKey, RunRecord, Verdict, check};
//! let key = RunKey { step: "build".into(), runner_class: "Linux-X64".into(), ..RunKey::default() };
//! let run = |i: i64, cpu: f64| RunRecord {
//!     key: key.clone(), branch: None, commit: None, machine: Machine::Quiet,
//!     time: jiff::Timestamp::from_second(1_800_000_000 + i).unwrap(),
//!     measures: vec![Measure { metric: "cpu-seconds".into(), value: cpu }],
//!     content_key: i.to_string(),
//! };
//! let history: Vec<RunRecord> = (0..12).map(|i| run(i, 10.0 + 0.05 * (i % 4) as f64)).collect();
//! let judged = check(&run(99, 12.0), &history, &Policy::default());
//! assert_eq!(judged.metrics[0].verdict, Verdict::Regression);
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod check;
mod metric;
pub mod prometheus;
mod record;
pub mod render;
pub mod show;
pub mod stats;
#[cfg(target_os = "linux")]
mod store;
mod trend;

pub use check::{
    Baseline, CheckReport, MAX_MIN_RUNS, MetricCheck, Policy, StepCheck, Verdict, check, default_floor,
    default_threshold,
};
pub use metric::{Family, Measure, Unit, family_of, measures_of};
pub use record::{Context, Machine, RunKey, RunRecord};
pub use stats::Test;
#[cfg(target_os = "linux")]
pub use store::{APPLICATION_ID, Added, BUSY_TIMEOUT, SCHEMA_VERSION, Store, StoreError};
pub use trend::{MetricFilter, MetricTrend, StepTrend, TrendRun, trends};
