//! A generic, throttled sampler (work in progress).
#![deny(missing_docs)]

pub mod policy;
pub mod schedule;

pub use policy::{FastStart, Policy, PolicyError};
pub use schedule::{Schedule, SubId, Timed};
