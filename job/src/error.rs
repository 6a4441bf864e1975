//! Why a job record could not be written, each with the file it concerns
//! and the underlying error as its [`source`](std::error::Error::source).

use std::io;
use std::path::PathBuf;

/// A job record or a gc marker that could not be written or read.
///
/// The message says what failed and where, the source says why (the OS
/// error: `Permission denied`, `No space left on device`, a short write);
/// each variant's docs say what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// The record could not be opened (created) for appending. Give a path
    /// in a directory that exists and that this user may write.
    #[error("cannot open the job record {}: {source}", path.display())]
    Open {
        /// The job record.
        path: PathBuf,
        /// The error of `open(2)`.
        source: io::Error,
    },
    /// A line could not be appended whole: the write failed, or was short
    /// (a full disk: the record's last line is torn then). Nothing more is
    /// appended for the step; the record ends here, its step does not —
    /// say so where it can still be read (the run document's warnings).
    #[error("cannot append to the job record {}: {source}", path.display())]
    Append {
        /// The job record.
        path: PathBuf,
        /// The error of `write(2)`, or `WriteZero` for a short write.
        source: io::Error,
    },
    /// A record did not serialise (a value JSON cannot hold); treated as a
    /// failed append: nothing more is appended for the step.
    #[error("cannot append to the job record {}: JSON: {source}", path.display())]
    Encode {
        /// The job record.
        path: PathBuf,
        /// serde_json's error.
        source: serde_json::Error,
    },
    /// The step's end was appended but could not be flushed to the disk
    /// (`fdatasync(2)`): it is in the page cache, and lost only if the
    /// machine goes away before the kernel writes it.
    #[error("cannot sync the job record {}: {source}", path.display())]
    Sync {
        /// The job record.
        path: PathBuf,
        /// The error of `fdatasync(2)`.
        source: io::Error,
    },
    /// The thread that appends the live samples could not start (the
    /// process's thread limit): run the step without a job record, or
    /// append its samples on a thread of the caller's.
    #[error("cannot start the job record's thread: {source}")]
    Thread {
        /// The error of `clone(2)`.
        source: io::Error,
    },
    /// A gc marker could not be read; it is removed (the step stays
    /// interrupted, only not marked as collected).
    #[error("cannot read {}: {source}", marker.display())]
    ReadMarker {
        /// The marker.
        marker: PathBuf,
        /// The error of reading it.
        source: io::Error,
    },
    /// A file among the gc markers is not one (its writer was cut short, or
    /// it was put there by hand); it is removed.
    #[error("{}: not a marker: {source}", marker.display())]
    NotAMarker {
        /// The file.
        marker: PathBuf,
        /// Why it does not read as a marker.
        source: serde_json::Error,
    },
    /// The job record a gc marker names could not be opened (moved or
    /// removed since its step started); the marker is removed.
    #[error("cannot open the job record {}: {source}", path.display())]
    OpenExisting {
        /// The job record.
        path: PathBuf,
        /// The error of `open(2)`: `NotFound` when it is gone.
        source: io::Error,
    },
    /// `STEPMON_JOB_SYNC` names no durability
    /// ([`Durability::from_env`](crate::Durability::from_env)): set it to
    /// `every`, `long` or `none`, or unset it.
    #[error("STEPMON_JOB_SYNC={value:?}: not every, long or none")]
    Durability {
        /// Its value.
        value: String,
    },
}

impl JobError {
    /// The OS error behind it, when there is one: what a caller matches
    /// its advice on (`PermissionDenied`, `NotFound`, `StorageFull`, ...).
    #[must_use]
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            JobError::Open { source, .. }
            | JobError::Append { source, .. }
            | JobError::Sync { source, .. }
            | JobError::Thread { source }
            | JobError::ReadMarker { source, .. }
            | JobError::OpenExisting { source, .. } => Some(source),
            JobError::Encode { .. } | JobError::NotAMarker { .. } | JobError::Durability { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn the_os_error_is_the_source_and_named_in_the_message() {
        let e = JobError::Append { path: "/ci/job.jsonl".into(), source: io::Error::from(io::ErrorKind::StorageFull) };
        let source = e.source().and_then(|s| s.downcast_ref::<io::Error>()).map(io::Error::kind);
        assert_eq!(source, Some(io::ErrorKind::StorageFull));
        assert_eq!(e.io_error().map(io::Error::kind), Some(io::ErrorKind::StorageFull));
        let said = e.to_string();
        assert!(said.starts_with("cannot append to the job record /ci/job.jsonl: "), "{said}");
        assert!(said.contains(&io::Error::from(io::ErrorKind::StorageFull).to_string()), "{said}");
        let json = serde_json::from_str::<u8>("x").unwrap_err();
        let e = JobError::NotAMarker { marker: "/run/stepmon/jobs/1.2.json".into(), source: json };
        assert!(e.source().is_some() && e.io_error().is_none());
        assert!(e.to_string().starts_with("/run/stepmon/jobs/1.2.json: not a marker: "), "{e}");
    }
}
