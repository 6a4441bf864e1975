//! Whether a job had the right machine: its peak memory against the memory
//! it could have, the cores it used on average and at its busiest against
//! the cores it had, and how long its steps waited for CPU.
//!
//! Steps of one job may overlap, and the peaks of overlapping steps do not
//! add up (one may peak while the other idles): the job's memory at a time
//! is the sum of the running steps' last readings at or before it, and its
//! cores at a time the sum of the running steps' CPU rates over the
//! intervals holding it — both from the time-aligned samples
//! ([`crate::series::StepSeries`]), the job's peak the highest such sum
//! (and at least the highest single step's `memory.peak`, which samples can
//! miss).
//!
//! What the job could have: the enclosing cgroup's `memory.max` and
//! `cpu.max` when a step recorded one (a container's limits), else the
//! machine's `MemTotal` and online CPUs (`/proc/meminfo`, `/proc/stat`).

use serde::Serialize;

use super::axis::{OnAxis, on_job_axis};
use super::reach::Reaches;
use crate::job::Entry;
use crate::series::Point;
use crate::units::{bytes, percent};

/// Over-provisioned: the job's busiest moment used at most this share of
/// the cores it had, and its peak memory at most this share of its memory.
pub const OVER_PROVISIONED_SHARE: f64 = 0.25;
/// Memory-bound: a step's peak (or the job's) came within this share of the
/// memory the job could have.
pub const MEMORY_BOUND_HEADROOM: f64 = 0.05;
/// CPU-starved: the steps waited for CPU (PSI `some` of their own cgroups)
/// at least this share of the time they ran.
pub const CPU_STARVED_SHARE: f64 = 0.20;
/// A job shorter than this, s (its first step's start to its last step's
/// end), gets no sizing verdict — neither over-provisioned nor CPU-starved:
/// a 9 ms job of two `sh -c 'exit 0'` used nothing of any machine, which
/// says nothing of the machine it needs. Memory-bound stays: coming within
/// [`MEMORY_BOUND_HEADROOM`] of the memory is evidence at any length.
/// docs/parallelism.md gives the practice behind each threshold.
pub const SIZING_MIN_SECONDS: f64 = 60.0;

/// The verdict on a job's machine, with the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct JobVerdict {
    /// The job's peak memory, bytes (time-aligned sum of its steps).
    pub memory_peak_bytes: Option<u64>,
    /// The memory it could have, bytes.
    pub memory_available_bytes: Option<u64>,
    /// Whose that memory is: `machine` or `enclosing cgroup`.
    pub memory_of: Option<&'static str>,
    /// CPU seconds over the job's wall time.
    pub average_cores: Option<f64>,
    /// The most cores its running steps used at once.
    pub busiest_cores: Option<f64>,
    /// The cores it could have.
    pub cores_available: Option<f64>,
    /// Whose those cores are: `machine` or `enclosing cgroup`.
    pub cores_of: Option<&'static str>,
    /// Share of the steps' wall time in which they waited for CPU.
    pub cpu_stall_share: Option<f64>,
    /// The busiest and the peak were at most [`OVER_PROVISIONED_SHARE`].
    pub over_provisioned: bool,
    /// The step (or `the job's steps together`) that came within
    /// [`MEMORY_BOUND_HEADROOM`] of the memory, when one did.
    pub memory_bound: Option<String>,
    /// That step by its place: its index in the entries judged (two steps
    /// may share a name). Not in the JSON, whose `memoryBound` names it.
    #[serde(skip)]
    pub memory_bound_entry: Option<usize>,
    /// How many steps' memory is left out of `memory_peak_bytes` and the
    /// memory verdicts: not their own ([`super::memory_not_own`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub memory_left_out_steps: usize,
    /// The steps waited for CPU at least [`CPU_STARVED_SHARE`].
    pub cpu_starved: bool,
    /// The job's wall time, s, when it was too short to size
    /// ([`SIZING_MIN_SECONDS`]): then neither `over_provisioned` nor
    /// `cpu_starved` is judged.
    pub too_short_to_size: Option<f64>,
    /// The shortest job that is sized, s.
    pub sizing_min_seconds: f64,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The job's memory at `t`, a reading of step `own`: each running step's
/// last reading at or before it. The other steps count over `(start, end)`,
/// `own` over `[start, end]`: a step that starts the instant another ends
/// does not overlap it (its baseline reading and the other's last one are
/// not held at once). `near`: the indices of the steps that can count at
/// `t` (every other step counts nothing), in order.
fn memory_at(steps: &[OnAxis], near: &[usize], own: usize, t: f64) -> f64 {
    near.iter()
        .map(|&i| (i, &steps[i]))
        .filter(|(i, s)| if *i == own { s.start <= t && t <= s.end } else { s.start < t && t < s.end })
        .filter_map(|(_, s)| s.memory.iter().rev().find(|p| p.t <= t).map(|p| p.value))
        .sum()
}

/// Where a step's memory can count: its `[start, end]`.
fn memory_reach(s: &OnAxis) -> (f64, f64) {
    (s.start, s.end)
}

/// The job's cores at `t`: each step's rate over the interval
/// `(previous point, point]` holding `t` (its first from its start).
fn cores_at(steps: &[OnAxis], near: &[usize], _own: usize, t: f64) -> f64 {
    near.iter()
        .map(|&i| &steps[i])
        .filter_map(|s| {
            let i = s.cores.iter().position(|p| p.t >= t)?;
            let from = if i == 0 { s.start } else { s.cores[i - 1].t };
            (from < t).then_some(s.cores[i].value)
        })
        .sum()
}

/// Where a step's cores can count: from its start or first point, whichever
/// is earlier, to its last point.
fn cores_reach(s: &OnAxis) -> (f64, f64) {
    let t = s.cores.iter().map(|p| p.t);
    (t.clone().fold(s.start, f64::min), t.fold(f64::NEG_INFINITY, f64::max))
}

/// A sum of `at` over the steps at a time of step `own`.
type At = fn(&[OnAxis], &[usize], usize, f64) -> f64;

/// The peak of `at` over the times of every step's `points`. At the times
/// of one step only the steps whose `reach` meets that step's times can
/// count, so only they are summed, in their order — the same sum as over
/// every step, without a job's steps times its points (nor a look at every
/// step for each: [`Reaches`]).
fn busiest(steps: &[OnAxis], points: fn(&OnAxis) -> &[Point], at: At, reach: fn(&OnAxis) -> (f64, f64)) -> Option<f64> {
    let reaches: Vec<(f64, f64)> = steps.iter().map(reach).collect();
    let reaching = Reaches::new(&reaches);
    let mut near = Vec::new();
    steps
        .iter()
        .enumerate()
        .filter_map(|(own, s)| {
            let times = points(s).iter().map(|p| p.t);
            let (from, to) = (times.clone().fold(f64::INFINITY, f64::min), times.fold(f64::NEG_INFINITY, f64::max));
            near.clear();
            reaching.meeting(from, to, &mut near);
            if !near.contains(&own) {
                near.push(own);
            }
            near.sort_unstable();
            points(s).iter().map(|p| at(steps, &near, own, p.t)).max_by(f64::total_cmp)
        })
        .max_by(f64::total_cmp)
}

/// The smallest limit any step's enclosing-cgroup samples recorded.
fn enclosing_limit(
    entries: &[Entry],
    limit: impl Fn(&stepmon_model::sample::StepSample) -> Option<f64>,
) -> Option<f64> {
    entries
        .iter()
        .filter_map(|e| e.step.run.as_ref()?.enclosing_cgroup.as_ref())
        .flat_map(|c| c.samples.iter().filter_map(&limit))
        .min_by(f64::total_cmp)
}

#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)]
impl JobVerdict {
    /// Judges the job of `entries`, sizing it only when it lasted
    /// [`SIZING_MIN_SECONDS`] or more.
    #[must_use]
    pub fn of(entries: &[Entry]) -> JobVerdict {
        JobVerdict::judged(entries, SIZING_MIN_SECONDS)
    }

    /// Judges the job of `entries`, sizing it only when it lasted
    /// `min_seconds` or more.
    #[must_use]
    pub fn judged(entries: &[Entry], min_seconds: f64) -> JobVerdict {
        let steps = on_job_axis(entries);
        let own_memory = |e: &&Entry| !super::memory_not_own(&e.step);
        let memory_left_out_steps = entries.iter().filter(|e| !own_memory(e)).count();
        let own_peak = entries.iter().filter(own_memory).filter_map(|e| e.step.summary.memory.peak_bytes).max();
        let aligned = busiest(&steps, |s| &s.memory, memory_at, memory_reach).map(|v| v as u64);
        let memory_peak_bytes = aligned.max(own_peak);
        let (memory_available_bytes, memory_of) =
            match enclosing_limit(entries, |s| s.stepmon.memory_max?.value().map(|v| v as f64)) {
                Some(limit) => (Some(limit as u64), Some("enclosing cgroup")),
                None => {
                    let total = entries
                        .iter()
                        .flat_map(|e| &e.step.usage.sys_usage)
                        .filter_map(|s| s.memory_stat?.total)
                        .max()
                        .map(|kb| kb.saturating_mul(1024));
                    (total, total.map(|_| "machine"))
                }
            };
        let (cores_available, cores_of) = match enclosing_limit(entries, |s| {
            let quota = s.stepmon.cpu_max_quota_usec?.value()?;
            let period = s.stepmon.cpu_max_period_usec.filter(|p| *p > 0)?;
            Some(quota as f64 / period as f64)
        }) {
            Some(cores) => (Some(cores), Some("enclosing cgroup")),
            None => {
                let cpus = entries.iter().filter_map(|e| crate::verdict::online_cpus(&e.step)).max();
                (cpus.map(|n| n as f64), cpus.map(|_| "machine"))
            }
        };
        let job_wall = {
            let start = steps.iter().map(|s| s.start).min_by(f64::total_cmp);
            let end = steps.iter().map(|s| s.end).max_by(f64::total_cmp);
            start.zip(end).map(|(a, b)| b - a).filter(|w| *w > 0.0)
        };
        let cpu: Vec<f64> = entries.iter().filter_map(|e| e.step.summary.cpu.usage_seconds).collect();
        let average_cores = job_wall.filter(|_| !cpu.is_empty()).map(|w| cpu.iter().sum::<f64>() / w);
        let busiest_cores = busiest(&steps, |s| &s.cores, cores_at, cores_reach);
        let (stalled, ran) = entries
            .iter()
            .filter_map(|e| Some((e.step.summary.cpu_stall.some_seconds?, e.step.wall_seconds.filter(|w| *w > 0.0)?)))
            .fold((0.0, 0.0), |(a, b), (s, w)| (a + s, b + w));
        let cpu_stall_share = (ran > 0.0).then(|| (stalled / ran).min(1.0));
        let too_short_to_size = Some(job_wall.unwrap_or(0.0)).filter(|w| *w < min_seconds);
        let sized = too_short_to_size.is_none();
        // With steps' memory left out the job's peak is not known.
        let over_provisioned = sized
            && memory_left_out_steps == 0
            && match (busiest_cores, cores_available, memory_peak_bytes, memory_available_bytes) {
                (Some(b), Some(c), Some(m), Some(a)) if c > 0.0 && a > 0 => {
                    b <= OVER_PROVISIONED_SHARE * c && (m as f64) <= OVER_PROVISIONED_SHARE * a as f64
                }
                _ => false,
            };
        // The step of the highest peak (the last of equal ones).
        let heaviest_entry = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| own_memory(e))
            .filter_map(|(i, e)| e.step.summary.memory.peak_bytes.map(|p| (p, i)))
            .max_by_key(|(p, _)| *p);
        let near = |peak: u64| {
            memory_available_bytes.is_some_and(|a| a > 0 && peak as f64 >= (1.0 - MEMORY_BOUND_HEADROOM) * a as f64)
        };
        let memory_bound_entry = heaviest_entry.filter(|(p, _)| near(*p)).map(|(_, i)| i);
        let memory_bound = match memory_bound_entry {
            Some(i) => Some(format!("the {} step", entries[i].step.name)),
            None => memory_peak_bytes.filter(|p| near(*p)).map(|_| "the job's steps together".to_owned()),
        };
        JobVerdict {
            memory_peak_bytes,
            memory_available_bytes,
            memory_of,
            average_cores,
            busiest_cores,
            cores_available,
            cores_of,
            cpu_stall_share,
            over_provisioned,
            memory_bound,
            memory_bound_entry,
            memory_left_out_steps,
            cpu_starved: sized && cpu_stall_share.is_some_and(|s| s >= CPU_STARVED_SHARE),
            too_short_to_size,
            sizing_min_seconds: min_seconds,
        }
    }

    /// The verdict in plain sentences: what the job used of what it had,
    /// then each of "over-provisioned", "memory-bound", "CPU-starved" that
    /// holds. Empty when nothing about the job's usage was recorded.
    #[must_use]
    pub fn sentences(&self) -> Vec<String> {
        let cores = |v: f64| format!("{v:.1}");
        let mut out = Vec::new();
        // CPUs are whole; a cpu.max quota need not be.
        let whole = |c: f64| if c.fract() == 0.0 { format!("{c:.0}") } else { cores(c) };
        let of_cores = |used: f64| match self.cores_available {
            Some(c) => format!("{} of {}", cores(used), whole(c)),
            None => cores(used),
        };
        let of_memory = |used: u64| match self.memory_available_bytes {
            Some(a) => format!("{} of {}", bytes(used), bytes(a)),
            None => bytes(used),
        };
        let mut used = Vec::new();
        if let (Some(avg), Some(top)) = (self.average_cores, self.busiest_cores) {
            used.push(format!("{} cores on average, {} at its busiest", cores(avg), of_cores(top)));
        }
        if let Some(m) = self.memory_peak_bytes {
            used.push(format!("{} of memory at its peak", of_memory(m)));
        }
        if !used.is_empty() {
            let whose = match (self.cores_of, self.memory_of) {
                (Some("enclosing cgroup"), _) | (_, Some("enclosing cgroup")) => " (the enclosing cgroup's limits)",
                (Some(_), _) | (_, Some(_)) => " (the machine's)",
                _ => "",
            };
            out.push(format!("the job used {}{whose}", used.join(" and ")));
        }
        if self.memory_left_out_steps > 0 {
            let n = self.memory_left_out_steps;
            out.push(format!(
                "memory of {n} step{} left out: without a cgroup of its own a step's memory is the cgroup around \
                 it, other processes included (an upper bound)",
                if n == 1 { "" } else { "s" }
            ));
        }
        if let Some(wall) = self.too_short_to_size {
            out.push(format!(
                "too short to size its machine: {} (over-provisioned and CPU-starved are judged from {:.0} s on)",
                crate::units::seconds(wall),
                self.sizing_min_seconds
            ));
        }
        if self.over_provisioned
            && let (Some(b), Some(m)) = (self.busiest_cores, self.memory_peak_bytes)
        {
            out.push(format!(
                "over-provisioned: the job never used more than {} cores and {}",
                of_cores(b),
                of_memory(m)
            ));
        }
        if let Some(who) = &self.memory_bound {
            let whose = if self.memory_of == Some("enclosing cgroup") {
                "the enclosing cgroup's memory.max"
            } else {
                "the machine's memory"
            };
            out.push(format!("memory-bound: {who} came within {:.0}% of {whose}", MEMORY_BOUND_HEADROOM * 100.0));
        }
        if self.cpu_starved
            && let Some(s) = self.cpu_stall_share
        {
            out.push(format!("CPU-starved: steps waited for CPU {} of the time they ran", percent(s)));
        }
        out
    }
}
