//! The runner and a prepared step off Linux: nothing is shared between
//! steps (each has a job object or a process group of its own), and
//! preparing checks the options against what the platform can measure
//! (`crate::imp::PLATFORM`). Each platform adds `Prepared::start`.

use std::time::Instant;

use crate::error::RunError;
use crate::notice::Notice;
use crate::options::StepOptions;
use crate::portable::check::check;

#[derive(Debug, Clone, Default)]
pub(crate) struct Runner {}

impl Runner {
    pub(crate) fn new() -> Result<Runner, RunError> {
        Ok(Runner {})
    }

    pub(crate) fn prepare(&self, options: StepOptions) -> Result<Prepared, RunError> {
        prepare(options)
    }

    pub(crate) fn shutdown(&self) {}
}

pub(crate) fn prepare(options: StepOptions) -> Result<Prepared, RunError> {
    let called = Instant::now();
    let notices = check(&options, &crate::imp::PLATFORM)?;
    Ok(Prepared { options, notices, called })
}

#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) options: StepOptions,
    pub(crate) notices: Vec<Notice>,
    /// When `prepare` was called: the step's placement time runs from here.
    pub(crate) called: Instant,
}

impl Prepared {
    pub(crate) fn notices(&self) -> &[Notice] {
        &self.notices
    }

    #[allow(clippy::unused_self)] // the same call on every platform
    pub(crate) fn has_own_cgroup(&self) -> bool {
        false
    }
}
