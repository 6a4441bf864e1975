//! The sampling schedule as a pure state machine: no clock, no threads, no
//! I/O. Time is a monotonic [`Duration`] since an arbitrary origin, passed in
//! by the caller — which is what makes the schedule testable exactly (see the
//! tests below for BuildKit's published sample counts).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::policy::Policy;

/// Identifies one subscriber of a [`Schedule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SubId(u64);

/// A sample and the monotonic time it was taken at.
#[derive(Debug, Clone, PartialEq)]
pub struct Timed<S> {
    /// Monotonic time of the read (same origin as the schedule's clock).
    pub at: Duration,
    /// The sample.
    pub sample: S,
}

#[derive(Debug)]
struct Sub<S> {
    first: Duration,
    last: Option<Duration>,
    interval: Duration,
    samples: Vec<Timed<S>>,
}

/// Per-sampler schedule: one tick grid shared by all subscribers, per
/// subscriber intervals and back-off, thinning on close.
#[derive(Debug)]
pub struct Schedule<S> {
    policy: Policy,
    subs: BTreeMap<SubId, Sub<S>>,
    next_id: u64,
    last_tick: Option<Duration>,
}

impl<S: Clone> Schedule<S> {
    /// A schedule with no subscriber. The policy must be valid
    /// ([`Policy::validate`]); the [`crate::Sampler`] checks it.
    #[must_use]
    pub fn new(policy: Policy) -> Self {
        Schedule { policy, subs: BTreeMap::new(), next_id: 0, last_tick: None }
    }

    /// The policy.
    #[must_use]
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Number of subscribers.
    #[must_use]
    pub fn len(&self) -> usize {
        self.subs.len()
    }

    /// Whether there is no subscriber.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.subs.is_empty()
    }

    /// Adds a subscriber at `now`. With a `baseline` sample (the policy's
    /// `baseline`), that sample is its first and counts as its last read.
    pub fn subscribe(&mut self, now: Duration, baseline: Option<S>) -> SubId {
        let id = SubId(self.next_id);
        self.next_id = self.next_id.wrapping_add(1);
        let mut sub = Sub { first: now, last: None, interval: self.interval_at(now, now), samples: Vec::new() };
        if let Some(sample) = baseline {
            sub.samples.push(Timed { at: now, sample });
            sub.last = Some(now);
        }
        if self.subs.is_empty() && self.last_tick.is_none() {
            // The tick grid starts with the first subscriber (as BuildKit's
            // loop starts on the first Record).
            self.last_tick = Some(now);
        }
        self.subs.insert(id, sub);
        id
    }

    /// The interval a subscriber that started at `first` has at `now`, before back-off.
    fn interval_at(&self, first: Duration, now: Duration) -> Duration {
        match self.policy.fast_start {
            Some(fast) if now.saturating_sub(first) < fast.duration => fast.interval,
            _ => self.policy.min_interval,
        }
    }

    fn in_fast_phase(&self, sub: &Sub<S>, now: Duration) -> bool {
        self.policy.fast_start.is_some_and(|fast| now.saturating_sub(sub.first) < fast.duration)
    }

    /// When the next tick is due, or `None` with no subscriber. Ticks follow
    /// one grid: `min_interval` apart, or the fast-start interval while a
    /// subscriber is in its fast phase.
    #[must_use]
    pub fn next_tick(&self, now: Duration) -> Option<Duration> {
        if self.subs.is_empty() {
            return None;
        }
        let last = self.last_tick.unwrap_or(now);
        let fast = self.subs.values().any(|s| self.in_fast_phase(s, last));
        let period = match self.policy.fast_start {
            Some(f) if fast => f.interval,
            _ => self.policy.min_interval,
        };
        let mut next = last.saturating_add(period);
        if next < now {
            // Ticks were missed (idle, or a slow read): continue on the grid.
            let behind = now.saturating_sub(last).as_nanos() / period.as_nanos().max(1);
            let steps = u32::try_from(behind).unwrap_or(u32::MAX);
            next = last.saturating_add(period.saturating_mul(steps));
            if next < now {
                next = next.saturating_add(period);
            }
        }
        Some(next)
    }

    /// A tick at `now`: returns the subscribers due for a sample (empty: no
    /// read is needed). Marks them as read at `now`.
    pub fn on_tick(&mut self, now: Duration) -> Vec<SubId> {
        self.last_tick = Some(now);
        let policy = self.policy;
        let mut due = Vec::new();
        for (&id, sub) in &mut self.subs {
            let fast = policy.fast_start.filter(|f| now.saturating_sub(sub.first) < f.duration);
            if fast.is_none() && sub.interval < policy.min_interval {
                // Leaving the fast phase.
                sub.interval = policy.min_interval;
            }
            let interval = fast.map_or(sub.interval, |f| f.interval);
            if sub.last.is_none_or(|last| now.saturating_sub(last) >= interval) {
                sub.last = Some(now);
                due.push(id);
            }
        }
        due
    }

    /// Delivers the one sample read for a tick to every subscriber in `due`
    /// that is still subscribed, then applies the back-off rule.
    pub fn deliver(&mut self, due: &[SubId], at: Duration, sample: &S) {
        let policy = self.policy;
        for id in due {
            let Some(sub) = self.subs.get_mut(id) else { continue };
            sub.samples.push(Timed { at, sample: sample.clone() });
            let fast = policy.fast_start.is_some_and(|f| at.saturating_sub(sub.first) < f.duration);
            let last = sub.last.unwrap_or(at);
            if !fast && sub.interval.saturating_mul(policy.max_samples) <= last.saturating_sub(sub.first) {
                sub.interval = sub.interval.saturating_mul(2);
            }
        }
    }

    /// Whether any of `ids` is still subscribed.
    #[must_use]
    pub fn any_subscribed(&self, ids: &[SubId]) -> bool {
        ids.iter().any(|id| self.subs.contains_key(id))
    }

    /// The samples a subscriber has collected so far, not thinned.
    #[must_use]
    pub fn samples(&self, id: SubId) -> Option<&[Timed<S>]> {
        self.subs.get(&id).map(|s| s.samples.as_slice())
    }

    /// Removes a subscriber and returns its samples thinned to its final
    /// interval: the first is kept, then each one at least one interval
    /// after the previously kept one (BuildKit's rule). `None` if `id` was
    /// already closed.
    ///
    /// Beyond BuildKit, with a fast start: the fast phase's samples are not
    /// held to the final interval (which would drop them all and leave a
    /// 3 s step with its first and final sample only). They fill what the
    /// thinned list leaves of `max_samples`, evenly spread when not all fit,
    /// so a short step keeps its shape and the list stays bounded.
    pub fn close(&mut self, id: SubId) -> Option<Vec<Timed<S>>> {
        let sub = self.subs.remove(&id)?;
        let fast_until = self.policy.fast_start.map(|fast| sub.first.saturating_add(fast.duration));
        let mut kept: Vec<Timed<S>> = Vec::with_capacity(sub.samples.len());
        let mut fast: Vec<Timed<S>> = Vec::new();
        let mut current = sub.first;
        for (i, timed) in sub.samples.into_iter().enumerate() {
            if i == 0 || timed.at.saturating_sub(current) >= sub.interval {
                current = timed.at;
                kept.push(timed);
            } else if fast_until.is_some_and(|until| timed.at < until) {
                fast.push(timed);
            }
        }
        // The first sample does not count, as in BuildKit's numbers.
        let max = usize::try_from(self.policy.max_samples).unwrap_or(usize::MAX);
        let take = max.saturating_sub(kept.len().saturating_sub(1)).min(fast.len());
        if take > 0 {
            // `take` of the fast samples, evenly: the first of each of `take`
            // equal runs (all of them when they fit).
            let n = fast.len();
            let bucket = |i: usize| i.saturating_mul(take) / n;
            let picked = fast.into_iter().enumerate().filter(|(i, _)| *i == 0 || bucket(*i) != bucket(i - 1));
            kept.extend(picked.map(|(_, timed)| timed));
            kept.sort_by_key(|timed| timed.at);
        }
        Some(kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::FastStart;

    /// Runs one subscriber for a step of `len` (from t = 0) the way the
    /// sampler does: ticks strictly before the end, then close plus one final
    /// sample. Returns (raw periodic samples, times of the kept ones incl. the
    /// final sample).
    fn run(policy: Policy, len: Duration) -> (usize, Vec<Duration>) {
        let mut schedule = Schedule::new(policy);
        let baseline = policy.baseline.then_some(());
        let id = schedule.subscribe(Duration::ZERO, baseline);
        let mut now = Duration::ZERO;
        while let Some(tick) = schedule.next_tick(now) {
            if tick >= len {
                break;
            }
            now = tick;
            let due = schedule.on_tick(now);
            schedule.deliver(&due, now, &());
        }
        let raw = schedule.samples(id).unwrap().len() - usize::from(policy.baseline);
        let mut kept: Vec<Duration> = schedule.close(id).unwrap().into_iter().map(|t| t.at).collect();
        kept.push(len);
        (raw, kept)
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn buildkit_published_step_counts() {
        // BuildKit's algorithm (executor/resources/sampler.go; docs/data-model.md,
        // "When samples are taken"): 1 s → 1 (final only), 10 s → 5, 21 s → 6,
        // 60 s → 8, 300 s → 10, 1 h → 8; raw 17 for 60 s, 29 for 300 s, 47 for 1 h.
        let p = Policy::buildkit_step();
        for (len, total) in [(1, 1), (10, 5), (21, 6), (60, 8), (300, 10), (3600, 8)] {
            assert_eq!(run(p, secs(len)).1.len(), total, "{len} s step");
        }
        assert_eq!(run(p, secs(60)).0, 17);
        assert_eq!(run(p, secs(300)).0, 29);
        assert_eq!(run(p, secs(3600)).0, 47);
        // The kept samples of a 21 s step, exactly.
        assert_eq!(run(p, secs(21)).1, [2, 6, 10, 14, 18, 21].map(secs));
        assert_eq!(run(p, secs(60)).1, [2, 10, 18, 28, 36, 48, 56, 60].map(secs));
    }

    #[test]
    fn kept_samples_stay_bounded_for_long_steps() {
        // Miri interprets every tick; keep its run short.
        let lens: &[u64] = if cfg!(miri) { &[100, 1000] } else { &[100, 1000, 10_000, 100_000] };
        for &len in lens {
            let (_, kept) = run(Policy::buildkit_step(), secs(len));
            assert!(kept.len() <= 11, "{len} s: {}", kept.len());
            let (_, kept) = run(Policy::buildkit_system(), secs(len));
            assert!(kept.len() <= 21, "{len} s: {}", kept.len());
        }
    }

    #[test]
    fn fast_start_gives_short_steps_data() {
        let p = Policy::step();
        let ms = Duration::from_millis;
        // Baseline at 0, 250 ms ticks, final at the end.
        assert_eq!(run(p, ms(1000)).1, [0, 250, 500, 750, 1000].map(ms));
        assert_eq!(run(p, ms(300)).1, [0, 250, 300].map(ms));
        assert_eq!(run(p, ms(100)).1, [0, 100].map(ms));
        // After the fast phase the BuildKit rules apply (the next read is one
        // 2 s interval after the last fast one); thinning to the final
        // interval does not drop the fast samples while they fit.
        let fast: Vec<Duration> = (0..8).map(|i| ms(250 * i)).collect();
        let three = [fast.as_slice(), &[secs(3)]].concat();
        assert_eq!(run(p, secs(3)).1, three, "a 3 s step keeps its fast samples");
        let ten = [fast.as_slice(), &[4, 6, 8, 10].map(secs)].concat();
        assert_eq!(run(p, secs(10)).1, ten);
        // Longer steps: the thinned samples come first, the fast ones fill
        // what is left of max_samples, evenly.
        let (_, kept) = run(p, secs(30));
        let kept_fast: Vec<Duration> = kept.iter().copied().filter(|t| *t < secs(2)).collect();
        assert_eq!(kept.len(), 12, "first + 10 + final: {kept:?}");
        assert!(kept_fast.len() >= 2 && kept_fast.len() < 8, "some fast samples, spread: {kept_fast:?}");
        assert!(kept_fast.windows(2).all(|w| w[1] - w[0] >= ms(250)), "{kept_fast:?}");
        for len in [60, 300, 3600] {
            let (_, kept) = run(p, secs(len));
            assert!(kept.len() <= 12, "{len} s: {kept:?}");
            assert!(kept.windows(2).all(|w| w[0] < w[1]), "{len} s: in time order: {kept:?}");
        }
    }

    #[test]
    fn shared_tick_serves_every_due_subscriber_once() {
        let mut s = Schedule::new(Policy::buildkit_system());
        let a = s.subscribe(secs(0), None);
        let t = s.next_tick(secs(0)).unwrap();
        assert_eq!(t, secs(2));
        let b = s.subscribe(Duration::from_millis(1500), None);
        let due = s.on_tick(t);
        assert_eq!(due, [a, b], "one read serves both");
        s.deliver(&due, t, &7u8);
        assert_eq!(s.samples(a).unwrap().len(), 1);
        assert_eq!(s.samples(b).unwrap()[0].sample, 7);
        s.close(a).unwrap();
        // A closed subscriber is skipped even if it was due.
        s.deliver(&[a, b], secs(4), &8u8);
        assert_eq!(s.samples(b).unwrap().len(), 2);
        assert!(s.close(a).is_none());
    }

    #[test]
    fn grid_continues_after_idle_and_slow_reads() {
        let mut s = Schedule::<()>::new(Policy::buildkit_step());
        assert_eq!(s.next_tick(secs(5)), None);
        s.subscribe(secs(0), None);
        s.on_tick(secs(2));
        // A read that took until 7.5 s: the next tick is the next grid point.
        assert_eq!(s.next_tick(Duration::from_millis(7500)), Some(secs(8)));
        assert_eq!(s.next_tick(secs(3)), Some(secs(4)));
    }

    #[test]
    fn policy_validation() {
        assert!(Policy::step().validate().is_ok());
        let mut p = Policy::buildkit_step();
        p.max_samples = 0;
        assert!(p.validate().is_err());
        p = Policy::buildkit_step();
        p.fast_start = Some(FastStart { interval: secs(3), duration: secs(1) });
        assert!(p.validate().is_err());
    }
}
