//! What stepmon itself cost while recording the step.

use serde::{Deserialize, Serialize};

/// stepmon's own cost: CPU time, peak RSS and samples taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CollectorVerdict {
    /// stepmon's CPU time share of the wall time is below
    /// [`Thresholds::collector_cpu_share`](super::Thresholds::collector_cpu_share).
    pub negligible: Option<bool>,
    /// stepmon's CPU time (all threads), s.
    pub cpu_seconds: Option<f64>,
    /// stepmon's CPU time / the step's wall time.
    pub cpu_share: Option<f64>,
    /// stepmon's peak RSS, bytes.
    pub max_rss_bytes: Option<u64>,
    /// Step samples kept.
    pub samples: usize,
    /// Machine samples kept.
    pub sys_samples: usize,
    /// In words.
    pub reason: String,
}
