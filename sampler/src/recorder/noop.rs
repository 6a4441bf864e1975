//! The backend of [`super::Monitor`] and [`super::Recorder`] where there is
//! no cgroup v2 and procfs: `stepmon-stub-noop`'s bookkeeping, and usages
//! that measured nothing and say why.

use std::io;
use std::path::Path;

use stepmon_stub_noop::{NoopMonitor, NoopRecorder, UNSUPPORTED_PLATFORM};

use super::error::MonitorError;
use super::live::LiveSamples;
use super::options::MonitorOptions;
use crate::network::NetworkSource;
use stepmon_model::missing::{Missing, MissingKind};
use stepmon_model::sample::{Samples, SamplesExt, StepUsage};

fn unsupported() -> StepUsage {
    StepUsage {
        resource_usage: Samples {
            samples: Vec::new(),
            sys_cpu_stat: None,
            stepmon: Some(SamplesExt {
                sys_cpu: None,
                missing: vec![Missing::new(
                    "resourceUsage",
                    "",
                    MissingKind::UnsupportedPlatform,
                    UNSUPPORTED_PLATFORM,
                )],
            }),
        },
        sys_usage: Vec::new(),
    }
}

#[derive(Debug, Clone)]
pub(super) struct MonitorBackend {
    noop: NoopMonitor,
}

impl MonitorBackend {
    pub(super) fn new(_options: MonitorOptions) -> Result<MonitorBackend, MonitorError> {
        Ok(MonitorBackend { noop: NoopMonitor::new() })
    }

    pub(super) fn record(&self, _cgroup_dir: &Path, _network: &NetworkSource) -> Result<RecorderBackend, MonitorError> {
        self.noop.record().map(|noop| RecorderBackend { noop }).map_err(|_| MonitorError::Closed)
    }

    pub(super) fn record_without_cgroup(
        &self,
        _network: &NetworkSource,
        _reason: &str,
    ) -> Result<RecorderBackend, MonitorError> {
        self.noop.record().map(|noop| RecorderBackend { noop }).map_err(|_| MonitorError::Closed)
    }

    pub(super) fn open_recordings(&self) -> usize {
        self.noop.open_recordings()
    }

    pub(super) async fn shutdown(&self) {
        self.noop.shutdown().await;
    }
}

#[derive(Debug)]
pub(super) struct RecorderBackend {
    noop: NoopRecorder,
}

impl RecorderBackend {
    pub(super) fn stream(&self) -> LiveSamples {
        LiveSamples::from(None)
    }

    pub(super) fn snapshot(&self) -> Vec<crate::schedule::Timed<stepmon_model::sample::StepSample>> {
        Vec::new()
    }

    pub(super) fn view(&self) -> ViewBackend {
        ViewBackend
    }

    pub(super) async fn close(self) -> StepUsage {
        self.noop.close();
        unsupported()
    }

    pub(super) fn close_then(self, release: impl FnOnce(StepUsage) + Send + 'static) -> io::Result<()> {
        self.noop.close_then(move || release(unsupported()))
    }
}

/// Nothing is sampled here: no newest sample.
#[derive(Debug, Clone)]
pub(super) struct ViewBackend;

impl ViewBackend {
    pub(super) fn latest(&self) -> Option<crate::schedule::Timed<stepmon_model::sample::StepSample>> {
        None
    }

    pub(super) fn sample_live(&self) -> Option<crate::schedule::Timed<stepmon_model::sample::StepSample>> {
        None
    }
}
