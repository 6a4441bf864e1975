//! A generic, throttled, async-runtime-agnostic sampler (work in progress).
#![deny(missing_docs)]

#[cfg(target_os = "linux")]
pub mod cgroup;
pub mod clock;
pub mod model;
pub mod policy;
pub mod probe;
mod sampler;
pub mod schedule;

pub use clock::{Clock, ManualClock, SystemClock};
pub use policy::{FastStart, Policy, PolicyError};
pub use probe::{Probe, Tick};
pub use sampler::{SampleStream, Sampler, StartError, Subscription};
pub use schedule::{Schedule, SubId, Timed};
