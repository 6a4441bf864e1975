//! The build's memory over time, and what ran at its peak.
//!
//! Two curves, on the build's time axis: the build's own readings (its
//! cgroup's memory, which holds every action's: the actions' cgroups are
//! nested in it), taken on the sampler's schedule; and the actions' peaks
//! together — at each instant the sum of the peaks of the actions running
//! then, an upper bound of what they held at once (each action's peak is
//! its most, reached at some moment of its run). The build's peak moment
//! is its highest reading, with the actions running then; the actions'
//! worst moment is the highest sum.

use crate::job::table::Job;
use crate::series::{Point, StepSeries};
use crate::step::Step;

use super::BuildAction;

/// The memory of a build.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct BuildMemory {
    /// The build's readings, bytes, at seconds since its start.
    pub readings: Vec<Point>,
    /// The page cache among them (`file` of its memory statistics), where read.
    pub file_readings: Vec<Point>,
    /// The sum of the peaks of the actions running, from each start or end
    /// on (a step curve: each point holds until the next).
    pub together: Vec<Point>,
    /// The build's highest reading and the actions running then.
    pub peak: Option<PeakMoment>,
    /// The highest sum of the peaks of actions running at once.
    pub most_together: Option<Together>,
}

/// The build's highest memory reading.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PeakMoment {
    /// When, seconds since the build's start.
    pub at: f64,
    /// The build's memory then.
    pub bytes: u64,
    /// Its page cache then, where read.
    pub file_bytes: Option<u64>,
    /// The actions running then (indices into the build's actions), the
    /// heaviest peak first.
    pub running: Vec<usize>,
    /// The reading less those actions' peaks (0 when they exceed it): a
    /// lower bound of the memory held outside every action then.
    pub outside_bytes: u64,
}

/// The moment the actions running at once had the highest peaks together.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Together {
    /// When, seconds since the build's start (an action's start).
    pub at: f64,
    /// The sum of their peaks.
    pub bytes: u64,
    /// The actions (indices into the build's actions), the heaviest first.
    pub running: Vec<usize>,
}

/// The memory of the build whose own step is `build`, its table `job`,
/// its actions `actions`.
#[must_use]
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
pub fn of(build: &Step, job: &Job, actions: &[BuildAction]) -> BuildMemory {
    let series = StepSeries::of(build);
    let peak_of = |i: usize| job.steps.get(actions[i].row).and_then(|r| r.memory_peak_bytes).unwrap_or(0);
    let heaviest_first = |mut running: Vec<usize>| {
        running.sort_by(|a, b| peak_of(*b).cmp(&peak_of(*a)).then(a.cmp(b)));
        running
    };
    let running_at = |t: f64| -> Vec<usize> {
        (0..actions.len())
            .filter(|&i| actions[i].start <= t && t < actions[i].end.max(actions[i].start + 1e-6))
            .collect()
    };
    let peak = series.memory_bytes.iter().max_by(|a, b| a.value.total_cmp(&b.value)).map(|p| {
        let running = heaviest_first(running_at(p.t));
        let bytes = p.value as u64;
        let held: u64 = running.iter().map(|&i| peak_of(i)).sum();
        let file_bytes = series.memory_file_bytes.iter().find(|f| (f.t - p.t).abs() < 1e-9).map(|f| f.value as u64);
        PeakMoment { at: p.t, bytes, file_bytes, running, outside_bytes: bytes.saturating_sub(held) }
    });
    // The step curve of the peaks together: +peak at each start, −peak at
    // each end (ends first at one instant: one that ends as another starts
    // did not run beside it).
    let mut events: Vec<(f64, bool, usize)> = (0..actions.len())
        .flat_map(|i| [(actions[i].start, true, i), (actions[i].end.max(actions[i].start), false, i)])
        .collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut together, mut best): (u64, Vec<Point>, Option<(f64, u64)>) = (0, Vec::new(), None);
    for (t, starts, i) in events {
        now = if starts { now.saturating_add(peak_of(i)) } else { now.saturating_sub(peak_of(i)) };
        match together.last_mut() {
            Some(last) if (last.t - t).abs() < 1e-9 => last.value = now as f64,
            _ => together.push(Point { t, value: now as f64 }),
        }
        if starts && best.is_none_or(|(_, b)| now > b) {
            best = Some((t, now));
        }
    }
    let most_together =
        best.filter(|(_, b)| *b > 0).map(|(at, bytes)| Together { at, bytes, running: heaviest_first(running_at(at)) });
    BuildMemory {
        readings: series.memory_bytes,
        file_readings: series.memory_file_bytes,
        together,
        peak,
        most_together,
    }
}
