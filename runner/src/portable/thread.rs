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
