//! Stall time between two PSI readings:
//! <https://docs.kernel.org/accounting/psi.html#pressure-interface> (`total`).

use core::time::Duration;

use crate::pressure::{Pressure, PressureLine};

/// Stall time accumulated between two readings of the same PSI file, and
/// its share of the wall time between them. Use `total` deltas rather than
/// the `avg*` values to judge a step: averages are decaying windows that
/// lag and blur a step's start and end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StallDelta {
    /// µs in which at least one task stalled. `None` if either reading lacks
    /// the `some` total, or it went backwards (PSI was restarted).
    pub some_usec: Option<u64>,
    /// µs in which all non-idle tasks stalled; `None` as for `some_usec`.
    pub full_usec: Option<u64>,
    /// The wall time between the readings, µs.
    pub wall_usec: u64,
}

fn total_delta(earlier: Option<PressureLine>, later: Option<PressureLine>) -> Option<u64> {
    later?.total_usec?.checked_sub(earlier?.total_usec?)
}

#[allow(clippy::cast_precision_loss)] // µs counts stay far below 2^53 (285 years)
fn share(stall_usec: Option<u64>, wall_usec: u64) -> Option<f64> {
    if wall_usec == 0 {
        return None;
    }
    Some(stall_usec? as f64 / wall_usec as f64)
}

impl StallDelta {
    /// The delta from `earlier` to `later`, taken `wall` apart.
    #[must_use]
    pub fn between(earlier: &Pressure, later: &Pressure, wall: Duration) -> StallDelta {
        StallDelta {
            some_usec: total_delta(earlier.some, later.some),
            full_usec: total_delta(earlier.full, later.full),
            wall_usec: u64::try_from(wall.as_micros()).unwrap_or(u64::MAX),
        }
    }

    /// `some` stall as a fraction of wall time (0.25 = a quarter). Can
    /// slightly exceed 1 because readings are not atomic; `None` when the
    /// stall is unknown or no wall time passed.
    #[must_use]
    pub fn some_share_of_wall(&self) -> Option<f64> {
        share(self.some_usec, self.wall_usec)
    }

    /// `full` stall as a fraction of wall time.
    #[must_use]
    pub fn full_share_of_wall(&self) -> Option<f64> {
        share(self.full_usec, self.wall_usec)
    }

    /// `some` stall in percent of wall time.
    #[must_use]
    pub fn some_percent_of_wall(&self) -> Option<f64> {
        self.some_share_of_wall().map(|s| s * 100.0)
    }

    /// `full` stall in percent of wall time.
    #[must_use]
    pub fn full_percent_of_wall(&self) -> Option<f64> {
        self.full_share_of_wall().map(|s| s * 100.0)
    }

    /// `some` stall as a [`Duration`].
    #[must_use]
    pub fn some(&self) -> Option<Duration> {
        self.some_usec.map(Duration::from_micros)
    }

    /// `full` stall as a [`Duration`].
    #[must_use]
    pub fn full(&self) -> Option<Duration> {
        self.full_usec.map(Duration::from_micros)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stepmon_cgroupfs_parse::number::Hundredths;

    fn reading(some: Option<u64>, full: Option<u64>) -> Pressure {
        let line = |t| PressureLine::new(Hundredths(0), Hundredths(0), Hundredths(0), t);
        Pressure::new(some.map(line), full.map(line))
    }

    #[test]
    fn deltas_and_shares() {
        let d = StallDelta::between(
            &reading(Some(100), Some(0)),
            &reading(Some(500_100), Some(250_000)),
            Duration::from_secs(2),
        );
        assert_eq!((d.some_usec, d.full_usec, d.wall_usec), (Some(500_000), Some(250_000), 2_000_000));
        assert_eq!(d.some_share_of_wall(), Some(0.25));
        assert_eq!(d.full_percent_of_wall(), Some(12.5));
        assert_eq!(d.some(), Some(Duration::from_millis(500)));
    }

    #[test]
    fn missing_reset_and_zero_wall() {
        let reset = StallDelta::between(&reading(Some(900), None), &reading(Some(10), Some(5)), Duration::from_secs(1));
        assert_eq!((reset.some_usec, reset.full_usec), (None, None));
        let zero = StallDelta::between(&reading(Some(1), None), &reading(Some(2), None), Duration::ZERO);
        assert_eq!((zero.some_usec, zero.some_share_of_wall()), (Some(1), None));
    }
}
