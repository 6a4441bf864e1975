//! A generic, throttled, async-runtime-agnostic sampler, and per-step
//! recording of cgroup v2 resource usage with it.
//!
//! * [`Sampler`] — reads one [`Probe`] on a shared tick for any number of
//!   [`Subscription`]s, following a [`Policy`]: BuildKit's rules by default
//!   (2 s minimum interval, per-subscriber back-off, thinning on close, one
//!   final sample), plus an optional fast start and baseline sample. Driven
//!   by the process's one sampler thread ([`Sampler::start`]; it parks until
//!   the next deadline) or by any executor ([`Sampler::driver`]; timers from
//!   `async-io` there); samples arrive as a
//!   `futures::Stream` and on `close().await` (or `close_blocking()`). Time is
//!   injectable ([`Clock`], [`ManualClock`]) so schedules are tested exactly.
//! * [`Monitor`] and [`Recorder`] — BuildKit's per-step recording: a step's
//!   cgroup samples (`resourceUsage`), the machine's samples (`sysUsage`) and
//!   the machine's CPU delta over the step (`sysCPUStat`), as [`model`] JSON.
//!   The same API on every OS: off Linux the backend is `stepmon-stub-noop`.
//! * Linux probes: [`cgroup::CgroupProbe`] (one cgroup directory, held fds,
//!   a reason for every absent field), [`StepProbe`] (cgroup + the step's own
//!   network namespace), [`SystemProbe`] (`/proc`).
//!
//! ```
//! use std::time::Duration;
//! use stepmon_sampler::{Policy, Sampler, Tick};
//!
//! let mut policy = Policy::buildkit_step();
//! policy.min_interval = Duration::from_millis(20);
//! let sampler = Sampler::start(|tick: Tick| tick.wall, policy)?;
//! let sub = sampler.subscribe();
//! std::thread::sleep(Duration::from_millis(50));
//! let samples = sub.close_blocking(true);
//! assert!(samples.len() >= 2);
//! # Ok::<(), stepmon_sampler::StartError>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

#[cfg(target_os = "linux")]
pub mod cgroup;
pub mod clock;
mod driver;
pub mod model;
mod network;
pub mod policy;
pub mod probe;
mod recorder;
mod sampler;
pub mod schedule;
#[cfg(target_os = "linux")]
mod step;
#[cfg(target_os = "linux")]
mod system;

pub use clock::{Clock, ManualClock, SystemClock};
pub use network::NetworkSource;
pub use policy::{FastStart, Policy, PolicyError};
pub use probe::{Probe, Tick};
pub use recorder::{LiveSamples, Monitor, MonitorError, MonitorOptions, Recorder, RecorderView};
pub use sampler::{SampleStream, Sampler, StartError, Subscription};
pub use schedule::{Schedule, SubId, Timed};
#[cfg(target_os = "linux")]
pub use step::StepProbe;
#[cfg(target_os = "linux")]
pub use system::SystemProbe;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
