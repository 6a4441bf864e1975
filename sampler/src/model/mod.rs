//! The JSON data model of step samples (BuildKit's `Sample` and stepmon's additions).

mod missing;
mod step;

pub use missing::{Missing, MissingReason};
pub use step::{
    CpuStat, IoDevice, IoStat, LimitJson, MaxToken, MemoryEventsJson, MemoryStat, PidsStat, StepSample, StepSampleExt,
};
