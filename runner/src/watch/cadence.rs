//! When the memory watch checks next, and when a check makes an event:
//! pure arithmetic, tested by simulating steps that grow.
//!
//! The next check comes after half the time the usage needs to reach the
//! threshold at its present rate, between [`CLOSEST`] and [`FARTHEST`]:
//! about one check a second while the step is far from the threshold or
//! not growing, a halving series as it nears it. A step growing 20 MiB/s
//! under a 200 MiB limit (90% at 9 s, the kill at 10 s) is checked 17
//! times in its 10 s and warned 0.99 s before its kill (the test below);
//! sampled every 2 s it would not be warned at all.

use std::time::Duration;

/// The first check, after the start: a step that ends sooner is not
/// watched (nor read at all).
pub(super) const FIRST: Duration = Duration::from_millis(100);
/// The longest wait between checks: a step that starts growing fast after
/// a flat phase is seen within this.
pub(super) const FARTHEST: Duration = Duration::from_secs(1);
/// The shortest: how late the crossing can be seen once it is near.
pub(super) const CLOSEST: Duration = Duration::from_millis(20);
/// Until a rate is known (one reading only).
const UNKNOWN_RATE: Duration = Duration::from_millis(250);

/// Whether a crossing is armed: one event per crossing of the threshold,
/// armed again once the share falls below the re-arm share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Arming {
    threshold: f64,
    rearm: f64,
    armed: bool,
}

impl Arming {
    /// Armed, at `threshold`, re-armed below `rearm`.
    pub(super) fn new(threshold: f64, rearm: f64) -> Arming {
        Arming { threshold, rearm: rearm.min(threshold), armed: true }
    }

    /// A check saw `share`: whether it makes an event.
    pub(super) fn check(&mut self, share: f64) -> bool {
        if self.armed && share >= self.threshold {
            self.armed = false;
            return true;
        }
        if !self.armed && share < self.rearm {
            self.armed = true;
        }
        false
    }
}

/// How long until the next check of a step using `usage` of `bound` bytes,
/// growing `rate` bytes a second (`None`: not known yet), for an event at
/// `threshold` × `bound`.
#[allow(clippy::cast_precision_loss)] // byte counts far below 2^52
pub(super) fn next_check(usage: u64, bound: u64, threshold: f64, rate: Option<f64>) -> Duration {
    let headroom = threshold * bound as f64 - usage as f64;
    let Some(rate) = rate else { return UNKNOWN_RATE };
    if headroom <= 0.0 || rate <= 0.0 || !rate.is_finite() {
        // Past it (re-arming needs no hurry) or not growing.
        return FARTHEST;
    }
    let half = headroom / rate / 2.0;
    Duration::try_from_secs_f64(half).unwrap_or(FARTHEST).clamp(CLOSEST, FARTHEST)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = 1024.0 * 1024.0;

    /// Checks of a step whose usage is `usage(t)` under `bound` bytes, the
    /// rate from the last two checks as the watch computes it, until
    /// `until` s: the times of its checks and of its first event.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    fn simulate(bound: f64, until: f64, usage: impl Fn(f64) -> f64) -> (Vec<f64>, Option<f64>) {
        let mut arming = Arming::new(0.9, 0.8);
        let (mut t, mut checks, mut event) = (FIRST.as_secs_f64(), Vec::new(), None);
        let mut last: Option<(f64, f64)> = None;
        while t < until {
            let now = usage(t);
            checks.push(t);
            if arming.check(now / bound) && event.is_none() {
                event = Some(t);
            }
            let rate = last.map(|(t0, u0)| (now - u0) / (t - t0));
            last = Some((t, now));
            t += next_check(now as u64, bound as u64, 0.9, rate).as_secs_f64();
        }
        (checks, event)
    }

    #[test]
    fn a_step_growing_20_mib_a_second_under_200_mib_is_warned_a_second_before_its_kill() {
        let (checks, event) = simulate(200.0 * MIB, 10.0, |t| 20.0 * MIB * t);
        let event = event.expect("warned before the kill at 10 s");
        let before_kill = 10.0 - event;
        assert!(before_kill >= 1.0 - CLOSEST.as_secs_f64(), "warned {before_kill:.3} s before the kill");
        assert!(checks.len() <= 20, "{} checks in 10 s: {checks:?}", checks.len());
        // The recorder's schedule after its fast start: every 2 s until
        // 20 s. Its samples see 160 MiB (80%) at 8 s; the next is after the kill.
        let sampled: Vec<f64> = (1..=5).map(|i| f64::from(i) * 2.0).filter(|t| *t < 10.0).collect();
        assert!(sampled.iter().all(|t| 20.0 * t < 180.0), "no 2 s sample sees 90%");
    }

    #[test]
    fn a_flat_step_is_checked_about_once_a_second() {
        let (checks, event) = simulate(200.0 * MIB, 60.0, |_| 50.0 * MIB);
        assert_eq!(event, None);
        assert!((55..=62).contains(&checks.len()), "{} checks in 60 s", checks.len());
    }

    #[test]
    fn one_event_per_crossing_rearmed_below_the_lower_share() {
        let mut arming = Arming::new(0.9, 0.8);
        let seen: Vec<bool> = [0.5, 0.91, 0.95, 0.89, 0.92, 0.7, 0.93].iter().map(|s| arming.check(*s)).collect();
        assert_eq!(seen, [false, true, false, false, false, false, true]);
    }

    #[test]
    fn the_interval_halves_towards_the_threshold_within_its_bounds() {
        let bound = 100 << 20;
        assert_eq!(next_check(0, bound, 0.9, None), UNKNOWN_RATE);
        assert_eq!(next_check(50 << 20, bound, 0.9, Some(0.0)), FARTHEST);
        assert_eq!(next_check(95 << 20, bound, 0.9, Some(1e9)), FARTHEST, "past the threshold");
        // 40 MiB of headroom at 80 MiB/s: 0.5 s to go, checked after 0.25 s.
        assert_eq!(next_check(50 << 20, bound, 0.9, Some(80.0 * MIB)), Duration::from_millis(250));
        assert_eq!(next_check(89 << 20, bound, 0.9, Some(1e12)), CLOSEST);
        assert_eq!(next_check(0, bound, 0.9, Some(f64::INFINITY)), FARTHEST);
    }
}
