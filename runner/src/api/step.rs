//! A running step: the public handle over the platform's own.

use std::future::{Future, IntoFuture};
use std::io;
use std::pin::Pin;

use super::ends::{ChildStderr, ChildStdin, ChildStdout};
use crate::error::RunError;
use crate::finished::Finished;
use crate::imp;
use crate::notice::Notice;

/// A running step: await it (it is a runtime-agnostic [`Future`] through
/// [`IntoFuture`]) or [`Step::wait`] for it; kill, freeze or thaw it
/// meanwhile. Dropped before its end, its processes are killed.
///
/// Its piped streams ([`crate::Stdio::piped`]) are its fields, as
/// `std::process::Child`'s are: take them to write and read while it runs,
/// or leave them to [`Step::wait_with_output`] / [`Step::output`].
#[derive(Debug)]
pub struct Step {
    /// This process's end of the step's stdin, when it is piped.
    pub stdin: Option<ChildStdin>,
    /// This process's end of the step's stdout, when it is piped.
    pub stdout: Option<ChildStdout>,
    /// This process's end of the step's stderr, when it is piped.
    pub stderr: Option<ChildStderr>,
    inner: imp::Step,
}

impl Step {
    /// The platform's step, its pipe ends moved out to the public fields.
    pub(super) fn new(mut inner: imp::Step) -> Step {
        Step {
            stdin: inner.stdin.take().map(ChildStdin),
            stdout: inner.stdout.take().map(ChildStdout),
            stderr: inner.stderr.take().map(ChildStderr),
            inner,
        }
    }

    /// The platform's step with the ends the caller left (taken ones stay
    /// taken), for the calls that end it.
    fn into_inner(self) -> imp::Step {
        let mut inner = self.inner;
        inner.stdin = self.stdin.map(|end| end.0);
        inner.stdout = self.stdout.map(|end| end.0);
        inner.stderr = self.stderr.map(|end| end.0);
        inner
    }

    /// The process ID of the step's first process.
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.inner.pid()
    }

    /// What the user should know about the step's placement (see
    /// [`crate::Prepared::notices`]).
    #[must_use]
    pub fn notices(&self) -> &[Notice] {
        self.inner.notices()
    }

    /// Kills the step. Linux: SIGKILL to every process of its cgroup
    /// (`cgroup.kill`, Linux 5.14) or to its first process, the rest of its
    /// tree killed when that one has exited, as at any step's end. Windows:
    /// every process of its job object (`TerminateJobObject`, exit status
    /// 1). macOS and the BSDs: SIGKILL to its process group.
    pub fn kill(&self) -> io::Result<()> {
        self.inner.kill()
    }

    /// Freezes every process of the step. Linux: its cgroup's
    /// `cgroup.freeze` (cgroup v2, Linux 5.2), or SIGSTOP to each process of
    /// its tree; macOS and the BSDs: SIGSTOP to its process group. Windows
    /// has no public call that suspends a process: an error of kind
    /// `Unsupported` there.
    pub fn freeze(&self) -> io::Result<()> {
        self.inner.freeze()
    }

    /// Thaws what [`Step::freeze`] froze.
    pub fn thaw(&self) -> io::Result<()> {
        self.inner.thaw()
    }

    /// Waits for the step's end (blocking the calling thread), then as
    /// [`crate::Prepared::run`]. Its piped stdin, if not taken, is closed
    /// first, as std's `Child::wait` does (a command reading it would
    /// otherwise wait for input forever). Its piped stdout and stderr are
    /// not read: take them first (or see [`Step::wait_with_output`]), or a
    /// command that fills a pipe waits for a reader forever.
    pub fn wait(mut self) -> Result<Finished, RunError> {
        drop(self.stdin.take());
        self.into_inner().wait()
    }

    /// Waits for the step's end (blocking the calling thread) while reading
    /// its piped stdout and stderr whole, into [`Finished::stdout`] and
    /// [`Finished::stderr`] (empty for a stream not piped, or taken from
    /// the step before). Its piped stdin, if not taken, is closed first,
    /// as std's does.
    ///
    /// Both pipes are read as they fill, so a command that writes more than
    /// a pipe holds to both never waits for a reader (Linux: on this
    /// thread, between the step's own events, one `poll` for all;
    /// elsewhere on a thread each). They are read to their end after the
    /// step's end: its processes are gone by then (killed, or waited for
    /// with `wait_all`), so only a process outside the step holding a copy
    /// of a pipe would keep it open.
    pub fn wait_with_output(self) -> Result<Finished, RunError> {
        self.into_inner().wait_with_output()
    }

    /// [`Step::wait_with_output`] as a future, on any executor: the step's
    /// end (as awaiting the step) and both pipes read to their end, all
    /// three concurrently. It borrows nothing: it can move to another task.
    pub fn output(self) -> impl Future<Output = Result<Finished, RunError>> + Send + 'static {
        self.into_inner().output()
    }
}

/// The step's end as a future, on any executor. Linux: it waits on the
/// subreaper's pipe in `async-io`'s reactor. Elsewhere the blocking wait
/// runs on a thread of its own (one per awaited step) and the future waits
/// for that thread's answer, so no executor thread is blocked.
impl IntoFuture for Step {
    type Output = Result<Finished, RunError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Result<Finished, RunError>> + Send>>;

    fn into_future(mut self) -> Self::IntoFuture {
        // As `wait`: an untaken piped stdin is closed first.
        drop(self.stdin.take());
        self.into_inner().into_future()
    }
}
