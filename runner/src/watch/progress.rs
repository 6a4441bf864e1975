//! The progress job: every interval, the step's newest sample against the
//! one the previous progress used ([`stepmon_model::progress::Progress`]),
//! and the busiest command since then ([`super::busiest`]).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jiff::Timestamp;
use stepmon_model::SampleOf;
use stepmon_model::progress::{Progress, memory_bytes};
use stepmon_model::sample::StepSample;
use stepmon_sampler::RecorderView;

use super::busiest::Busiest;
use super::{Callback, IDLE};
use crate::ticker::Job;

/// The oldest the schedule's newest sample may be for a progress to use
/// it; an older one is replaced by a read for the live stream (at most one
/// per progress): a line says how the step is doing now, not minutes ago.
const FRESH: Duration = Duration::from_secs(1);

/// What the job keeps between progresses.
struct State {
    /// The step's first sample (its baseline).
    baseline: Option<StepSample>,
    /// The sample the last progress used.
    previous: Option<StepSample>,
    /// The largest memory reading so far.
    largest: Option<u64>,
    /// The step's busiest command, where its processes are followed.
    busiest: Option<Busiest>,
}

/// The newest sample of `view`: the schedule's, or one read now when that
/// is older than `fresh` (the back-off of a long step).
fn newest(view: &RecorderView, fresh: Duration) -> Option<StepSample> {
    let latest = view.latest()?.sample;
    let age = Timestamp::now().duration_since(latest.timestamp);
    if age.as_secs_f64() <= fresh.as_secs_f64() {
        return Some(latest);
    }
    Some(view.sample_live().map_or(latest, |timed| timed.sample))
}

/// The job of a progress every `interval` of the step `view` records
/// (`of`'s samples), started at `start`, to `callback`; with the busiest
/// command where `busiest` follows the step's processes.
pub(super) fn job(
    view: RecorderView,
    of: SampleOf,
    start: Timestamp,
    interval: Duration,
    callback: Callback<Progress>,
    busiest: Option<Busiest>,
) -> Job {
    // The baseline is the only sample when the step starts.
    let baseline = view.latest().map(|timed| timed.sample);
    let largest = baseline.as_ref().and_then(memory_bytes);
    let state = Mutex::new(State { previous: baseline.clone(), baseline, largest, busiest });
    Arc::new(move || {
        let Some(latest) = newest(&view, (interval / 2).min(FRESH)) else { return IDLE };
        let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
        state.largest = state.largest.max(memory_bytes(&latest));
        let baseline = state.baseline.get_or_insert_with(|| latest.clone()).clone();
        let previous = state.previous.replace(latest.clone()).unwrap_or_else(|| baseline.clone());
        let mut progress = Progress::of(of, start, &baseline, &previous, &latest, state.largest);
        progress.busiest = state.busiest.as_mut().and_then(Busiest::next);
        drop(state);
        callback.call(&progress);
        interval
    })
}
