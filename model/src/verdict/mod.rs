//! Verdicts: what a step's numbers mean, each with the numbers behind it
//! and the threshold it was judged by ([`Thresholds`]).
//!
//! * [`BottleneckVerdict`] — what the step waited for, from PSI stall-time
//!   deltas over the whole step (not `avg10`, which forgets after 10 s).
//! * [`ThrottlingVerdict`] — whether its own `cpu.max` held it back.
//! * [`MachineVerdict`] — whether the machine was busy with other work
//!   (others' share of CPU, steal, the machine's CPU pressure).
//! * [`MemoryVerdict`] — OOM kills, `memory.max`/`memory.high` hits, peak
//!   against the limit, page cache against anonymous memory.
//! * [`CollectorVerdict`] — what stepmon itself cost.

mod bottleneck;
mod collector;
mod machine;
mod memory;
mod thresholds;
mod throttling;

use serde::{Deserialize, Serialize};

pub use bottleneck::{Bottleneck, BottleneckVerdict, CpuStallCause};
pub use collector::CollectorVerdict;
pub use machine::{MachineLoad, MachineVerdict};
pub use memory::{MemoryOutcome, MemoryVerdict, PeakProcess};
pub use thresholds::Thresholds;
pub use throttling::ThrottlingVerdict;

/// Every verdict on one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdicts {
    /// What the step waited for.
    pub bottleneck: BottleneckVerdict,
    /// Its own CPU limit.
    pub throttling: ThrottlingVerdict,
    /// The rest of the machine.
    pub machine: MachineVerdict,
    /// Memory.
    pub memory: MemoryVerdict,
    /// stepmon's own cost (`None` for steps stepmon did not record).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub collector: Option<CollectorVerdict>,
    /// The thresholds used.
    pub thresholds: Thresholds,
}

impl Verdicts {
    /// One sentence per verdict, for people (the `reason` of each).
    #[must_use]
    pub fn sentences(&self) -> Vec<&str> {
        let mut out = vec![
            self.bottleneck.reason.as_str(),
            self.throttling.reason.as_str(),
            self.machine.reason.as_str(),
            self.memory.reason.as_str(),
        ];
        if let Some(c) = &self.collector {
            out.push(c.reason.as_str());
        }
        out
    }
}
