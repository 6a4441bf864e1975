//! The JSON data model of step samples (BuildKit's `Sample` and stepmon's additions).

mod missing;
mod step;
mod usage;

pub use missing::{Missing, MissingReason};
pub use step::{
    CpuStat, IoDevice, IoStat, LimitJson, MaxToken, MemoryEventsJson, MemoryStat, PidsStat, StepSample, StepSampleExt,
};
pub use usage::{Samples, SamplesExt, StepUsage};
