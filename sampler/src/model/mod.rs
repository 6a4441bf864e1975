//! The JSON data model of step samples (BuildKit's `Sample` and stepmon's additions).

mod step;
mod summary;
mod usage;

pub use step::{
    CpuStat, IoDevice, IoStat, LimitJson, MaxToken, MemoryEventsJson, MemoryStat, PidsEventsJson, PidsStat, StepSample,
    StepSampleExt,
};
pub use stepmon_sysusage::model::{Missing, MissingKind};
pub use summary::{Baseline, CpuSummary, IoSummary, MachineSummary, MemorySummary, StallSummary, UsageSummary};
pub use usage::{Samples, SamplesExt, StepUsage};
