//! A generic, throttled, async-runtime-agnostic sampler (work in progress).
#![deny(missing_docs)]

#[cfg(target_os = "linux")]
pub mod cgroup;
pub mod clock;
pub mod model;
pub mod policy;
pub mod probe;
#[cfg(target_os = "linux")]
mod recorder;
mod sampler;
pub mod schedule;
#[cfg(target_os = "linux")]
pub mod step;
#[cfg(target_os = "linux")]
pub mod system;

pub use clock::{Clock, ManualClock, SystemClock};
pub use policy::{FastStart, Policy, PolicyError};
pub use probe::{Probe, Tick};
#[cfg(target_os = "linux")]
pub use recorder::{Monitor, MonitorError, MonitorOptions, Recorder};
pub use sampler::{SampleStream, Sampler, StartError, Subscription};
pub use schedule::{Schedule, SubId, Timed};
#[cfg(target_os = "linux")]
pub use step::{NetworkSource, StepProbe};
#[cfg(target_os = "linux")]
pub use system::SystemProbe;
