//! `stepmon diff`: two runs of the same step compared field by field, with
//! the changes beyond the noise flagged.
//!
//! # Noise model
//!
//! A change is *significant* when it is larger than both
//!
//! * a **relative tolerance** of the `before` value, per kind of field
//!   ([`FieldKind::base_relative`]): CPU time 5 %, wall time 10 %, memory
//!   5 %, IO and network bytes 1 %, PSI stall time 25 %, tasks 10 %, OOM
//!   kills 0 (every change counts); and
//! * an **absolute floor** ([`FieldKind::floor`]), so that tiny values do
//!   not flag: 10 ms of CPU, 100 ms of wall time, 0.05 cores, 1 MiB of
//!   memory or IO, 64 KiB of network traffic, 50 ms of stall, 1 task.
//!
//! The machine's context widens the time-like tolerances: a busy machine
//! stretches wall time and stall time, and inflates CPU time a little
//! (shared caches, SMT siblings, frequency). Each run's *busy share* is the
//! largest of its [`MachineVerdict`](stepmon_model::verdict::MachineVerdict)'s `others_busy_share` (other work's
//! share of all CPU time), `steal_share`, and `machine_cpu_stall_share`
//! minus `step_cpu_stall_share` (the machine's CPU pressure includes the
//! step's own: a step throttled by its own `cpu.max` makes the whole
//! machine look stalled); the
//! larger of the two runs' shares, times the field kind's
//! [`FieldKind::busy_widening`] (1 for wall, cores and stall, 1/4 for CPU
//! time, 0 for memory, IO and counters), is added to the relative
//! tolerance. A run whose machine numbers are unknown widens nothing, and a
//! warning says so.
//!
//! A BuildKit step's wall time estimated from its samples (its first sample
//! comes about [`BUILDKIT_FIRST_SAMPLE_SECONDS`](crate::step::BUILDKIT_FIRST_SAMPLE_SECONDS) into the step) adds that
//! much to the wall floor, and the matching share to the average-cores
//! tolerance; one from its vertex (a history bundle's status stream) is
//! the step's real start and end and adds nothing.
//!
//! A field measured on one side only is *not comparable* — never read as 0.
//!
//! # Verdict
//!
//! Every field is a cost, so a significant increase is "heavier" and a
//! decrease "lighter". Average cores is CPU time / wall time: it is shown
//! and judged, but it does not count towards the verdict
//! ([`FieldDiff::derived`]) — its change is the CPU and wall changes', and
//! the same work spread over a longer wall time is not "lighter". [`DiffVerdict::Heavier`] when only increases are
//! significant, [`DiffVerdict::Lighter`] when only decreases,
//! [`DiffVerdict::Mixed`] when both, [`DiffVerdict::SameWithinNoise`] when
//! none, [`DiffVerdict::NotComparable`] when no field was measured on both
//! sides. The significant fields, largest relative change first, are the
//! drivers.
//!
//! ```
//! use stepmon_model::document::RunDocument;
//! use stepmon_report::Step;
//! use stepmon_report::diff::{DiffVerdict, StepDiff};
//!
//! let run = |cpu_ns: u64| -> Step {
//!     let json = format!(r#"{{"resourceUsage": {{"samples": [
//!         {{"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {{"usageNanos": 0}}, "pidsStat": {{}}}},
//!         {{"timestamp": "2026-11-30T10:00:04Z", "cpuStat": {{"usageNanos": {cpu_ns}}}, "pidsStat": {{}}}}]}},
//!       "stepmon": {{"command": ["make"], "start": "2026-11-30T10:00:00Z", "end": "2026-11-30T10:00:04Z"}}}}"#);
//!     Step::from_run(&serde_json::from_str::<RunDocument>(&json).unwrap())
//! };
//! let diff = StepDiff::between(&run(2_000_000_000), &run(3_000_000_000));
//! assert_eq!(diff.verdict, DiffVerdict::Heavier);
//! assert_eq!(diff.drivers[0], "cpu.usageSeconds");
//! println!("{}", diff.render_text());
//! ```

mod commands;
mod fields;
mod job;
mod noise;
mod render;
mod run;
mod step;

pub use commands::CommandDiff;
pub use job::{JobTotals, TotalsDiff};
pub use noise::*;
pub use run::RunDiff;
pub use step::{DiffVerdict, Side, StepDiff};

use noise::{FieldSpec, judge};
