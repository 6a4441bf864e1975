//! Off Linux there are no cgroups, no `wait4` rusage of a process tree and
//! no procfs: the same API, where preparing or starting a step says so. A
//! builder's code compiles unchanged on macOS and Windows.

use std::convert::Infallible;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};

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

/// A running step; none exists off Linux (its fields are the Linux
/// API's, so a builder's code that takes its pipes compiles).
#[derive(Debug)]
pub struct Step {
    /// See the Linux API.
    pub stdin: Option<ChildStdin>,
    /// See the Linux API.
    pub stdout: Option<ChildStdout>,
    /// See the Linux API.
    pub stderr: Option<ChildStderr>,
    never: Infallible,
}

impl Step {
    /// See the Linux API.
    #[must_use]
    pub fn pid(&self) -> u32 {
        match self.never {}
    }

    /// See the Linux API.
    pub fn kill(&self) -> std::io::Result<()> {
        match self.never {}
    }

    /// See the Linux API.
    pub fn freeze(&self) -> std::io::Result<()> {
        match self.never {}
    }

    /// See the Linux API.
    pub fn thaw(&self) -> std::io::Result<()> {
        match self.never {}
    }

    /// See the Linux API.
    pub fn wait(self) -> Result<Finished, RunError> {
        match self.never {}
    }

    /// See the Linux API.
    pub fn wait_with_output(self) -> Result<Finished, RunError> {
        match self.never {}
    }

    /// See the Linux API.
    // The Linux signature, `Send + 'static` said rather than inferred.
    #[allow(clippy::manual_async_fn)]
    pub fn output(self) -> impl Future<Output = Result<Finished, RunError>> + Send + 'static {
        async move { match self.never {} }
    }
}

impl IntoFuture for Step {
    type Output = Result<Finished, RunError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<Finished, RunError>> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        match self.never {}
    }
}

/// Pipe ends of a step; none exists off Linux.
macro_rules! no_end {
    ($($name:ident),*) => {$(
        /// See the Linux API.
        #[derive(Debug)]
        pub enum $name {}

        impl std::io::Read for $name {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                match *self {}
            }
        }

        impl futures::io::AsyncRead for $name {
            fn poll_read(self: Pin<&mut Self>, _: &mut Context<'_>, _: &mut [u8]) -> Poll<std::io::Result<usize>> {
                match *self {}
            }
        }
    )*};
}

no_end!(ChildStdout, ChildStderr);

/// See the Linux API.
#[derive(Debug)]
pub enum ChildStdin {}

impl std::io::Write for ChildStdin {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        match *self {}
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match *self {}
    }
}

impl futures::io::AsyncWrite for ChildStdin {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, _: &[u8]) -> Poll<std::io::Result<usize>> {
        match *self {}
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match *self {}
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match *self {}
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
