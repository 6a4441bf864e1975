//! Off Linux there are no cgroups, no `wait4` rusage of a process tree and
//! no procfs: the same API, where preparing or starting a step says so. A
//! builder's code compiles unchanged on macOS and Windows.

use std::future::{Future, IntoFuture};
use std::pin::Pin;

use crate::error::{RunError, RunErrorKind};
use crate::finished::Finished;
use crate::notice::Notice;
use crate::options::StepOptions;

fn needs_linux() -> RunError {
    RunError::new(RunErrorKind::Unsupported, "running a measured step needs Linux (cgroups, procfs)")
}

/// Fails: measured steps need Linux.
pub fn prepare(_options: StepOptions) -> Result<Prepared, RunError> {
    Err(needs_linux())
}

/// A placed step; none exists off Linux.
#[derive(Debug)]
pub enum Prepared {}

impl Prepared {
    /// See the Linux API.
    #[must_use]
    pub fn notices(&self) -> &[Notice] {
        match *self {}
    }

    /// See the Linux API.
    pub fn start(self) -> Result<Step, RunError> {
        match self {}
    }

    /// See the Linux API.
    pub fn run(self) -> Result<Finished, RunError> {
        match self {}
    }
}

/// A running step; none exists off Linux.
#[derive(Debug)]
pub enum Step {}

impl Step {
    /// See the Linux API.
    #[must_use]
    pub fn pid(&self) -> u32 {
        match *self {}
    }

    /// See the Linux API.
    pub fn kill(&self) -> std::io::Result<()> {
        match *self {}
    }

    /// See the Linux API.
    pub fn freeze(&self) -> std::io::Result<()> {
        match *self {}
    }

    /// See the Linux API.
    pub fn thaw(&self) -> std::io::Result<()> {
        match *self {}
    }

    /// See the Linux API.
    pub fn wait(self) -> Result<Finished, RunError> {
        match self {}
    }
}

impl IntoFuture for Step {
    type Output = Result<Finished, RunError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<Finished, RunError>> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        match self {}
    }
}

/// The process-wide handle; off Linux every step it starts fails.
#[derive(Debug, Clone, Default)]
pub struct Runner {}

impl Runner {
    /// Always succeeds: the steps say why they cannot run.
    pub fn new() -> Result<Runner, RunError> {
        Ok(Runner {})
    }

    /// Fails: measured steps need Linux.
    pub fn prepare(&self, _options: StepOptions) -> Result<Prepared, RunError> {
        Err(needs_linux())
    }

    /// Fails: measured steps need Linux.
    pub fn start(&self, _options: StepOptions) -> Result<Step, RunError> {
        Err(needs_linux())
    }

    /// Nothing to stop.
    pub fn shutdown(&self) {}
}
