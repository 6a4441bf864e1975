//! Time series of a step for charts and traces: values at each sample, and
//! rates over each interval between two samples (plotted at the interval's
//! end). Times are seconds since the step's start ([`Step::offset_seconds`]).
//!
//! Counters are cumulative in the kernel, so a rate needs two readings; for a
//! BuildKit step the first interval starts at the step's (estimated) start
//! with every counter at zero, since its cgroup was created for the step.

use jiff::Timestamp;
use serde::Serialize;
use stepmon_model::sample::StepSample;
use stepmon_model::system::{PressureJson, SysCPUStat};

use crate::step::{Origin, Step};

/// One point of a series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    /// Seconds since the step's start.
    pub t: f64,
    /// The value, in the series' unit.
    pub value: f64,
}

/// Every series of one step. A series is empty when the samples do not hold
/// what it needs (the samples' `missing` lists say why).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StepSeries {
    /// Average cores the step used over each interval (`usage_usec` rate).
    pub cpu_cores: Vec<Point>,
    /// Memory in use at each sample, bytes: `memory.current` when stepmon
    /// read it, else anon + file (BuildKit records no `memory.current`).
    pub memory_bytes: Vec<Point>,
    /// Anonymous memory at each sample, bytes.
    pub memory_anon_bytes: Vec<Point>,
    /// Page cache at each sample, bytes.
    pub memory_file_bytes: Vec<Point>,
    /// Bytes read per second over each interval.
    pub io_read_bytes_per_second: Vec<Point>,
    /// Bytes written per second over each interval.
    pub io_write_bytes_per_second: Vec<Point>,
    /// Share of each interval in which some task of the step waited for CPU (PSI `some`).
    pub cpu_stall_share: Vec<Point>,
    /// The same for memory.
    pub memory_stall_share: Vec<Point>,
    /// The same for IO.
    pub io_stall_share: Vec<Point>,
    /// Tasks in the step at each sample (`pids.current`).
    pub pids: Vec<Point>,
    /// Share of the whole machine's CPU time that was busy (not idle or
    /// iowait) over each interval between two machine samples.
    pub machine_cpu_busy_share: Vec<Point>,
    /// Share of each machine-sample interval in which some task on the
    /// machine waited for CPU.
    pub machine_cpu_stall_share: Vec<Point>,
}

/// A reading of a cumulative counter at a time (seconds since start).
#[derive(Clone, Copy)]
struct Reading {
    t: f64,
    value: u64,
}

/// Rates between consecutive readings, `scale` × Δvalue / Δt; an interval
/// whose counter went backwards (a counter reset) or whose Δt ≤ 0 is skipped.
#[allow(clippy::cast_precision_loss)]
fn rates(readings: impl IntoIterator<Item = Option<Reading>>, scale: f64) -> Vec<Point> {
    let mut out = Vec::new();
    let mut previous: Option<Reading> = None;
    for reading in readings {
        let Some(reading) = reading else { continue };
        if let Some(p) = previous {
            let dt = reading.t - p.t;
            if dt > 0.0
                && let Some(dv) = reading.value.checked_sub(p.value)
            {
                out.push(Point { t: reading.t, value: scale * dv as f64 / dt });
            }
        }
        previous = Some(reading);
    }
    out
}

/// `points`, each share over 1 read as 1.
fn at_most_one(mut points: Vec<Point>) -> Vec<Point> {
    for p in &mut points {
        p.value = p.value.min(1.0);
    }
    points
}

fn some_total(p: Option<PressureJson>) -> Option<u64> {
    p?.some?.total
}

impl StepSeries {
    /// The series of `step`.
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn of(step: &Step) -> StepSeries {
        let samples = &step.usage.resource_usage.samples;
        let at = |t: Timestamp| step.offset_seconds(t);
        // BuildKit: the counters were zero when the step (and its cgroup) started.
        let from_zero = matches!(step.origin, Origin::BuildKit { .. }) && step.start.is_some();
        let counter = |pick: &dyn Fn(&StepSample) -> Option<u64>| -> Vec<Option<Reading>> {
            let origin = from_zero.then_some(Some(Reading { t: 0.0, value: 0 }));
            origin
                .into_iter()
                .chain(samples.iter().map(|s| pick(s).map(|value| Reading { t: at(s.timestamp), value })))
                .collect()
        };
        let gauge = |pick: &dyn Fn(&StepSample) -> Option<u64>| -> Vec<Point> {
            samples.iter().filter_map(|s| pick(s).map(|v| Point { t: at(s.timestamp), value: v as f64 })).collect()
        };
        // A post-exit sample's gauges read the emptied cgroup: not drawn
        // (its counters are final and are).
        let post_exit = step.only_post_exit_sample();
        let gauge = |pick: &dyn Fn(&StepSample) -> Option<u64>| -> Vec<Point> {
            if post_exit { Vec::new() } else { gauge(pick) }
        };
        let cpu_usage = counter(&|s| s.cpu_stat?.usage_nanos);
        let memory_current = gauge(&|s| s.stepmon.memory_current);
        let memory_bytes = if memory_current.is_empty() {
            gauge(&|s| {
                let m = s.memory_stat?;
                if m.anon.is_none() && m.file.is_none() {
                    return None;
                }
                Some(m.anon.unwrap_or(0).saturating_add(m.file.unwrap_or(0)))
            })
        } else {
            memory_current
        };
        // PSI totals are µs: Δµs / Δs / 1e6 is the stalled share of the
        // interval, at most 1 (the summary's `some_share` says why a
        // reading can land over it).
        let stall = |pick: &dyn Fn(&StepSample) -> Option<PressureJson>| {
            at_most_one(rates(counter(&|s| some_total(pick(s))), 1e-6))
        };
        let machine = &step.usage.sys_usage;
        let machine_cpu: Vec<(f64, SysCPUStat)> =
            machine.iter().filter_map(|s| s.cpu_stat.map(|c| (at(s.timestamp), c))).collect();
        let machine_cpu_busy_share = machine_cpu
            .windows(2)
            .filter_map(|w| {
                let [(_, a), (t, b)] = w else { return None };
                let total =
                    |c: &SysCPUStat| c.user + c.nice + c.system + c.idle + c.iowait + c.irq + c.softirq + c.steal;
                let idle = |c: &SysCPUStat| c.idle + c.iowait;
                let dt = total(b) - total(a);
                (dt > 0.0).then(|| Point { t: *t, value: ((dt - (idle(b) - idle(a))) / dt).clamp(0.0, 1.0) })
            })
            .collect();
        let machine_cpu_stall_share = at_most_one(rates(
            machine.iter().map(|s| some_total(s.cpu_pressure).map(|value| Reading { t: at(s.timestamp), value })),
            1e-6,
        ));
        StepSeries {
            cpu_cores: rates(cpu_usage, 1e-9),
            memory_bytes,
            memory_anon_bytes: gauge(&|s| s.memory_stat?.anon),
            memory_file_bytes: gauge(&|s| s.memory_stat?.file),
            io_read_bytes_per_second: rates(counter(&|s| s.io_stat?.read_bytes), 1.0),
            io_write_bytes_per_second: rates(counter(&|s| s.io_stat?.write_bytes), 1.0),
            cpu_stall_share: stall(&|s| s.cpu_stat?.pressure),
            memory_stall_share: stall(&|s| s.memory_stat?.pressure),
            io_stall_share: stall(&|s| s.io_stat?.pressure),
            pids: gauge(&|s| s.pids_stat.current),
            machine_cpu_busy_share,
            machine_cpu_stall_share,
        }
    }
}
