//! Per-step recording on top of the samplers, and the monitor that owns
//! every recording of a process — the same API on every OS.
//!
//! Semantics follow BuildKit's `executor/resources/monitor.go` (see
//! `docs/data-model.md`, "BuildKit's recorder") and fix what its users hit:
//! failed steps keep their usage (BuildKit #4081 lost it), a read error never
//! erases the samples, and [`Monitor::shutdown`] waits until every registered
//! release action has run — the guarantee BuildKit's review asked for and its
//! merged code lost. On platforms without cgroup v2 and procfs the backend is
//! `stepmon-stub-noop`: every call works, nothing is measured, each usage says
//! why — there is no nil monitor to check for.

mod error;
#[cfg(target_os = "linux")]
mod linux;
mod live;
#[cfg(not(target_os = "linux"))]
mod noop;
mod options;

pub use error::MonitorError;
pub use live::LiveSamples;
pub use options::MonitorOptions;

use std::io;
use std::path::Path;

#[cfg(target_os = "linux")]
use linux::{MonitorBackend, RecorderBackend, ViewBackend};
#[cfg(not(target_os = "linux"))]
use noop::{MonitorBackend, RecorderBackend, ViewBackend};
use stepmon_model::sample::{StepSample, StepUsage};

use crate::network::NetworkSource;
use crate::schedule::Timed;

/// Owns the machine's sampler and every step recording of this process.
///
/// ```no_run
/// # async fn example() -> Result<(), stepmon_sampler::MonitorError> {
/// use stepmon_sampler::{Monitor, MonitorOptions, NetworkSource};
/// let monitor = Monitor::new(MonitorOptions::default())?;
/// let recorder = monitor.record("/sys/fs/cgroup/stepmon/step-1", &NetworkSource::SharedNamespace)?;
/// // ... run the step in that cgroup; after its processes exited:
/// let usage = recorder.close().await;
/// println!("{}", usage.resource_usage.samples.len());
/// monitor.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Monitor {
    backend: MonitorBackend,
}

impl Monitor {
    /// Opens `/proc` and starts the machine's sampler (on the sampler thread of `Sampler::start`).
    pub fn new(options: MonitorOptions) -> Result<Monitor, MonitorError> {
        Ok(Monitor { backend: MonitorBackend::new(options)? })
    }

    /// Starts recording the step whose processes run in `cgroup_dir`: a
    /// baseline `/proc/stat` reading, the step's own sampler (baseline sample
    /// first with the default policy), and a subscription to the machine's
    /// samples.
    pub fn record(&self, cgroup_dir: impl AsRef<Path>, network: &NetworkSource) -> Result<Recorder, MonitorError> {
        Ok(Recorder { backend: self.backend.record(cgroup_dir.as_ref(), network)? })
    }

    /// [`Monitor::record`] (or, with `cgroup_dir` `None`,
    /// [`Monitor::record_without_cgroup`]) that also reads the step's cgroups
    /// in the v1 hierarchies `v1` (hybrid and v1-only hosts) for what its
    /// cgroup v2 does not account.
    #[cfg(target_os = "linux")]
    pub fn record_with_v1(
        &self,
        cgroup_dir: Option<&Path>,
        v1: crate::cgroup::CgroupV1Dirs,
        network: &NetworkSource,
        reason: &str,
    ) -> Result<Recorder, MonitorError> {
        Ok(Recorder { backend: self.backend.record_with_v1(cgroup_dir, v1, network, reason)? })
    }

    /// Starts recording a step that has no cgroup of its own: the machine's
    /// samples, the `sysCPUStat` delta and the step's network (when it has a
    /// namespace); every step sample's `missing` names the cgroup fields
    /// with `reason`.
    pub fn record_without_cgroup(&self, network: &NetworkSource, reason: &str) -> Result<Recorder, MonitorError> {
        Ok(Recorder { backend: self.backend.record_without_cgroup(network, reason)? })
    }

    /// Number of recordings not finalised yet.
    #[must_use]
    pub fn open_recordings(&self) -> usize {
        self.backend.open_recordings()
    }

    /// Finalises every open recording (their owners' `close` then returns
    /// the stored usage), waits for every release action registered with
    /// [`Recorder::close_then`], and stops the machine's sampler. New
    /// recordings are refused from now on.
    pub async fn shutdown(&self) {
        self.backend.shutdown().await;
    }

    /// [`Monitor::shutdown`] for callers without an executor.
    pub fn shutdown_blocking(&self) {
        futures::executor::block_on(self.shutdown());
    }
}

/// One step's recording; see [`Monitor::record`].
#[derive(Debug)]
pub struct Recorder {
    backend: RecorderBackend,
}

impl Recorder {
    /// Live periodic samples of the step; ends when the recording is finalised.
    #[must_use]
    pub fn stream(&self) -> LiveSamples {
        self.backend.stream()
    }

    /// The step's samples taken so far (the baseline first), not thinned:
    /// what a live record writes before [`Recorder::stream`]'s first sample.
    #[must_use]
    pub fn snapshot(&self) -> Vec<Timed<StepSample>> {
        self.backend.snapshot()
    }

    /// A handle on the recording's newest samples for a live view (a
    /// progress line, a memory watch) on another thread: cheap to clone,
    /// and empty once the recording is finalised.
    #[must_use]
    pub fn view(&self) -> RecorderView {
        RecorderView { backend: self.backend.view() }
    }

    /// Finalises the recording — call it after the step's processes exited
    /// and before its cgroup is removed — and returns the usage, whatever the
    /// step's exit status: failed and OOM-killed steps keep their usage.
    pub async fn close(self) -> StepUsage {
        self.backend.close().await
    }

    /// [`Recorder::close`] for callers without an executor.
    pub fn close_blocking(self) -> StepUsage {
        futures::executor::block_on(self.close())
    }

    /// Finalises on a background thread, then runs `release` with the usage
    /// (e.g. remove the cgroup, store the result). [`Monitor::shutdown`] waits
    /// for `release` to finish.
    pub fn close_then(self, release: impl FnOnce(StepUsage) + Send + 'static) -> io::Result<()> {
        self.backend.close_then(release)
    }
}

/// A [`Recorder`]'s newest samples, from any thread; see [`Recorder::view`].
#[derive(Debug, Clone)]
pub struct RecorderView {
    backend: ViewBackend,
}

impl RecorderView {
    /// The newest of the step's samples taken so far by the schedule (the
    /// baseline at first); `None` once the recording is finalised.
    #[must_use]
    pub fn latest(&self) -> Option<Timed<StepSample>> {
        self.backend.latest()
    }

    /// Reads the step now, outside the schedule: the sample goes to the
    /// recording's live stream ([`Recorder::stream`]) and is returned, and is
    /// not one of the recording's samples (the run document is the same
    /// with or without it). `None` once finalised. See
    /// [`crate::Subscription::sample_live`].
    pub fn sample_live(&self) -> Option<Timed<StepSample>> {
        self.backend.sample_live()
    }
}
