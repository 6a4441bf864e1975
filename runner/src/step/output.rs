//! A step's end with what it wrote to its piped stdout and stderr, as
//! `std::process::Child::wait_with_output` gives it: blocking, or as a
//! future.

use std::future::{Future, IntoFuture};

use super::{Finished, Step};
use crate::action::collect::{Collect, read_all};
use crate::error::RunError;

impl Step {
    /// Waits for the step's end (blocking the calling thread) while reading
    /// its piped stdout and stderr whole, into [`Finished::stdout`] and
    /// [`Finished::stderr`] (empty for a stream not piped, or taken from
    /// the step before). Its piped stdin, if not taken, is closed first,
    /// as std's does.
    ///
    /// Both pipes are read as they fill, on this thread, between the
    /// step's own events (one `poll` for all), so a command that writes
    /// more than a pipe holds to both never waits for a reader. They are
    /// read to their end after the step's end: its processes are gone by
    /// then (killed, or waited for with `wait_all`), so only a process
    /// outside the step holding a copy of a pipe would keep it open.
    pub(crate) fn wait_with_output(mut self) -> Result<Finished, RunError> {
        drop(self.stdin.take());
        let mut output = Collect::new(self.stdout.take(), self.stderr.take());
        let mut finished = self.wait_reading(Some(&mut output))?;
        (finished.stdout, finished.stderr) =
            output.finish().map_err(|e| RunError::io("reading the step's output", e))?;
        Ok(finished)
    }

    /// [`Step::wait_with_output`] as a future, on any executor: the step's
    /// end (as awaiting the step) and both pipes read to their end, all
    /// three concurrently. It borrows nothing: it can move to another task.
    pub(crate) fn output(mut self) -> impl Future<Output = Result<Finished, RunError>> + Send + 'static {
        drop(self.stdin.take());
        let (stdout, stderr) = (self.stdout.take(), self.stderr.take());
        let end = self.into_future();
        async move {
            let (finished, stdout, stderr) = futures::future::join3(end, read_all(stdout), read_all(stderr)).await;
            let mut finished = finished?;
            finished.stdout = stdout.map_err(|e| RunError::io("reading the step's stdout", e))?;
            finished.stderr = stderr.map_err(|e| RunError::io("reading the step's stderr", e))?;
            Ok(finished)
        }
    }
}
