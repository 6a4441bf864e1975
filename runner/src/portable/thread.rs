//! A blocking wait as a future: it runs on a thread of its own and the
//! future waits for its answer, so no executor thread blocks (Windows
//! cannot wait for a process handle in a reactor; one thread per awaited
//! step is what `async-process` does too).

use std::future::Future;
use std::pin::Pin;

use crate::error::{RunError, RunErrorKind};

/// `wait` on a new thread, as a future.
pub(crate) fn on_thread<T: Send + 'static>(
    wait: impl FnOnce() -> Result<T, RunError> + Send + 'static,
) -> Pin<Box<dyn Future<Output = Result<T, RunError>> + Send>> {
    let (tx, rx) = futures::channel::oneshot::channel();
    let spawned = std::thread::Builder::new().name("stepmon-wait".into()).spawn(move || {
        let _ = tx.send(wait());
    });
    Box::pin(async move {
        if let Err(e) = spawned {
            return Err(RunError::io("cannot start a thread to wait for the step", e));
        }
        rx.await.unwrap_or_else(|_| Err(RunError::new(RunErrorKind::Io, "the step's waiting thread ended early")))
    })
}

/// A pipe end read to its end on a thread of its own.
pub(crate) type Reading = std::thread::JoinHandle<std::io::Result<Vec<u8>>>;

/// Reads `end` to its end on a new thread.
pub(crate) fn read_on_thread<R: std::io::Read + Send + 'static>(mut end: R) -> Reading {
    std::thread::spawn(move || {
        let mut all = Vec::new();
        end.read_to_end(&mut all).map(|_| all)
    })
}

/// What [`read_on_thread`] read of the step's `name` (empty for `None`).
pub(crate) fn joined(reading: Option<Reading>, name: &str) -> Result<Vec<u8>, RunError> {
    let Some(reading) = reading else { return Ok(Vec::new()) };
    let read =
        reading.join().map_err(|_| RunError::new(RunErrorKind::Io, format!("reading the step's {name} failed")))?;
    read.map_err(|e| RunError::io(&format!("reading the step's {name}"), e))
}
