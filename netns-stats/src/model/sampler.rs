//! Samples relative to the first reading, per interface.

use std::string::String;
use std::vec::Vec;

use stepmon_model::network::NetworkSample;

use super::sample::sample_of_delta;
use super::snapshot::{Snapshot, TotalsOptions};
use crate::parse::DevCounters;

/// One interface the sampler follows.
#[derive(Debug, Clone)]
struct Tracked {
    name: String,
    /// Counter values that are "before the step" (the first reading, or 0
    /// for an interface that appeared later or whose counter restarted).
    base: DevCounters,
    /// Values at the latest reading.
    last: DevCounters,
    seen: bool,
}

/// The result of one [`NetworkSampler::observe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct SampleOutcome {
    /// BuildKit-shaped sample since the first reading.
    pub sample: NetworkSample,
    /// All 16 counters since the first reading.
    pub delta: DevCounters,
    /// Interfaces counted in this reading.
    pub interfaces: usize,
    /// A counter of a still-present interface was lower than at the previous
    /// reading (device recreated under the same name, or driver reset).
    /// Traffic between the previous reading and the reset is lost.
    pub counters_went_backwards: bool,
    /// An interface present at the previous reading is gone. Its traffic up
    /// to the previous reading is kept; anything after it is lost.
    pub interfaces_vanished: bool,
}

/// Turns successive [`Snapshot`]s of one namespace into [`NetworkSample`]s
/// relative to the first snapshot, like BuildKit's offset subtraction but
/// robust to interface churn.
///
/// Each interface is followed separately: the first reading is its baseline;
/// an interface that appears later starts from 0 (all its traffic happened
/// during the step); if one of its counters goes **backwards** (the device
/// was recreated under the same name) the traffic counted so far is banked
/// and that counter restarts from 0; if it **vanishes**, its traffic up to
/// the last reading is banked. So samples never go negative and never
/// decrease, and the outcome flags when traffic may have been lost.
///
/// ```
/// use stepmon_netns_stats::{NetDev, NetworkSampler, Snapshot, TotalsOptions};
/// let read = |rx: u64, tx: u64| {
///     let text = format!("h\nh\n lo: 9 9 0 0 0 0 0 0 9 9 0 0 0 0 0 0\n eth0: {rx} 1 0 0 0 0 0 0 {tx} 1 0 0 0 0 0 0\n");
///     Snapshot::from_net_dev(&NetDev::parse(text.as_bytes()).unwrap())
/// };
/// let mut sampler = NetworkSampler::new(TotalsOptions::default());
/// assert_eq!(sampler.observe(&read(1000, 500)).sample.rx_bytes, 0);
/// let out = sampler.observe(&read(1_049_576, 600));
/// assert_eq!((out.sample.rx_bytes, out.sample.tx_bytes), (1_048_576, 100));
/// // eth0 recreated: its counters restart; the 1 MiB is kept.
/// let out = sampler.observe(&read(10, 0));
/// assert!(out.counters_went_backwards);
/// assert_eq!(out.sample.rx_bytes, 1_048_586);
/// ```
#[derive(Debug, Clone, Default)]
pub struct NetworkSampler {
    options: TotalsOptions,
    started: bool,
    tracked: Vec<Tracked>,
    /// Traffic of counters that restarted or interfaces that vanished.
    banked: DevCounters,
    discontinuity: bool,
}

impl NetworkSampler {
    /// A sampler counting the interfaces selected by `options`.
    #[must_use]
    pub fn new(options: TotalsOptions) -> Self {
        NetworkSampler { options, ..Default::default() }
    }

    /// Whether a first reading (the baseline) was observed.
    #[must_use]
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// Whether any observation so far flagged possible lost traffic.
    #[must_use]
    pub fn had_discontinuity(&self) -> bool {
        self.discontinuity
    }

    /// Feeds one reading; the first one becomes the baseline (sample 0).
    pub fn observe(&mut self, snapshot: &Snapshot) -> SampleOutcome {
        let first = !self.started;
        self.started = true;
        let mut out = SampleOutcome::default();
        for t in &mut self.tracked {
            t.seen = false;
        }
        for iface in snapshot.selected(self.options) {
            let now = iface.counters;
            match self.tracked.iter_mut().find(|t| t.name == iface.name && !t.seen) {
                Some(t) => {
                    t.seen = true;
                    if now.any_below(&t.last) {
                        out.counters_went_backwards = true;
                        let (mut base, last, cur) = (t.base.to_array(), t.last.to_array(), now.to_array());
                        let mut banked = self.banked.to_array();
                        for (((b, bank), l), c) in base.iter_mut().zip(banked.iter_mut()).zip(last).zip(cur) {
                            if c < l {
                                *bank = bank.saturating_add(l.saturating_sub(*b));
                                *b = 0;
                            }
                        }
                        t.base = DevCounters::from_array(base);
                        self.banked = DevCounters::from_array(banked);
                    }
                    t.last = now;
                }
                None => self.tracked.push(Tracked {
                    name: iface.name.clone(),
                    base: if first { now } else { DevCounters::default() },
                    last: now,
                    seen: true,
                }),
            }
        }
        let banked = &mut self.banked;
        self.tracked.retain(|t| {
            if !t.seen {
                out.interfaces_vanished = true;
                *banked = banked.zip_with(&t.last.zip_with(&t.base, u64::saturating_sub), u64::saturating_add);
            }
            t.seen
        });
        let mut delta = self.banked;
        for t in &self.tracked {
            delta = delta.zip_with(&t.last.zip_with(&t.base, u64::saturating_sub), u64::saturating_add);
        }
        self.discontinuity |= out.counters_went_backwards || out.interfaces_vanished;
        out.delta = delta;
        out.interfaces = self.tracked.len();
        out.sample = sample_of_delta(&delta);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::InterfaceCounters;

    fn snap(ifaces: &[(&str, u64, u64)]) -> Snapshot {
        Snapshot {
            interfaces: ifaces
                .iter()
                .map(|&(name, rx, tx)| InterfaceCounters {
                    name: name.into(),
                    counters: DevCounters { rx_bytes: rx, tx_bytes: tx, ..Default::default() },
                })
                .collect(),
        }
    }

    #[test]
    fn baseline_new_vanished_and_loopback() {
        let mut s = NetworkSampler::new(TotalsOptions::default());
        let o = s.observe(&snap(&[("lo", 100, 100), ("eth0", 50, 60)]));
        assert_eq!((o.delta.rx_bytes, o.delta.tx_bytes, o.interfaces), (0, 0, 1));
        // lo grows a lot (excluded), eth0 +10/+20, a new veth appears with 5/5.
        let o = s.observe(&snap(&[("lo", 9000, 9000), ("eth0", 60, 80), ("veth1", 5, 5)]));
        assert_eq!((o.delta.rx_bytes, o.delta.tx_bytes, o.interfaces), (15, 25, 2));
        assert!(!o.interfaces_vanished && !s.had_discontinuity());
        // veth1 vanishes: its 5/5 stay counted.
        let o = s.observe(&snap(&[("lo", 9000, 9000), ("eth0", 61, 80)]));
        assert_eq!((o.delta.rx_bytes, o.delta.tx_bytes), (16, 25));
        assert!(o.interfaces_vanished && s.had_discontinuity());
        // With loopback.
        let mut s = NetworkSampler::new(TotalsOptions { include_loopback: true });
        s.observe(&snap(&[("lo", 100, 100)]));
        assert_eq!(s.observe(&snap(&[("lo", 150, 100)])).sample.rx_bytes, 50);
    }

    #[test]
    fn backwards_counter_is_banked_per_column() {
        let mut s = NetworkSampler::new(TotalsOptions::default());
        s.observe(&snap(&[("eth0", 100, 100)]));
        s.observe(&snap(&[("eth0", 300, 150)]));
        // rx restarted (300 -> 40) while tx went on (150 -> 170).
        let o = s.observe(&snap(&[("eth0", 40, 170)]));
        assert!(o.counters_went_backwards);
        assert_eq!((o.delta.rx_bytes, o.delta.tx_bytes), (200 + 40, 70));
        let o = s.observe(&snap(&[("eth0", 50, 170)]));
        assert!(!o.counters_went_backwards);
        assert_eq!((o.delta.rx_bytes, o.delta.tx_bytes), (250, 70));
    }

    #[test]
    fn empty_first_reading_counts_everything_later() {
        let mut s = NetworkSampler::new(TotalsOptions::default());
        assert!(!s.is_started());
        s.observe(&Snapshot::default());
        assert!(s.is_started());
        assert_eq!(s.observe(&snap(&[("eth0", 7, 8)])).sample.tx_bytes, 8);
    }
}
