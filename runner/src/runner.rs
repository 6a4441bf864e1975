//! The process-wide handle of a builder that runs many measured steps at
//! once: it owns what steps share (the sampler's thread and timers) and
//! starts each step under its own subreaper, so that steps never reap, kill
//! or count each other's processes.

use std::sync::Arc;

use stepmon_sampler::{Monitor, MonitorOptions};

use crate::error::RunError;
use crate::options::StepOptions;
use crate::processes::Hub;
use crate::step::host_view::HostView;
use crate::step::{Prepared, prepare_with};
use crate::ticker::Ticker;

/// Linux's [`crate::Runner`]: what its steps share.
#[derive(Debug, Clone)]
pub(crate) struct Runner {
    monitor: Monitor,
    /// The host as the runner found it, read once for all its steps.
    host: Arc<HostView>,
    /// The taskstats listener all steps share, or why there is none.
    hub: Result<Hub, String>,
    /// The thread of every step's periodic procfs readings (started with the first).
    ticker: Ticker,
}

impl Runner {
    /// Reads the host once for all steps (its cgroup layout, container and
    /// systemd signs) and starts the shared sampler (one thread for every
    /// step's timers).
    pub(crate) fn new() -> Result<Runner, RunError> {
        let monitor = Monitor::new(MonitorOptions::default())
            .map_err(|e| RunError::with_source(crate::RunErrorKind::Io, "cannot start the sampler", e))?;
        Ok(Runner { monitor, host: Arc::new(HostView::read()), hub: Hub::start(), ticker: Ticker::default() })
    }

    /// Places a step (see [`crate::prepare`]) on this runner's sampler.
    pub(crate) fn prepare(&self, options: StepOptions) -> Result<Prepared, RunError> {
        prepare_with(
            options,
            Some(self.monitor.clone()),
            Arc::clone(&self.host),
            Some(self.hub.clone()),
            Some(self.ticker.clone()),
        )
    }

    /// Stops the shared sampler once every step has ended (steps started
    /// after it fail).
    pub(crate) fn shutdown(&self) {
        self.monitor.shutdown_blocking();
    }
}
