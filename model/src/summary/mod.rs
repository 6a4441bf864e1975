//! The numbers a person reads first, computed from a recorded
//! [`StepUsage`]: totals over the step, peaks, stall time and share of wall
//! time, and how busy the machine was ([`UsageSummary`]). Every value is
//! `None` when the samples do not hold what it needs (the samples'
//! `missing` lists say why).

use crate::sample::{
    CpuSummary, IoSummary, MachineSummary, MemoryEventsJson, MemorySummary, StallSummary, StepSample, StepUsage,
    UsageSummary,
};
use crate::system::PressureJson;

mod compose;
pub use compose::{summary, summary_of};

/// Nanoseconds to seconds.
#[allow(clippy::cast_precision_loss)] // ns counts far below 2^53 (104 days)
fn secs(nanos: u64) -> f64 {
    nanos as f64 / 1e9
}

#[allow(clippy::cast_precision_loss)]
fn ratio(part: u64, whole: f64) -> Option<f64> {
    (whole > 0.0).then(|| part as f64 / whole)
}

/// The share of `wall` seconds that `stalled_us` µs of PSI "some" time is,
/// at most 1: "some" is the time at least one task was stalled, never more
/// than the time that passed (<https://docs.kernel.org/accounting/psi.html>).
/// Measured, it can read a few percent over on a short step: the sample's
/// time is taken once, its pressure files read after it, and the kernel
/// counts each CPU's current stall up to each read.
fn share_of_wall(stalled_us: u64, wall: f64) -> Option<f64> {
    ratio(stalled_us, wall * 1e6).map(|share| share.min(1.0))
}

fn delta(first: Option<u64>, last: Option<u64>) -> Option<u64> {
    Some(last?.saturating_sub(first.unwrap_or(0)))
}

fn stall(
    first: Option<&StepSample>,
    last: Option<&StepSample>,
    pick: impl Fn(&StepSample) -> Option<PressureJson>,
    wall: f64,
) -> StallSummary {
    let total = |s: Option<&StepSample>, full: bool| {
        let p = pick(s?)?;
        if full { p.full?.total } else { p.some?.total }
    };
    let some = delta(total(first, false), total(last, false));
    let full = delta(total(first, true), total(last, true));
    StallSummary {
        some_seconds: some.map(|us| secs(us.saturating_mul(1000))),
        some_share: some.and_then(|us| share_of_wall(us, wall)),
        full_seconds: full.map(|us| secs(us.saturating_mul(1000))),
    }
}

/// The machine's stall (`/proc/pressure`, in `sysUsage`) over its samples
/// during the step: CPU, memory, IO — every task's, the step's among them.
/// The stall rung `machine` where no cgroup has pressure files.
pub(crate) fn machine_stalls(usage: &StepUsage) -> [StallSummary; 3] {
    let (Some(first), Some(last)) = (usage.sys_usage.first(), usage.sys_usage.last()) else {
        return Default::default();
    };
    let wall = last.timestamp.duration_since(first.timestamp).as_secs_f64();
    let one = |pick: fn(&crate::system::SysSample) -> Option<PressureJson>| {
        let total = |full: bool| {
            let (a, b) = (pick(first)?, pick(last)?);
            let (a, b) = if full { (a.full?.total?, b.full?.total?) } else { (a.some?.total?, b.some?.total?) };
            Some(b.saturating_sub(a))
        };
        let (some, full) = (total(false), total(true));
        StallSummary {
            some_seconds: some.map(|us| secs(us.saturating_mul(1000))),
            some_share: some.and_then(|us| share_of_wall(us, wall)),
            full_seconds: full.map(|us| secs(us.saturating_mul(1000))),
        }
    };
    [one(|s| s.cpu_pressure), one(|s| s.memory_pressure), one(|s| s.io_pressure)]
}

/// Where a step's cumulative counters (CPU time, IO bytes, stall time,
/// memory events) start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Baseline {
    /// At the first sample: stepmon takes a baseline sample when the step
    /// starts, and its cgroup may predate the step (`stepmon sample`).
    #[default]
    FirstSample,
    /// At zero: the cgroup was created for the step, and the first sample
    /// was taken later — BuildKit's recordings, whose first periodic sample
    /// comes about 2 s into the step.
    Zero,
}

/// A cgroup's memory event counters: stepmon's `memory.events` reading, or
/// else BuildKit's counters in `memoryStat` (which has no `oom_group_kill`)
/// — only when `memory.stat` itself was read (a `memoryStat` holding just
/// `memory.pressure` says nothing of events) and no reason says
/// `memory.events` was absent (then those counters are not zeros).
fn memory_events(s: &StepSample) -> Option<MemoryEventsJson> {
    if let Some(events) = s.stepmon.memory_events {
        return Some(events);
    }
    let m = s.memory_stat.filter(|m| m.anon.is_some() || m.file.is_some())?;
    if s.stepmon.missing.iter().any(|missing| missing.file == "memory.events") {
        return None;
    }
    Some(MemoryEventsJson {
        low: Some(m.low_events),
        high: Some(m.high_events),
        max: Some(m.max_events),
        oom: Some(m.oom_events),
        oom_kill: Some(m.oom_kill_events),
        ..Default::default()
    })
}

/// Summarises `usage` of a step that ran for `wall_seconds` (`None`:
/// unknown), with the first sample as the baseline of every counter.
#[must_use]
pub fn of(usage: &StepUsage, wall_seconds: Option<f64>) -> UsageSummary {
    with_baseline(usage, wall_seconds, Baseline::FirstSample)
}

/// Summarises `usage` of a step that ran for `wall_seconds` (`None`:
/// unknown, and so are the shares of it), its counters starting at
/// `baseline`.
#[must_use]
pub fn with_baseline(usage: &StepUsage, wall_seconds: Option<f64>, baseline: Baseline) -> UsageSummary {
    // `ratio` of a whole of 0 is `None`: an unknown wall time gives no share.
    let wall = wall_seconds.unwrap_or(0.0);
    let samples = &usage.resource_usage.samples;
    let first = match baseline {
        Baseline::FirstSample => samples.first(),
        Baseline::Zero => None,
    };
    let last = samples.last();
    let cpu_of = |s: Option<&StepSample>| s.and_then(|s| s.cpu_stat);
    let (c0, c1) = (cpu_of(first), cpu_of(last));
    let usage_ns = delta(c0.and_then(|c| c.usage_nanos), c1.and_then(|c| c.usage_nanos));
    let cpu = CpuSummary {
        user_seconds: delta(c0.and_then(|c| c.user_nanos), c1.and_then(|c| c.user_nanos)).map(secs),
        system_seconds: delta(c0.and_then(|c| c.system_nanos), c1.and_then(|c| c.system_nanos)).map(secs),
        usage_seconds: usage_ns.map(secs),
        average_cores: usage_ns.and_then(|ns| ratio(ns, wall * 1e9)),
        throttled_seconds: delta(c0.and_then(|c| c.throttled_nanos), c1.and_then(|c| c.throttled_nanos)).map(secs),
        throttled_periods: c1.and_then(|c| c.nr_throttled),
    };
    let fullest = samples
        .iter()
        .filter_map(|s| s.memory_stat)
        .filter(|m| m.anon.is_some() || m.file.is_some())
        .max_by_key(|m| m.anon.unwrap_or(0).saturating_add(m.file.unwrap_or(0)));
    let events = |s: Option<&StepSample>| s.and_then(memory_events);
    let (e0, e1) = (events(first), events(last));
    let memory = MemorySummary {
        peak_bytes: samples.iter().filter_map(|s| s.memory_stat.and_then(|m| m.peak)).max(),
        anon_at_peak_bytes: fullest.and_then(|m| m.anon),
        file_at_peak_bytes: fullest.and_then(|m| m.file),
        oom_kills: delta(e0.and_then(|e| e.oom_kill), e1.and_then(|e| e.oom_kill)),
        oom_group_kills: delta(e0.and_then(|e| e.oom_group_kill), e1.and_then(|e| e.oom_group_kill)),
        max_hits: delta(e0.and_then(|e| e.max), e1.and_then(|e| e.max)),
        high_hits: delta(e0.and_then(|e| e.high), e1.and_then(|e| e.high)),
    };
    let io_of = |s: Option<&StepSample>| s.and_then(|s| s.io_stat);
    let (i0, i1) = (io_of(first), io_of(last));
    let io = IoSummary {
        read_bytes: delta(i0.and_then(|i| i.read_bytes), i1.and_then(|i| i.read_bytes)),
        write_bytes: delta(i0.and_then(|i| i.write_bytes), i1.and_then(|i| i.write_bytes)),
    };
    let pids_peak = samples
        .iter()
        .filter_map(|s| s.stepmon.pids_peak)
        .max()
        .or_else(|| samples.iter().filter_map(|s| s.pids_stat.current).max());
    let net = last.and_then(|s| s.net_stat);
    let machine = usage.resource_usage.sys_cpu_stat.map(|c| {
        let total = c.user + c.nice + c.system + c.idle + c.iowait + c.irq + c.softirq + c.steal;
        let busy = total - c.idle - c.iowait;
        let step = usage_ns.map(secs);
        MachineSummary {
            cpu_busy_share: (total > 0.0).then(|| busy / total),
            others_busy_share: step.filter(|_| total > 0.0).map(|s| ((busy - s) / total).max(0.0)),
            steal_share: (total > 0.0).then(|| c.steal / total),
        }
    });
    UsageSummary {
        wall_seconds,
        cpu,
        memory,
        io,
        pids_peak,
        cpu_stall: stall(first, last, |s| s.cpu_stat.and_then(|c| c.pressure), wall),
        memory_stall: stall(first, last, |s| s.memory_stat.and_then(|m| m.pressure), wall),
        io_stall: stall(first, last, |s| s.io_stat.and_then(|i| i.pressure), wall),
        net_rx_bytes: net.and_then(|n| u64::try_from(n.rx_bytes).ok()),
        net_tx_bytes: net.and_then(|n| u64::try_from(n.tx_bytes).ok()),
        machine: machine.unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::share_of_wall;

    #[test]
    fn a_stall_share_is_at_most_the_wall_time() {
        assert_eq!(share_of_wall(250_000, 1.0), Some(0.25));
        // 36.5 ms of "some" over a 34.8 ms span: the readings' timing.
        assert_eq!(share_of_wall(36_500, 0.0348), Some(1.0));
        assert_eq!(share_of_wall(1, 0.0), None);
    }
}
