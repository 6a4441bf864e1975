//! The job on one time axis: where each step lies, which steps overlap
//! (each on its own lane), and the machine's samples once for the whole
//! job. The gaps in which no step ran are the table's
//! (`stepmon_report::job::table::gaps`).

use stepmon_model::system::SysSample;

use stepmon_model::document::{RunDocument, RunInfo};
use stepmon_report::job::Entry;
use stepmon_report::job::table::{Job, Row};
use stepmon_report::series::{Point, StepSeries};
use stepmon_report::step::Step;

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
/// says they share a track (an equivalence: a step takes the lowest lane
/// of its track whose last step has ended, [`first_free`]).
pub(crate) fn spans(job: &Job, same_track: impl Fn(&Row, &Row) -> bool) -> Vec<Span> {
    // Each track: one of its rows, and the end of each of its lanes' last
    // span (rows come in start order, so a lane's last span ends last).
    let mut tracks: Vec<(usize, Vec<f64>)> = Vec::new();
    let mut out: Vec<Span> = Vec::new();
    for (i, r) in job.steps.iter().enumerate() {
        let Some((start, end)) = r.extent() else { continue };
        let track = match tracks.iter().position(|(row, _)| same_track(&job.steps[*row], r)) {
            Some(track) => track,
            None => {
                tracks.push((i, Vec::new()));
                tracks.len() - 1
            }
        };
        let lane = first_free(&mut tracks[track].1, start, end);
        out.push(Span { row: i, start, end, lane });
    }
    out
}

/// The lane for a span from `start` to `end` placed after every span
/// before it in start order: the lowest lane whose last span ended by
/// `start`, else a new one; `ends` holds each lane's last end and takes
/// `end`. One that ends the instant another starts shares its lane.
pub(crate) fn first_free(ends: &mut Vec<f64>, start: f64, end: f64) -> usize {
    match ends.iter().position(|last| *last <= start) {
        Some(lane) => {
            ends[lane] = end;
            lane
        }
        None => {
            ends.push(end);
            ends.len() - 1
        }
    }
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
