//! What the runner tells its caller while a step runs, not only at its end:
//! a [`Progress`] of the step every interval ([`Watch::progress`]), and an
//! event when its memory nears what bounds it ([`Watch::memory`]), before
//! the kernel's OOM killer ends it.
//!
//! Both run on the thread that does every step's periodic procfs readings
//! (the runner's ticker), and call the caller's [`Callback`]s there: keep
//! them short (a `write`). The events are also kept for the run document
//! (`stepmon.events`).
//!
//! * Progress is computed from the samples the recorder takes anyway
//!   ([`stepmon_model::progress`]): the newest, differenced against the one
//!   the previous progress used. The recorder's back-off makes samples of a
//!   long step sparse (2 s apart until 20 s, then 4, 8, … 256 s apart after
//!   21 minutes, `docs/data-model.md`); when the newest is older than 1 s
//!   (or half an interval), one sample is read for the live stream only
//!   ([`stepmon_sampler::RecorderView::sample_live`]), which leaves the
//!   recording (and so the run document) as it is.
//! * The busiest command of a progress
//!   ([`Progress::busiest`](stepmon_model::progress::Progress::busiest):
//!   the CPU time of the step's processes since the previous progress,
//!   summed by command, as the step's per-process accounting has it): where the
//!   step's processes are sampled from procfs, the last readings, no read
//!   of its own; where taskstats follows them, the exit records of those
//!   that ended (no read) and one `/proc/PID/stat` read per process still
//!   running, once a progress — the one read a progress adds (taskstats
//!   tells nothing of a process before it exits).
//! * The memory watch reads one file per check (`memory.current`, or
//!   `memory.usage_in_bytes` of the step's cgroup v1), and `/proc/meminfo`
//!   for the machine's bound, at an interval that shrinks as the usage
//!   nears the threshold at its present rate (`watch/cadence.rs`): about one check
//!   a second while far from it, every 20 ms in the last moments before it.
//!   The recorder's 2 s samples cannot warn in time: a step growing
//!   20 MiB/s under a 200 MiB limit is between 90% and its kill for 1 s.

#[cfg(target_os = "linux")]
mod busiest;
#[cfg(target_os = "linux")]
mod cadence;
#[cfg(target_os = "linux")]
mod largest;
#[cfg(target_os = "linux")]
mod memory;
#[cfg(target_os = "linux")]
mod progress;
#[cfg(target_os = "linux")]
mod watching;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use stepmon_model::event::StepEvent;
use stepmon_model::progress::Progress;

#[cfg(target_os = "linux")]
pub(crate) use watching::{Target, Watching, start};

/// A function the runner calls with what it sees (on its reading thread).
pub struct Callback<T>(Arc<dyn Fn(&T) + Send + Sync>);

impl<T> Callback<T> {
    /// Calls `f` with each value.
    pub fn new(f: impl Fn(&T) + Send + Sync + 'static) -> Callback<T> {
        Callback(Arc::new(f))
    }

    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fn call(&self, value: &T) {
        (self.0)(value);
    }
}

impl<T> Clone for Callback<T> {
    fn clone(&self) -> Self {
        Callback(Arc::clone(&self.0))
    }
}

impl<T> std::fmt::Debug for Callback<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Callback")
    }
}

/// What to watch while a step runs ([`crate::StepOptions::watch`]).
///
/// ```
/// # #[cfg(target_os = "linux")] {
/// use std::sync::{Arc, Mutex};
/// use std::time::Duration;
/// use stepmon_runner::watch::{Callback, Watch};
/// use stepmon_runner::{StepOptions, prepare};
///
/// let lines = Arc::new(Mutex::new(Vec::new()));
/// let mut options = StepOptions::new(["sleep", "0.7"]);
/// let seen = Arc::clone(&lines);
/// options.watch = Watch::default().with_progress(
///     Duration::from_millis(300),
///     Callback::new(move |p: &stepmon_model::progress::Progress| seen.lock().unwrap().push(p.elapsed_seconds)),
/// );
/// prepare(options)?.run()?;
/// assert!(!lines.lock().unwrap().is_empty(), "a progress every 300 ms of a 0.7 s step");
/// # }
/// # Ok::<(), stepmon_runner::RunError>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Watch {
    /// A [`Progress`] every `interval` (the first one interval after the
    /// start: none for a shorter step).
    pub progress: Option<(Duration, Callback<Progress>)>,
    /// Watch the step's memory against its bounds (a memory cgroup of the
    /// step's own is needed: v2, or v1 on hybrid hosts). On by default.
    pub memory: bool,
    /// The share of the bound that makes an event (0.9).
    pub memory_threshold: f64,
    /// The share below which the event is armed again (0.8): one event per
    /// crossing, not one per check while the usage hovers at the threshold.
    pub memory_rearm: f64,
    /// Called with each event as it happens.
    pub on_event: Option<Callback<StepEvent>>,
    /// procfs: `/proc/meminfo` for the machine's bound, the step's
    /// processes for the largest ones (a directory laid out like `/proc`,
    /// e.g. a test's fixture).
    pub proc_root: PathBuf,
}

impl Default for Watch {
    /// No progress; the memory watched at 90%, re-armed below 80%.
    fn default() -> Self {
        Watch {
            progress: None,
            memory: true,
            memory_threshold: 0.9,
            memory_rearm: 0.8,
            on_event: None,
            proc_root: PathBuf::from("/proc"),
        }
    }
}

impl Watch {
    /// Nothing watched.
    #[must_use]
    pub fn off() -> Watch {
        Watch { memory: false, ..Watch::default() }
    }

    /// With a [`Progress`] every `interval` to `callback`.
    #[must_use]
    pub fn with_progress(mut self, interval: Duration, callback: Callback<Progress>) -> Watch {
        self.progress = Some((interval, callback));
        self
    }

    /// With each event also to `callback` as it happens.
    #[must_use]
    pub fn with_events(mut self, callback: Callback<StepEvent>) -> Watch {
        self.on_event = Some(callback);
        self
    }
}

/// How long a job that has nothing more to do waits (it is removed at the
/// step's end).
#[cfg(target_os = "linux")]
const IDLE: Duration = Duration::from_secs(3600);
