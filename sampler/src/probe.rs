//! What a [`crate::Sampler`] samples.

use std::time::Duration;

use jiff::Timestamp;

/// When a read happens: monotonic time for scheduling, wall time for the
/// sample's timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tick {
    /// Monotonic time since the clock's origin.
    pub mono: Duration,
    /// Wall-clock time.
    pub wall: Timestamp,
}

/// Something that can be read into a sample: a cgroup directory, the
/// machine's `/proc`, a network namespace, a test double.
///
/// A probe does not fail: a read that only partly works returns a partial
/// sample that records what is missing and why (stepmon's probes carry a
/// `missing` list), so one bad file never erases the other data. Use
/// `Result<T, E>` as the sample type for probes where all-or-nothing is right.
pub trait Probe: Send + 'static {
    /// The sample type; cloned once per subscriber that is due on a tick.
    type Sample: Clone + Send + 'static;

    /// Reads one sample.
    fn sample(&mut self, tick: Tick) -> Self::Sample;
}

/// Any `FnMut(Tick) -> S` is a probe.
impl<F, S> Probe for F
where
    F: FnMut(Tick) -> S + Send + 'static,
    S: Clone + Send + 'static,
{
    type Sample = S;

    fn sample(&mut self, tick: Tick) -> S {
        self(tick)
    }
}
