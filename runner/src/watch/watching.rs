//! A running step's watch: its jobs on the runner's ticker, and the events
//! they saw.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use jiff::Timestamp;
use stepmon_model::SampleOf;
use stepmon_model::event::StepEvent;
use stepmon_sampler::RecorderView;

use super::busiest::Busiest;
use super::{Watch, cadence, memory, progress};
use crate::processes::CpuTimes;
use crate::ticker::{Ticker, Ticking};

/// What a running step offers the watch.
pub(crate) struct Target {
    /// When the step started.
    pub(crate) start: Timestamp,
    /// The recorder of its samples, and whose they are.
    pub(crate) samples: Option<(RecorderView, SampleOf)>,
    /// The directory of the memory cgroup that holds the step alone, and
    /// whether it is cgroup v1's.
    pub(crate) memory_dir: Option<(PathBuf, bool)>,
}

/// A step being watched: its jobs on the ticker and the events so far.
#[derive(Debug)]
pub(crate) struct Watching {
    jobs: Vec<Ticking>,
    events: Arc<Mutex<Vec<StepEvent>>>,
}

/// Starts watching `target` as `watch` says, on `ticker`; `processes`:
/// where its processes' CPU times are (the busiest command of a progress).
pub(crate) fn start(watch: &Watch, target: Target, processes: Option<CpuTimes>, ticker: &Ticker) -> Watching {
    let events = Arc::new(Mutex::new(Vec::new()));
    let mut jobs = Vec::new();
    if let (Some((interval, callback)), Some((view, of))) = (&watch.progress, &target.samples) {
        let busiest = processes.map(|source| Busiest::new(source, target.start));
        let job = progress::job(view.clone(), *of, target.start, *interval, callback.clone(), busiest);
        jobs.extend(ticker.add(*interval, job));
    }
    if watch.memory
        && let Some((dir, v1)) = &target.memory_dir
    {
        let keep = Arc::clone(&events);
        let on_event = watch.on_event.clone();
        let record = move |event: StepEvent| {
            if let Some(callback) = &on_event {
                callback.call(&event);
            }
            keep.lock().unwrap_or_else(PoisonError::into_inner).push(event);
        };
        let job = memory::job(dir.clone(), *v1, watch, target.start, record);
        jobs.extend(ticker.add(cadence::FIRST, job));
    }
    Watching { jobs, events }
}

impl Watching {
    /// Stops the jobs (waiting for a check under way) and returns the
    /// events, in time order.
    pub(crate) fn finish(self) -> Vec<StepEvent> {
        drop(self.jobs);
        std::mem::take(&mut *self.events.lock().unwrap_or_else(PoisonError::into_inner))
    }
}
