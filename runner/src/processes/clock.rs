//! Connector event stamps as [`Instant`]s.

use std::time::{Duration, Instant};

/// The monotonic clock (`ktime_get_ns`, which stamps connector events,
/// drivers/connector/cn_proc.c) read once beside an [`Instant`] (the same
/// clock on Linux), so that an event's stamp becomes an [`Instant`] without a
/// clock read per event: a fork read after a pause happened up to the pause
/// earlier.
pub(super) struct EventClock {
    pub(super) at: Instant,
    pub(super) ns: u64,
}

impl EventClock {
    pub(super) fn now() -> EventClock {
        let clock = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        let ns = u64::try_from(clock.tv_sec).unwrap_or(0).saturating_mul(1_000_000_000)
            + u64::try_from(clock.tv_nsec).unwrap_or(0);
        EventClock { at: Instant::now(), ns }
    }

    /// When the event stamped `timestamp_ns` happened, no later than `now`.
    pub(super) fn happened(&self, timestamp_ns: u64, now: Instant) -> Instant {
        let at = if timestamp_ns >= self.ns {
            self.at + Duration::from_nanos(timestamp_ns - self.ns)
        } else {
            self.at.checked_sub(Duration::from_nanos(self.ns - timestamp_ns)).unwrap_or(self.at)
        };
        at.min(now)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_events_stamp_becomes_the_instant_it_happened() {
        let clock = super::EventClock::now();
        let later = clock.at + std::time::Duration::from_millis(700);
        assert_eq!(clock.happened(clock.ns + 200_000_000, later), clock.at + std::time::Duration::from_millis(200));
        assert_eq!(clock.happened(clock.ns + 900_000_000, later), later, "never after it was read");
        assert!(clock.happened(clock.ns.saturating_sub(1_000), later) <= clock.at);
    }
}
