//! A job's steps on one time axis, seconds since the job's origin (its
//! earliest step's [`crate::Step::time_origin`]): each step's span and its
//! memory and CPU series shifted onto it. The job's verdict
//! ([`super::JobVerdict`]) sums them for its peaks, and the job's charts
//! draw the same sums: both read the steps from here, so that what a chart
//! shows is what the verdict judged.
//!
//! ```
//! use stepmon_report::job::axis::on_job_axis;
//! // A job without steps has nothing on its axis.
//! assert!(on_job_axis(&[]).is_empty());
//! ```

use super::{Entry, StepStatus, memory_not_own};
use crate::series::{Point, StepSeries};

/// A step on its job's axis. Cached steps (which did not run) are not.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OnAxis {
    /// When it started.
    pub start: f64,
    /// When it ended: its wall time after its start, or its last point if
    /// that is later (or it has no wall time).
    pub end: f64,
    /// Its memory readings ([`StepSeries::memory_bytes`]); none when its
    /// memory is not its own ([`memory_not_own`]): the cgroup around it,
    /// holding other processes too, would count in every step it holds.
    pub memory: Vec<Point>,
    /// Its cores over each interval between two CPU readings, at the
    /// interval's end ([`StepSeries::cpu_cores`]).
    pub cores: Vec<Point>,
    /// When its first CPU reading was taken, where its first interval
    /// starts ([`crate::Step::first_reading`]).
    pub cores_from: Option<f64>,
}

/// The steps of `entries` that ran, in order, on the job's axis; a step
/// without a time (no start, no sample) is left out.
#[must_use]
pub fn on_job_axis(entries: &[Entry]) -> Vec<OnAxis> {
    let origin = entries.iter().filter_map(|e| e.step.time_origin()).min();
    entries
        .iter()
        .filter(|e| e.status != StepStatus::Cached)
        .filter_map(|e| {
            let step = &e.step;
            let offset = step.time_origin()?.duration_since(origin?).as_secs_f64();
            let series = StepSeries::of(step);
            let shift = |points: &[Point]| -> Vec<Point> {
                points
                    .iter()
                    .filter(|p| p.t.is_finite() && p.value.is_finite())
                    .map(|p| Point { t: p.t + offset, value: p.value })
                    .collect()
            };
            let last = series.memory_bytes.iter().chain(&series.cpu_cores).map(|p| p.t).fold(0.0, f64::max);
            let end = offset + step.wall_seconds.unwrap_or(last).max(last);
            let memory = if memory_not_own(step) { Vec::new() } else { shift(&series.memory_bytes) };
            let cores_from =
                step.first_reading(|s| s.cpu_stat.and_then(|c| c.usage_nanos).is_some()).map(|t| t + offset);
            Some(OnAxis { start: offset, end, memory, cores: shift(&series.cpu_cores), cores_from })
        })
        .collect()
}
