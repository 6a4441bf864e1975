//! The Linux backend of [`super::Monitor`] and [`super::Recorder`].

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use futures::channel::oneshot;
use stepmon_sysusage::probe::SysReading;

use super::error::MonitorError;
use super::live::LiveSamples;
use super::options::MonitorOptions;
use crate::network::NetworkSource;
use crate::sampler::{Sampler, Subscription};
use crate::step::StepProbe;
use crate::system::SystemProbe;
use stepmon_model::missing::{Missing, MissingKind};
use stepmon_model::sample::{Samples, SamplesExt, StepUsage};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Open {
    step_sampler: Sampler<StepProbe>,
    step: Subscription<StepProbe>,
    system: Subscription<SystemProbe>,
}

struct Record {
    open: Mutex<Option<Open>>,
    baseline: SysReading,
    // Set once by whoever finalises first (the owner, a release thread or
    // shutdown); everyone else awaits the same value.
    result: async_lock::OnceCell<StepUsage>,
}

struct Inner {
    options: MonitorOptions,
    system: Sampler<SystemProbe>,
    records: Mutex<BTreeMap<u64, Arc<Record>>>,
    releases: Mutex<Vec<oneshot::Receiver<()>>>,
    next_id: AtomicU64,
    closed: AtomicBool,
}

impl Inner {
    /// Finalises a record once: final samples, sysCPUStat delta. Concurrent
    /// and later callers get the same result.
    async fn finalize(&self, id: u64, record: &Record) -> StepUsage {
        let usage = record.result.get_or_init(|| self.collect(record)).await.clone();
        lock(&self.records).remove(&id);
        usage
    }

    async fn collect(&self, record: &Record) -> StepUsage {
        let Some(open) = lock(&record.open).take() else { return StepUsage::default() };
        let step = open.step.close(true).await;
        let closing = Instant::now();
        let system = open.system.close(true).await;
        open.step_sampler.stop();
        drop(open.step_sampler);
        let end = self.system.probe().reading_since(closing);
        let mut ext = SamplesExt::default();
        let delta = stepmon_sysusage::model::sys_cpu_delta(&record.baseline, &end);
        if delta.is_none() {
            ext.missing.push(Missing::new(
                "sysCPUStat",
                "stat",
                MissingKind::Io,
                "/proc/stat could not be read (or had no aggregate cpu line) at the step's start or end",
            ));
        }
        StepUsage {
            resource_usage: Samples {
                samples: step.into_iter().map(|t| t.sample).collect(),
                sys_cpu_stat: delta.as_ref().map(|d| d.sys_cpu_stat),
                stepmon: Some(SamplesExt { sys_cpu: delta.map(|d| d.stepmon), ..ext }),
            },
            sys_usage: system.into_iter().map(|t| t.sample).collect(),
        }
    }
}

/// The Linux monitor.
#[derive(Clone)]
pub(super) struct MonitorBackend {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for MonitorBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Monitor").field("open_recordings", &lock(&self.inner.records).len()).finish()
    }
}

impl MonitorBackend {
    /// Opens `/proc` and starts the machine's sampler (on the sampler thread of `Sampler::start`).
    pub(super) fn new(options: MonitorOptions) -> Result<MonitorBackend, MonitorError> {
        let root = &options.proc_root;
        let probe = SystemProbe::open(root).map_err(|source| MonitorError::Open { path: root.clone(), source })?;
        let system = Sampler::start(probe, options.system_policy)?;
        Ok(MonitorBackend {
            inner: Arc::new(Inner {
                options,
                system,
                records: Mutex::new(BTreeMap::new()),
                releases: Mutex::new(Vec::new()),
                next_id: AtomicU64::new(0),
                closed: AtomicBool::new(false),
            }),
        })
    }

    /// Starts recording the step whose processes run in `cgroup_dir`: a
    /// baseline `/proc/stat` reading, the step's own sampler (baseline sample
    /// first with the default policy), and a subscription to the machine's
    /// samples.
    pub(super) fn record(&self, cgroup_dir: &Path, network: &NetworkSource) -> Result<RecorderBackend, MonitorError> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(MonitorError::Closed);
        }
        let probe = StepProbe::open(cgroup_dir, network)
            .map_err(|source| MonitorError::Open { path: cgroup_dir.to_path_buf(), source })?;
        self.record_probe(probe)
    }

    /// A recording of a step without a cgroup ([`StepProbe::without_cgroup`]).
    pub(super) fn record_without_cgroup(
        &self,
        network: &NetworkSource,
        reason: &str,
    ) -> Result<RecorderBackend, MonitorError> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(MonitorError::Closed);
        }
        self.record_probe(StepProbe::without_cgroup(network, reason))
    }

    /// A recording that also reads the step's v1 cgroups.
    pub(super) fn record_with_v1(
        &self,
        cgroup_dir: Option<&Path>,
        v1: crate::cgroup::CgroupV1Dirs,
        network: &NetworkSource,
        reason: &str,
    ) -> Result<RecorderBackend, MonitorError> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(MonitorError::Closed);
        }
        let probe = match cgroup_dir {
            Some(dir) => StepProbe::open(dir, network)
                .map_err(|source| MonitorError::Open { path: dir.to_path_buf(), source })?,
            None => StepProbe::without_cgroup(network, reason),
        };
        self.record_probe(probe.with_v1(v1))
    }

    fn record_probe(&self, probe: StepProbe) -> Result<RecorderBackend, MonitorError> {
        let subscribing = Instant::now();
        let system = self.inner.system.subscribe();
        let baseline = self.inner.system.probe().reading_since(subscribing);
        let step_sampler = Sampler::start(probe, self.inner.options.step_policy)?;
        let step = step_sampler.subscribe();
        let record = Arc::new(Record {
            open: Mutex::new(Some(Open { step_sampler, step, system })),
            baseline,
            result: async_lock::OnceCell::new(),
        });
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        lock(&self.inner.records).insert(id, Arc::clone(&record));
        Ok(RecorderBackend { monitor: Arc::clone(&self.inner), id, record })
    }

    /// Number of recordings not finalised yet.
    #[must_use]
    pub(super) fn open_recordings(&self) -> usize {
        lock(&self.inner.records).len()
    }

    /// Finalises every open recording (their owners' `close` then returns
    /// the stored usage), waits for every release action registered with
    /// [`super::Recorder::close_then`], and stops the machine's sampler. New
    /// recordings are refused from now on.
    pub(super) async fn shutdown(&self) {
        self.inner.closed.store(true, Ordering::Release);
        let open: Vec<(u64, Arc<Record>)> =
            lock(&self.inner.records).iter().map(|(id, r)| (*id, Arc::clone(r))).collect();
        for (id, record) in open {
            self.inner.finalize(id, &record).await;
        }
        let releases = std::mem::take(&mut *lock(&self.inner.releases));
        for done in releases {
            // A release that panicked dropped its sender: nothing left to wait for.
            let _ = done.await;
        }
        self.inner.system.stop();
    }
}

/// The Linux recording.
pub(super) struct RecorderBackend {
    monitor: Arc<Inner>,
    id: u64,
    record: Arc<Record>,
}

impl std::fmt::Debug for RecorderBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecorderBackend").field("id", &self.id).finish()
    }
}

impl RecorderBackend {
    /// Live periodic samples of the step (empty once finalised).
    #[must_use]
    pub(super) fn stream(&self) -> LiveSamples {
        LiveSamples::from(lock(&self.record.open).as_ref().map(|open| open.step.stream()))
    }

    /// The samples taken so far (empty once finalised).
    pub(super) fn snapshot(&self) -> Vec<crate::schedule::Timed<stepmon_model::sample::StepSample>> {
        lock(&self.record.open).as_ref().map(|open| open.step.snapshot()).unwrap_or_default()
    }

    /// A handle on the newest samples (see [`super::Recorder::view`]).
    pub(super) fn view(&self) -> ViewBackend {
        ViewBackend { record: Arc::clone(&self.record) }
    }

    /// Finalises the recording — call it after the step's processes exited
    /// and before its cgroup is removed — and returns the usage. Whatever the
    /// step's exit status: failed and OOM-killed steps keep their usage.
    pub(super) async fn close(self) -> StepUsage {
        self.monitor.finalize(self.id, &self.record).await
    }

    /// Finalises on a background thread, then runs `release` with the
    /// usage (e.g. remove the cgroup, store the result). [`super::Monitor::shutdown`]
    /// waits for `release` to finish.
    pub(super) fn close_then(self, release: impl FnOnce(StepUsage) + Send + 'static) -> io::Result<()> {
        let (done, wait) = oneshot::channel();
        let monitor = Arc::clone(&self.monitor);
        lock(&monitor.releases).push(wait);
        std::thread::Builder::new().name("stepmon-release".into()).spawn(move || {
            let usage = futures::executor::block_on(self.close());
            release(usage);
            let _ = done.send(());
        })?;
        Ok(())
    }
}

/// The Linux [`super::RecorderView`].
#[derive(Clone)]
pub(super) struct ViewBackend {
    record: Arc<Record>,
}

impl std::fmt::Debug for ViewBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecorderView").field("open", &lock(&self.record.open).is_some()).finish()
    }
}

impl ViewBackend {
    /// The newest sample taken so far (`None` once finalised).
    pub(super) fn latest(&self) -> Option<crate::schedule::Timed<stepmon_model::sample::StepSample>> {
        lock(&self.record.open).as_ref().and_then(|open| open.step.latest())
    }

    /// A sample read now for the live stream only (`None` once finalised).
    /// The record stays locked meanwhile: a close waits for this read.
    pub(super) fn sample_live(&self) -> Option<crate::schedule::Timed<stepmon_model::sample::StepSample>> {
        lock(&self.record.open).as_ref().and_then(|open| open.step.sample_live())
    }
}
