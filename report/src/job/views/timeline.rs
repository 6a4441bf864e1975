//! The job on one time axis: where each step lies, which steps overlap
//! (each on its own lane), the gaps in which no step ran, and the machine's
//! samples once for the whole job.

use stepmon_model::system::SysSample;

use super::super::Entry;
use super::super::table::{Job, Row};
use crate::document::{RunDocument, RunInfo};
use crate::series::{Point, StepSeries};
use crate::step::Step;

/// Time between steps shorter than this is not drawn as a gap: it is
/// stepmon's own exit and the next stepmon's start-up between two wrapped
/// steps of a script (a few milliseconds), not time the job spent elsewhere.
pub const MIN_GAP_SECONDS: f64 = 0.05;

/// Where one row of the table lies, seconds since the job's origin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Span {
    /// Its index in [`Job::steps`].
    pub(crate) row: usize,
    pub(crate) start: f64,
    /// Its start plus its wall time (a cached step, or one whose wall time
    /// is unknown, has none: `end == start`).
    pub(crate) end: f64,
    /// Its lane: 0 for the first, a higher one while earlier steps still run.
    pub(crate) lane: usize,
}

/// The span of each row that has a start (rows without one cannot be
/// placed), lanes assigned first-fit over the rows for which `same_track`
/// says they share a track (a step takes the lowest lane whose last step
/// has ended).
pub(crate) fn spans(job: &Job, same_track: impl Fn(&Row, &Row) -> bool) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    for (i, r) in job.steps.iter().enumerate() {
        let Some(start) = r.start_offset_seconds.filter(|s| s.is_finite()) else { continue };
        let end = start + r.wall_seconds.filter(|w| w.is_finite() && *w > 0.0).unwrap_or(0.0);
        // Rows are in start order, so lane `k` is free when every span on it
        // (of this track) ended by `start`.
        let lane = (0..)
            .find(|lane| !out.iter().any(|s| s.lane == *lane && same_track(&job.steps[s.row], r) && s.end > start))
            .unwrap_or(0);
        out.push(Span { row: i, start, end, lane });
    }
    out
}

/// The stretches of the job's span in which no step ran, at least
/// [`MIN_GAP_SECONDS`] long, as `(from, to)` seconds since the origin.
pub(crate) fn gaps(spans: &[Span]) -> Vec<(f64, f64)> {
    let mut by_start: Vec<(f64, f64)> = spans.iter().map(|s| (s.start, s.end)).collect();
    by_start.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = Vec::new();
    let mut reach: Option<f64> = None;
    for (start, end) in by_start {
        if let Some(r) = reach
            && start - r >= MIN_GAP_SECONDS
        {
            out.push((r, start));
        }
        reach = Some(reach.map_or(end, |r: f64| r.max(end)));
    }
    out
}

/// The machine's samples of every step, once: in time order, a sample two
/// steps share (the same reading) kept once. Overlapping steps each sample
/// the machine; `/proc/stat` and `/proc/pressure` are machine-wide running
/// totals, so their readings merged in time order still difference into
/// valid rates.
pub(crate) fn machine_samples(entries: &[Entry]) -> Vec<SysSample> {
    let mut all: Vec<&SysSample> = entries.iter().flat_map(|e| &e.step.usage.sys_usage).collect();
    all.sort_by_key(|s| s.timestamp);
    all.dedup_by(|a, b| a == b);
    all.into_iter().cloned().collect()
}

/// The machine's CPU busy share and CPU stall share over the job, seconds
/// since `job.origin`.
pub(crate) fn machine_series(job: &Job, entries: &[Entry]) -> (Vec<Point>, Vec<Point>) {
    let info = RunInfo { start: job.origin, ..RunInfo::default() };
    let document = RunDocument { sys_usage: machine_samples(entries), stepmon: Some(info), ..RunDocument::default() };
    let series = StepSeries::of(&Step::from_run(&document));
    (series.machine_cpu_busy_share, series.machine_cpu_stall_share)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: f64, end: f64) -> Span {
        Span { row: 0, start, end, lane: 0 }
    }

    #[test]
    fn gaps_are_the_uncovered_stretches() {
        // 0–2 and 1–3 overlap; 3.02 starts within MIN_GAP_SECONDS; 5 after a gap.
        let spans = [span(0.0, 2.0), span(1.0, 3.0), span(3.02, 4.0), span(5.0, 6.0)];
        assert_eq!(gaps(&spans), [(4.0, 5.0)]);
        assert_eq!(gaps(&[]), []);
    }
}
