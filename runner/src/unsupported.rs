//! A platform where no step can run yet: preparing one says so. (The public
//! handles are the same as everywhere: a builder's code compiles unchanged.)

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::error::{RunError, RunErrorKind};
use crate::finished::Finished;
use crate::notice::Notice;
use crate::options::StepOptions;

fn unsupported() -> RunError {
    RunError::new(RunErrorKind::Unsupported, "running a measured step needs Linux (cgroups, procfs)")
}

pub(crate) fn prepare(_options: StepOptions) -> Result<Prepared, RunError> {
    Err(unsupported())
}

#[derive(Debug)]
pub(crate) enum Prepared {}

impl Prepared {
    pub(crate) fn notices(&self) -> &[Notice] {
        match *self {}
    }

    pub(crate) fn has_own_cgroup(&self) -> bool {
        match *self {}
    }

    pub(crate) fn start(self) -> Result<Step, RunError> {
        match self {}
    }
}

#[derive(Debug)]
pub(crate) struct Step {
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: Option<ChildStdout>,
    pub(crate) stderr: Option<ChildStderr>,
    never: Infallible,
}

impl Step {
    pub(crate) fn pid(&self) -> u32 {
        match self.never {}
    }

    pub(crate) fn notices(&self) -> &[Notice] {
        match self.never {}
    }

    pub(crate) fn kill(&self) -> io::Result<()> {
        match self.never {}
    }

    pub(crate) fn freeze(&self) -> io::Result<()> {
        match self.never {}
    }

    pub(crate) fn thaw(&self) -> io::Result<()> {
        match self.never {}
    }

    pub(crate) fn wait(self) -> Result<Finished, RunError> {
        match self.never {}
    }

    pub(crate) fn wait_with_output(self) -> Result<Finished, RunError> {
        match self.never {}
    }

    pub(crate) fn output(self) -> impl Future<Output = Result<Finished, RunError>> + Send + 'static {
        match self.never {}
        #[allow(unreachable_code)]
        std::future::ready(unreachable!())
    }

    pub(crate) fn into_future(self) -> Pin<Box<dyn Future<Output = Result<Finished, RunError>> + Send>> {
        match self.never {}
    }
}

macro_rules! no_end {
    ($($name:ident),*) => {$(
        #[derive(Debug)]
        pub(crate) enum $name {}

        impl TryFrom<$name> for crate::Stdio {
            type Error = io::Error;
            fn try_from(end: $name) -> io::Result<crate::Stdio> {
                match end {}
            }
        }

        #[cfg(unix)]
        impl TryFrom<$name> for std::os::fd::OwnedFd {
            type Error = io::Error;
            fn try_from(end: $name) -> io::Result<std::os::fd::OwnedFd> {
                match end {}
            }
        }

        #[cfg(windows)]
        impl TryFrom<$name> for std::os::windows::io::OwnedHandle {
            type Error = io::Error;
            fn try_from(end: $name) -> io::Result<std::os::windows::io::OwnedHandle> {
                match end {}
            }
        }

        impl io::Read for $name {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                match *self {}
            }
        }

        impl futures::io::AsyncRead for $name {
            fn poll_read(self: Pin<&mut Self>, _: &mut Context<'_>, _: &mut [u8]) -> Poll<io::Result<usize>> {
                match *self {}
            }
        }

        impl io::Write for $name {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                match *self {}
            }

            fn flush(&mut self) -> io::Result<()> {
                match *self {}
            }
        }

        impl futures::io::AsyncWrite for $name {
            fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, _: &[u8]) -> Poll<io::Result<usize>> {
                match *self {}
            }

            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                match *self {}
            }

            fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                match *self {}
            }
        }
    )*};
}

no_end!(ChildStdin, ChildStdout, ChildStderr);

#[derive(Debug, Clone, Default)]
pub(crate) struct Runner {}

impl Runner {
    pub(crate) fn new() -> Result<Runner, RunError> {
        Ok(Runner {})
    }

    pub(crate) fn prepare(&self, _options: StepOptions) -> Result<Prepared, RunError> {
        Err(unsupported())
    }

    pub(crate) fn shutdown(&self) {}
}
