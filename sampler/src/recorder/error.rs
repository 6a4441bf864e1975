//! Why a monitor or recording could not start.

use std::io;
use std::path::PathBuf;

use crate::sampler::StartError;

/// Why a monitor or recording could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MonitorError {
    /// Opening `/proc` or the step's cgroup directory failed.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A sampler could not start.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The monitor was shut down.
    #[error("the monitor is shut down")]
    Closed,
}
