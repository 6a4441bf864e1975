//! How a step's network traffic is counted: what [`StepProbe`](crate::StepProbe)
//! opens and a [`Monitor`](crate::Monitor) records with.

use std::path::PathBuf;

/// How a step's network traffic is counted.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum NetworkSource {
    /// Not counted: the step shares a namespace with other processes (e.g.
    /// the host's), so its counters would not be the step's own. Every
    /// sample's `missing` says so.
    #[default]
    SharedNamespace,
    /// The step has its own network namespace, named by a path such as
    /// `/proc/<pid>/ns/net` or `/run/netns/<name>`.
    Namespace {
        /// The namespace file.
        path: PathBuf,
        /// Count loopback traffic too.
        include_loopback: bool,
    },
}
