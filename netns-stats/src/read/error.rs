//! The error of every reader.

use std::io;
use std::path::PathBuf;

use stepmon_cgroupfs_parse::ParseError;

/// Why a reading failed. Each variant names the file involved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Opening a file failed (no such namespace or interface, permission).
    #[error("cannot open {}: {source}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// `setns(CLONE_NEWNET)` failed: `EPERM` without `CAP_SYS_ADMIN`,
    /// `EINVAL` if the file is not a network namespace.
    #[error("cannot enter the network namespace {}: {source}", path.display())]
    Setns {
        /// The namespace file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The helper thread that enters the namespace could not be started or
    /// panicked.
    #[error("namespace helper thread for {}: {source}", path.display())]
    Thread {
        /// The namespace file.
        path: PathBuf,
        /// The OS error (or `Other` for a panic).
        source: io::Error,
    },
    /// Reading a file failed (e.g. `EINVAL` from a device being unregistered).
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The content did not parse.
    #[error("cannot parse {}: {source}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Where and what.
        source: ParseError,
    },
    /// An interface name the kernel could not have created (`dev_valid_name()`):
    /// refused before it is joined to a path.
    #[error("invalid interface name {name:?}")]
    InvalidName {
        /// The name as given.
        name: String,
    },
}
