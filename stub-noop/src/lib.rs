//! The no-op backend behind `stepmon-sampler`'s `Monitor` and `Recorder` on
//! platforms without cgroup v2 and procfs (Windows, macOS, the BSDs).
//!
//! `stepmon-sampler` selects it with `cfg(not(target_os = "linux"))`, so
//! callers write the same code on every OS: creating a monitor succeeds,
//! recording succeeds, closing returns a usage that measured nothing and says
//! why ([`UNSUPPORTED_PLATFORM`]), shutdown returns. There is no `None`/nil
//! sampler to check for — the cause of BuildKit's Windows crashes (#4040,
//! #4774: a nil system sampler closed on Ctrl+C).
//!
//! This crate holds only the bookkeeping that must behave like the real
//! monitor (open recordings are counted, a shut-down monitor refuses new
//! recordings, release actions run and are awaited); it knows nothing of
//! stepmon's data model, which the sampler fills in.
//!
//! ```
//! use stepmon_stub_noop::NoopMonitor;
//! let monitor = NoopMonitor::new();
//! let recorder = monitor.record().unwrap();
//! assert_eq!(monitor.open_recordings(), 1);
//! recorder.close();
//! assert_eq!(monitor.open_recordings(), 0);
//! futures::executor::block_on(monitor.shutdown());
//! assert!(monitor.record().is_err());
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::channel::oneshot;

/// The reason every field of a recording made on this platform is absent.
pub const UNSUPPORTED_PLATFORM: &str =
    "resource monitoring needs Linux (cgroup v2 and procfs); nothing is measured on this platform";

/// [`NoopMonitor::record`] after [`NoopMonitor::shutdown`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

impl std::fmt::Display for Closed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the monitor is shut down")
    }
}

impl std::error::Error for Closed {}

#[derive(Debug, Default)]
struct State {
    closed: AtomicBool,
    open: AtomicUsize,
    releases: Mutex<Vec<oneshot::Receiver<()>>>,
}

/// A monitor that measures nothing but keeps the real one's bookkeeping.
#[derive(Debug, Clone, Default)]
pub struct NoopMonitor {
    state: Arc<State>,
}

impl NoopMonitor {
    /// A new monitor; never fails.
    #[must_use]
    pub fn new() -> Self {
        NoopMonitor::default()
    }

    /// Starts a (no-op) recording; fails only after [`NoopMonitor::shutdown`].
    pub fn record(&self) -> Result<NoopRecorder, Closed> {
        if self.state.closed.load(Ordering::Acquire) {
            return Err(Closed);
        }
        self.state.open.fetch_add(1, Ordering::AcqRel);
        Ok(NoopRecorder { state: Arc::clone(&self.state), open: true })
    }

    /// Recordings not closed yet.
    #[must_use]
    pub fn open_recordings(&self) -> usize {
        self.state.open.load(Ordering::Acquire)
    }

    /// Refuses new recordings and waits for every release registered with
    /// [`NoopRecorder::close_then`].
    pub async fn shutdown(&self) {
        self.state.closed.store(true, Ordering::Release);
        let releases = std::mem::take(&mut *self.state.releases.lock().unwrap_or_else(PoisonError::into_inner));
        for done in releases {
            let _ = done.await;
        }
        self.state.open.store(0, Ordering::Release);
    }
}

/// A recording that measures nothing.
#[derive(Debug)]
pub struct NoopRecorder {
    state: Arc<State>,
    open: bool,
}

impl NoopRecorder {
    /// An empty stream of live samples.
    pub fn stream<T>(&self) -> futures::stream::Empty<T> {
        futures::stream::empty()
    }

    /// Ends the recording.
    pub fn close(mut self) {
        self.finish();
    }

    /// Ends the recording on a background thread, then runs `release`;
    /// [`NoopMonitor::shutdown`] waits for it.
    pub fn close_then(mut self, release: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
        let (done, wait) = oneshot::channel();
        self.state.releases.lock().unwrap_or_else(PoisonError::into_inner).push(wait);
        self.finish();
        std::thread::Builder::new().name("stepmon-release".into()).spawn(move || {
            release();
            let _ = done.send(());
        })?;
        Ok(())
    }

    fn finish(&mut self) {
        if std::mem::take(&mut self.open) {
            // Saturating: shutdown may have reset the count already.
            let _ = self.state.open.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| Some(n.saturating_sub(1)));
        }
    }
}

impl Drop for NoopRecorder {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    #[test]
    fn bookkeeping_matches_the_real_monitor() {
        let monitor = NoopMonitor::new();
        let a = monitor.record().unwrap();
        let b = monitor.record().unwrap();
        assert_eq!(monitor.open_recordings(), 2);
        assert!(futures::executor::block_on(a.stream::<u8>().next()).is_none());
        let ran = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&ran);
        a.close_then(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            flag.store(true, Ordering::SeqCst);
        })
        .unwrap();
        drop(b);
        assert_eq!(monitor.open_recordings(), 0);
        futures::executor::block_on(monitor.shutdown());
        assert!(ran.load(Ordering::SeqCst), "shutdown waits for releases");
        assert_eq!(monitor.record().unwrap_err(), Closed);
    }
}
