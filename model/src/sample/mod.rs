//! A step's samples: BuildKit's per-step `Sample` and `Samples` JSON
//! (`resourceUsage`), what one recording yields ([`StepUsage`]), and the
//! summary numbers computed from it ([`UsageSummary`]).

mod step;
mod summary;
mod usage;

pub use step::{
    CpuStat, Device, IoDevice, IoStat, LimitJson, MaxToken, MemoryEventsJson, MemoryStat, PidsEventsJson, PidsStat,
    StepSample, StepSampleExt,
};
pub use summary::{CpuSummary, IoSummary, MachineSummary, MemorySummary, StallSummary, UsageSummary};
pub use usage::{Samples, SamplesExt, StepUsage};
