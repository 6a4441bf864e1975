//! The stop of one step's record: once an append fails (a full disk, a
//! short write) nothing more of the step is appended, whether the
//! [`JobWriter`](crate::JobWriter) or an [`EventAppender`](crate::EventAppender)
//! failed.

use std::sync::{Mutex, PoisonError};

use crate::error::JobError;

/// The stop of one step's record, shared by its writer and its event
/// appenders.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// An append failed: nothing more of the step is appended.
    pub(crate) stopped: bool,
    /// Why, when an event appender's append was the one that failed (the
    /// writer takes it, for [`EndReport::stopped`](crate::EndReport::stopped)).
    pub(crate) why: Option<JobError>,
}

/// `shared`, locked (a panic under the lock leaves a flag and a reason).
pub(crate) fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What became of a line a [`JobWriter`](crate::JobWriter) was asked to append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "the append that stops the record is the one to say so (`Appended::Stopped`)"]
pub enum Appended {
    /// Appended whole.
    Written,
    /// Not appended, and this append stopped the record:
    /// [`JobWriter::stopped`](crate::JobWriter::stopped) says why. Say it now; nothing more of the
    /// step will be appended.
    Stopped,
    /// Not appended: an earlier append stopped the record.
    AlreadyStopped,
}

impl Appended {
    /// Whether the line was appended.
    #[must_use]
    pub fn is_written(self) -> bool {
        self == Appended::Written
    }
}
