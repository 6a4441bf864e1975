//! A running step's numbers now, from samples already taken: what `stepmon
//! run --progress` prints every interval and `stepmon top` shows per step.
//! Pure arithmetic on [`StepSample`]s: cumulative counters (CPU time, IO
//! bytes, PSI stall totals) differenced between two samples and divided by
//! the time between them; gauges (memory, tasks) as the later one read them.
//! The busiest command ([`BusiestCommand`]) comes from the step's
//! processes, which the runner follows beside the samples.
//!
//! ```
//! use stepmon_model::progress::Rates;
//! use stepmon_model::StepSample;
//!
//! let at = |t: &str, cpu_ns: u64| -> StepSample {
//!     serde_json::from_str(&format!(
//!         r#"{{"timestamp": "{t}", "cpuStat": {{"usageNanos": {cpu_ns}}}, "pidsStat": {{"current": 3}}}}"#
//!     ))
//!     .unwrap()
//! };
//! let (a, b) = (at("2026-12-04T10:00:00Z", 0), at("2026-12-04T10:00:02Z", 3_000_000_000));
//! let rates = Rates::between(&a, &b).unwrap();
//! assert_eq!(rates.seconds, 2.0);
//! assert_eq!(rates.cpu_cores, Some(1.5));
//! assert_eq!(rates.read_bytes_per_second, None, "absent, not zero: no ioStat was read");
//! assert!(Rates::between(&b, &a).is_none(), "not in time order");
//! ```

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::job::SampleOf;
use crate::sample::StepSample;
use crate::system::PressureJson;

/// What a step did between two of its samples.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Rates {
    /// Seconds between the two samples.
    pub seconds: f64,
    /// CPU time over wall time: cores busy on average.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_cores: Option<f64>,
    /// Bytes read a second (`io.stat` `rbytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes_per_second: Option<f64>,
    /// Bytes written a second (`io.stat` `wbytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes_per_second: Option<f64>,
    /// How fast its memory grew, bytes a second (negative: it shrank).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes_per_second: Option<f64>,
    /// Share of the time some task of it was stalled, per resource (PSI
    /// `some`, <https://docs.kernel.org/accounting/psi.html>).
    #[serde(default)]
    pub stall: Stall,
}

/// PSI `some` stall as a share of wall time, per resource (absent where the
/// samples have no pressure readings).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Stall {
    /// Waiting for a CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<f64>,
    /// Waiting for memory (reclaim, swap-in, refaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<f64>,
    /// Waiting for IO.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<f64>,
}

/// Nanoseconds between two timestamps, `None` unless `later` is later.
fn seconds_between(earlier: Timestamp, later: Timestamp) -> Option<f64> {
    let seconds = later.duration_since(earlier).as_secs_f64();
    (seconds > 0.0).then_some(seconds)
}

/// `(later − earlier) / seconds` of a counter both samples read; a counter
/// that went backwards (a reset) gives nothing.
#[allow(clippy::cast_precision_loss)] // counters far below 2^52 in any step
fn rate(earlier: Option<u64>, later: Option<u64>, seconds: f64) -> Option<f64> {
    let delta = later?.checked_sub(earlier?)?;
    Some(delta as f64 / seconds)
}

/// A gauge's change a second (signed).
#[allow(clippy::cast_precision_loss)]
fn trend(earlier: Option<u64>, later: Option<u64>, seconds: f64) -> Option<f64> {
    Some((later? as f64 - earlier? as f64) / seconds)
}

fn some_total(pressure: Option<PressureJson>) -> Option<u64> {
    pressure?.some?.total
}

/// The memory a sample read: `memory.current` (v1: `memory.usage_in_bytes`).
#[must_use]
pub fn memory_bytes(sample: &StepSample) -> Option<u64> {
    sample.stepmon.memory_current
}

impl Rates {
    /// The rates between `earlier` and `later`; `None` unless `later` was
    /// taken after `earlier`. A number either sample lacks is absent.
    #[must_use]
    pub fn between(earlier: &StepSample, later: &StepSample) -> Option<Rates> {
        let seconds = seconds_between(earlier.timestamp, later.timestamp)?;
        let cpu = |s: &StepSample| s.cpu_stat.and_then(|c| c.usage_nanos);
        let io =
            |s: &StepSample, write: bool| s.io_stat.and_then(|io| if write { io.write_bytes } else { io.read_bytes });
        // PSI totals are µs of stall: a share is µs / (s × 10⁶).
        let stall = |pick: fn(&StepSample) -> Option<PressureJson>| {
            rate(some_total(pick(earlier)), some_total(pick(later)), seconds).map(|us| us / 1e6)
        };
        Some(Rates {
            seconds,
            cpu_cores: rate(cpu(earlier), cpu(later), seconds).map(|ns| ns / 1e9),
            read_bytes_per_second: rate(io(earlier, false), io(later, false), seconds),
            write_bytes_per_second: rate(io(earlier, true), io(later, true), seconds),
            memory_bytes_per_second: trend(memory_bytes(earlier), memory_bytes(later), seconds),
            stall: Stall {
                cpu: stall(|s| s.cpu_stat.and_then(|c| c.pressure)),
                memory: stall(|s| s.memory_stat.and_then(|m| m.pressure)),
                io: stall(|s| s.io_stat.and_then(|io| io.pressure)),
            },
        })
    }
}

/// How a running step is doing: one `stepmon run --progress` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Progress {
    /// When the newest sample it uses was taken.
    pub at: Timestamp,
    /// Seconds from the step's start to `at`.
    pub elapsed_seconds: f64,
    /// Whose samples: the step's own cgroup, or the enclosing cgroup (which
    /// holds others' usage too) where the step has none.
    pub of: SampleOf,
    /// Over the last interval (the previous line's sample to this one's).
    pub now: Rates,
    /// Cores busy on average since the step's first sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_cores_average: Option<f64>,
    /// Memory now, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// The largest memory so far, bytes: `memory.peak` (v1:
    /// `memory.max_usage_in_bytes`) where the kernel keeps one, else the
    /// largest reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_peak_bytes: Option<u64>,
    /// `memory.max` (v1: `memory.limit_in_bytes`), bytes; absent when
    /// unlimited or not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
    /// Tasks now (`pids.current`: threads count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<u64>,
    /// The command whose processes used the most CPU time over the last
    /// interval; absent where the step's processes are not followed or
    /// none used any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busiest: Option<BusiestCommand>,
}

/// The command of a step that used the most CPU time over an interval: the
/// CPU time of its processes (those running and those that ended in it)
/// summed by command name.
///
/// ```
/// use stepmon_model::progress::BusiestCommand;
///
/// let busiest = BusiestCommand::new("cc1plus".into(), 5.4, 3.0, 12);
/// assert_eq!(busiest.cpu_cores, 1.8);
/// assert_eq!(busiest.processes, 12);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BusiestCommand {
    /// The command's name as the kernel keeps it (`comm`: the program's
    /// file name, cut to 15 bytes).
    pub command: String,
    /// Its CPU time over the interval, seconds.
    pub cpu_seconds: f64,
    /// That over the interval's wall time: cores it kept busy on average.
    pub cpu_cores: f64,
    /// How many of its processes used CPU time in the interval.
    pub processes: u32,
}

impl BusiestCommand {
    /// `command`, whose `processes` used `cpu_seconds` of CPU time over
    /// `interval_seconds` (cores: 0 over no time).
    #[must_use]
    pub fn new(command: String, cpu_seconds: f64, interval_seconds: f64, processes: u32) -> BusiestCommand {
        let cpu_cores = if interval_seconds > 0.0 { cpu_seconds / interval_seconds } else { 0.0 };
        BusiestCommand { command, cpu_seconds, cpu_cores, processes }
    }
}

impl Progress {
    /// The step of `of`'s samples, started at `start`: `baseline` its first
    /// sample, `previous` the one the last progress was computed from (the
    /// baseline at first), `latest` the newest; `largest_seen` the largest
    /// memory reading so far where the kernel keeps no peak.
    #[must_use]
    pub fn of(
        of: SampleOf,
        start: Timestamp,
        baseline: &StepSample,
        previous: &StepSample,
        latest: &StepSample,
        largest_seen: Option<u64>,
    ) -> Progress {
        let elapsed_seconds = latest.timestamp.duration_since(start).as_secs_f64().max(0.0);
        let average = Rates::between(baseline, latest).and_then(|r| r.cpu_cores);
        let peak = latest.memory_stat.and_then(|m| m.peak);
        let current = memory_bytes(latest);
        Progress {
            at: latest.timestamp,
            elapsed_seconds,
            of,
            now: Rates::between(previous, latest).unwrap_or_default(),
            cpu_cores_average: average,
            memory_bytes: current,
            memory_peak_bytes: [peak, current, largest_seen].into_iter().flatten().max(),
            memory_limit_bytes: latest.stepmon.memory_max.and_then(crate::sample::LimitJson::value),
            tasks: latest.pids_stat.current,
            busiest: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(json: &str) -> StepSample {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn counters_become_rates_and_gauges_stay_as_read() {
        let a = sample(
            r#"{"timestamp": "2026-12-04T10:00:00Z", "cpuStat": {"usageNanos": 1000000000,
              "pressure": {"some": {"avg10": 0, "avg60": 0, "avg300": 0, "total": 0}, "full": null}},
              "ioStat": {"readBytes": 0, "writeBytes": 1048576}, "pidsStat": {"current": 2},
              "stepmon": {"memoryCurrent": 1048576}}"#,
        );
        let b = sample(
            r#"{"timestamp": "2026-12-04T10:00:04Z", "cpuStat": {"usageNanos": 9000000000,
              "pressure": {"some": {"avg10": 0, "avg60": 0, "avg300": 0, "total": 1000000}, "full": null}},
              "ioStat": {"readBytes": 4194304, "writeBytes": 1048576}, "pidsStat": {"current": 9},
              "memoryStat": {"peak": 9437184}, "stepmon": {"memoryCurrent": 5242880, "memoryMax": 104857600}}"#,
        );
        let r = Rates::between(&a, &b).unwrap();
        assert_eq!((r.seconds, r.cpu_cores), (4.0, Some(2.0)));
        assert_eq!((r.read_bytes_per_second, r.write_bytes_per_second), (Some(1_048_576.0), Some(0.0)));
        assert_eq!(r.memory_bytes_per_second, Some(1_048_576.0));
        assert_eq!((r.stall.cpu, r.stall.memory, r.stall.io), (Some(0.25), None, None));
        let start: Timestamp = "2026-12-04T09:59:59Z".parse().unwrap();
        let p = Progress::of(SampleOf::Step, start, &a, &a, &b, Some(20 << 20));
        assert_eq!(p.elapsed_seconds, 5.0);
        assert_eq!(p.cpu_cores_average, Some(2.0));
        assert_eq!(
            (p.memory_bytes, p.memory_peak_bytes, p.memory_limit_bytes),
            (Some(5 << 20), Some(20 << 20), Some(100 << 20))
        );
        assert_eq!(p.tasks, Some(9));
    }

    #[test]
    fn a_counter_that_went_back_or_is_missing_gives_nothing() {
        let a = sample(r#"{"timestamp": "2026-12-04T10:00:00Z", "cpuStat": {"usageNanos": 5}}"#);
        let b = sample(r#"{"timestamp": "2026-12-04T10:00:01Z", "cpuStat": {"usageNanos": 4}}"#);
        let c = sample(r#"{"timestamp": "2026-12-04T10:00:02Z"}"#);
        assert_eq!(Rates::between(&a, &b).unwrap().cpu_cores, None);
        assert_eq!(Rates::between(&b, &c).unwrap().cpu_cores, None);
        assert!(Rates::between(&a, &a).is_none(), "no time between them");
    }
}
