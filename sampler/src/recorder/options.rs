//! How a [`Monitor`](super::Monitor) samples.

use std::path::PathBuf;

use crate::policy::Policy;

/// How a [`Monitor`](super::Monitor) samples.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct MonitorOptions {
    /// Policy of each step's samples (default [`Policy::step`]).
    pub step_policy: Policy,
    /// Policy of the machine's samples (default [`Policy::system`]).
    pub system_policy: Policy,
    /// procfs root (default `/proc`).
    pub proc_root: PathBuf,
}

impl Default for MonitorOptions {
    fn default() -> Self {
        MonitorOptions {
            step_policy: Policy::step(),
            system_policy: Policy::system(),
            proc_root: PathBuf::from("/proc"),
        }
    }
}
