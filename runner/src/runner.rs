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
use crate::step::{Prepared, Step, prepare_with};
use crate::ticker::Ticker;

/// Starts measured steps; one per process is enough (clones share it).
///
/// ```
/// # #[cfg(target_os = "linux")] {
/// use stepmon_runner::{Runner, StepOptions};
///
/// let runner = Runner::new()?;
/// let steps: Vec<_> = (0..4)
///     .map(|i| runner.start(StepOptions::new(["sh", "-c", &format!("exit {i}")])))
///     .collect::<Result<_, _>>()?;
/// for (i, step) in steps.into_iter().enumerate() {
///     // Or `step.await` in any async executor.
///     let finished = step.wait()?;
///     assert_eq!(finished.exit_code, i32::try_from(i).unwrap());
/// }
/// # }
/// # Ok::<(), stepmon_runner::RunError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Runner {
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
    pub fn new() -> Result<Runner, RunError> {
        let monitor = Monitor::new(MonitorOptions::default())
            .map_err(|e| RunError::with_source(crate::RunErrorKind::Io, "cannot start the sampler", e))?;
        Ok(Runner { monitor, host: Arc::new(HostView::read()), hub: Hub::start(), ticker: Ticker::default() })
    }

    /// Places a step (see [`crate::prepare`]) on this runner's sampler.
    pub fn prepare(&self, options: StepOptions) -> Result<Prepared, RunError> {
        prepare_with(
            options,
            Some(self.monitor.clone()),
            Arc::clone(&self.host),
            Some(self.hub.clone()),
            Some(self.ticker.clone()),
        )
    }

    /// Places and starts a step; await the [`Step`] or [`Step::wait`] for it.
    pub fn start(&self, options: StepOptions) -> Result<Step, RunError> {
        self.prepare(options)?.start()
    }

    /// Stops the shared sampler once every step has ended (steps started
    /// after it fail).
    pub fn shutdown(&self) {
        self.monitor.shutdown_blocking();
    }
}
