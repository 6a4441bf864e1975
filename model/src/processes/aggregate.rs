//! Aggregates per command name: what a `make -j8` step's 312 `cc1plus`
//! runs used together, and which one peaked.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::record::{Delays, Lifetime, ProcessRecord};

/// The processes of one command name.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CommandAggregate {
    /// The command name (`ac_comm`).
    pub command: String,
    /// Processes.
    pub count: u64,
    /// Their CPU, s.
    pub cpu_seconds: f64,
    /// Their lifetimes summed, s (0 in documents of older versions).
    #[serde(skip_serializing_if = "is_zero_f64")]
    pub elapsed_seconds: f64,
    /// The largest peak RSS among them, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_peak_rss_bytes: Option<u64>,
    /// The pid that had it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_peak_rss_pid: Option<u32>,
    /// That process's arguments ([`ProcessRecord::args`]): which of the
    /// command's runs it was. Empty when they were not read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub max_peak_rss_args: Vec<String>,
    /// The median of their peak RSS, bytes (nearest rank; absent when no
    /// peak was recorded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p50_peak_rss_bytes: Option<u64>,
    /// The 95th percentile of their peak RSS, bytes (nearest rank).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p95_peak_rss_bytes: Option<u64>,
    /// The most of them alive at once, from their lifetimes
    /// ([`ProcessRecord::interval`]; 0 in documents of older versions).
    #[serde(skip_serializing_if = "is_zero")]
    pub max_concurrent: u64,
    /// How those lifetimes are known: the coarsest of theirs (absent in
    /// documents of older versions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifetimes: Option<Lifetime>,
    /// Bytes read from storage.
    pub read_bytes: u64,
    /// Bytes written to storage.
    pub write_bytes: u64,
    /// Their delays summed (absent where not counted).
    pub delays: Delays,
}

impl CommandAggregate {
    /// The label of the process with the largest peak RSS (see [`super::label`]).
    #[must_use]
    pub fn max_peak_rss_label(&self) -> Option<&str> {
        super::label(&self.max_peak_rss_args)
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if signature
fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if signature
fn is_zero_f64(n: &f64) -> bool {
    *n == 0.0
}

/// The nearest-rank `q` quantile of sorted `values`.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
fn quantile(sorted: &[u64], q: f64) -> Option<u64> {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len().max(1)) - 1).copied()
}

/// The most intervals `[start, end)` that hold one instant: a process that
/// ends the instant another starts did not run beside it. A process of no
/// length counts as one of a microsecond, so that it counts at all.
fn most_at_once(intervals: &[(f64, f64)]) -> u64 {
    let mut events: Vec<(f64, i8)> = Vec::with_capacity(intervals.len() * 2);
    for &(start, end) in intervals {
        events.push((start, 1));
        events.push((end.max(start + 1e-6), -1));
    }
    // Ends before starts at the same instant.
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut most) = (0i64, 0i64);
    for (_, step) in events {
        now += i64::from(step);
        most = most.max(now);
    }
    most.unsigned_abs()
}

/// The coarser of two ways lifetimes are known.
fn coarser(a: Lifetime, b: Lifetime) -> Lifetime {
    let rank = |l: Lifetime| match l {
        Lifetime::ForkEvent => 0,
        Lifetime::ProcStat => 1,
        Lifetime::WholeSeconds => 2,
    };
    if rank(b) > rank(a) { b } else { a }
}

/// One command's lifetimes `[start, end)` and peaks.
type Spans = (Vec<(f64, f64)>, Vec<u64>);

/// One aggregate per command, most CPU first (then by name).
pub(super) fn by_command<'a>(processes: impl IntoIterator<Item = &'a ProcessRecord>) -> Vec<CommandAggregate> {
    let mut by: BTreeMap<&str, CommandAggregate> = BTreeMap::new();
    // Per command: lifetimes and peaks, for the concurrency and quantiles.
    let mut spans: BTreeMap<&str, Spans> = BTreeMap::new();
    for p in processes {
        let (start, end, lifetime) = p.interval();
        let (intervals, peaks) = spans.entry(p.command.as_str()).or_default();
        intervals.push((start, end));
        peaks.extend(p.peak_rss_bytes);
        let a = by.entry(p.command.as_str()).or_insert_with(|| CommandAggregate {
            command: p.command.clone(),
            delays: p.delays,
            ..CommandAggregate::default()
        });
        if a.count > 0 {
            a.delays.add(&p.delays);
        }
        a.count += 1;
        a.lifetimes = Some(a.lifetimes.map_or(lifetime, |l| coarser(l, lifetime)));
        a.cpu_seconds += p.cpu_seconds;
        a.elapsed_seconds += (end - start).max(0.0);
        if p.peak_rss_bytes > a.max_peak_rss_bytes {
            a.max_peak_rss_bytes = p.peak_rss_bytes;
            a.max_peak_rss_pid = Some(p.pid);
            a.max_peak_rss_args.clone_from(&p.args);
        }
        a.read_bytes = a.read_bytes.saturating_add(p.read_bytes.unwrap_or(0));
        a.write_bytes = a.write_bytes.saturating_add(p.write_bytes.unwrap_or(0));
    }
    for (command, (intervals, mut peaks)) in spans {
        if let Some(a) = by.get_mut(command) {
            peaks.sort_unstable();
            a.p50_peak_rss_bytes = quantile(&peaks, 0.50);
            a.p95_peak_rss_bytes = quantile(&peaks, 0.95);
            a.max_concurrent = most_at_once(&intervals);
        }
    }
    let mut out: Vec<CommandAggregate> = by.into_values().collect();
    out.sort_by(|a, b| b.cpu_seconds.total_cmp(&a.cpu_seconds).then_with(|| a.command.cmp(&b.command)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_nearest_rank() {
        let v: Vec<u64> = (1..=20).collect();
        assert_eq!((quantile(&v, 0.5), quantile(&v, 0.95)), (Some(10), Some(19)));
        assert_eq!(quantile(&[7], 0.95), Some(7));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn overlapping_lifetimes_counted_at_the_busiest_instant() {
        // Three at once at 1.5; one ending at 2.0 as another starts is not overlap.
        let spans = [(0.0, 2.0), (1.0, 3.0), (1.5, 1.6), (2.0, 4.0), (3.0, 3.0)];
        assert_eq!(most_at_once(&spans), 3);
        assert_eq!(most_at_once(&[(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]), 1, "one after another");
        assert_eq!(most_at_once(&[]), 0);
        assert_eq!(most_at_once(&[(5.0, 5.0), (5.0, 5.0)]), 2, "two of no length at one instant");
    }

    #[test]
    fn a_command_s_concurrency_peaks_and_coarsest_lifetime() {
        let p = |pid: u32, start: f64, end: f64, peak: u64, lifetime: Lifetime| {
            let mut r = ProcessRecord::default();
            (r.command, r.pid, r.peak_rss_bytes) = ("cc1".to_owned(), pid, Some(peak << 20));
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let at = |s: f64| jiff::Timestamp::from_nanosecond((s * 1e9) as i128).unwrap();
            (r.start, r.end, r.lifetime) = (Some(at(start)), Some(at(end)), Some(lifetime));
            (r.start_unix_seconds, r.elapsed_seconds) = (start.floor() as u64, end - start);
            r
        };
        let records = [
            p(1, 100.00, 100.40, 100, Lifetime::ForkEvent),
            p(2, 100.10, 100.45, 120, Lifetime::ForkEvent),
            p(3, 100.42, 100.90, 110, Lifetime::ForkEvent),
            p(4, 100.95, 101.20, 90, Lifetime::ForkEvent),
        ];
        let a = &by_command(&records)[0];
        // In whole seconds all four would overlap: the sub-second ends tell.
        assert_eq!((a.count, a.max_concurrent, a.lifetimes), (4, 2, Some(Lifetime::ForkEvent)));
        assert_eq!((a.p50_peak_rss_bytes, a.p95_peak_rss_bytes), (Some(100 << 20), Some(120 << 20)));
        let mut coarse = records.clone();
        coarse[2].lifetime = Some(Lifetime::WholeSeconds);
        let a = &by_command(&coarse)[0];
        assert_eq!(a.lifetimes, Some(Lifetime::WholeSeconds), "the coarsest of theirs");
        assert_eq!(a.max_concurrent, 3, "100.42..100.90 taken as 100..100.48 from its whole-second start");
    }
}
