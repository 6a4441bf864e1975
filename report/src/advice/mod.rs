//! Advice: what to change next time, from what the step measured.
//!
//! [`parallelism`]: how many of the step's parallel workers (`rustc`,
//! `cc1plus`, `python3` — the command that ran many times, often at once)
//! its memory and cores hold. The workers' p95 peak RSS (taskstats
//! `hiwater_rss`, or sampled `VmHWM` as a lower bound), the memory the step
//! could use (its `memory.max`, else the enclosing cgroup's, else the
//! machine's memory less what the rest of the machine used), and the cores
//! (`cpu.max`, else the online CPUs) with the step's CPU stall: the job
//! count that fits memory with [`ParallelismAdvice::HEADROOM`] kept free,
//! bounded by the cores where the workers are CPU-bound (they computed
//! [`ParallelismAdvice::CPU_BOUND_SHARE`] or more of the time they were not
//! queued for a CPU). docs/parallelism.md
//! says why each number is taken so.

mod line;

use stepmon_model::advice::{Advice, CoresSource, LimitedBy, MemorySource, NoAdvice, ParallelismAdvice, PeakBytes};
use stepmon_model::processes::{CommandAggregate, ProcessSource, Processes};
use stepmon_model::sample::{LimitJson, StepSample};
use stepmon_model::source::Bound;

use crate::step::Step;

impl Step {
    /// Everything advised about this step ([`advise`]).
    #[must_use]
    pub fn advice(&self) -> Advice {
        advise(self)
    }
}

/// Everything advised about `step`.
#[must_use]
pub fn advise(step: &Step) -> Advice {
    Advice { parallelism: Some(parallelism(step)) }
}

/// The parallelism advice of `step` (with [`ParallelismAdvice::no_advice`]
/// and its reason when there is none).
#[must_use]
pub fn parallelism(step: &Step) -> ParallelismAdvice {
    let mut advice = judge(step);
    advice.reason = line::render(&advice);
    advice
}

/// The step's workers: of the commands that ran at least
/// [`ParallelismAdvice::MIN_INSTANCES`] times with a peak recorded, those
/// that overlapped first, then the most memory at once (p95 peak × most at
/// once), then the most CPU. Or why none.
fn workers(processes: Option<&Processes>) -> Result<&CommandAggregate, NoAdvice> {
    let processes = processes
        .filter(|p| p.source.is_some_and(|s| s != ProcessSource::None) && p.processes > 0)
        .ok_or(NoAdvice::NoProcessRecords)?;
    let repeated: Vec<&CommandAggregate> =
        processes.commands.iter().filter(|c| c.count >= ParallelismAdvice::MIN_INSTANCES).collect();
    if repeated.is_empty() {
        return Err(NoAdvice::TooFewInstances);
    }
    let with_peaks: Vec<&CommandAggregate> =
        repeated.into_iter().filter(|c| c.p95_peak_rss_bytes.is_some_and(|p| p > 0)).collect();
    if with_peaks.is_empty() {
        return Err(NoAdvice::NoPeaks);
    }
    #[allow(clippy::cast_precision_loss)]
    let weight = |c: &CommandAggregate| c.p95_peak_rss_bytes.unwrap_or(0) as f64 * c.max_concurrent as f64;
    with_peaks
        .into_iter()
        .filter(|c| c.max_concurrent > 0)
        .max_by(|a, b| {
            (a.max_concurrent > 1)
                .cmp(&(b.max_concurrent > 1))
                .then(weight(a).total_cmp(&weight(b)))
                .then(a.cpu_seconds.total_cmp(&b.cpu_seconds))
        })
        .ok_or(NoAdvice::NoLifetimes)
}

fn limit(value: Option<LimitJson>) -> Option<u64> {
    match value? {
        LimitJson::Value(v) => Some(v),
        LimitJson::Max(_) => None,
    }
}

/// The step's memory at `at`: its last `memory.current` reading at or before it.
fn step_memory_at(samples: &[StepSample], at: jiff::Timestamp) -> u64 {
    samples.iter().rev().find(|s| s.timestamp <= at).and_then(|s| s.stepmon.memory_current).unwrap_or(0)
}

/// The memory the step could use, and whose limit that is.
fn memory_available(step: &Step) -> Option<(u64, MemorySource)> {
    let samples = &step.usage.resource_usage.samples;
    if let Some(own) = samples.iter().rev().find_map(|s| limit(s.stepmon.memory_max)) {
        return Some((own, MemorySource::StepLimit));
    }
    let enclosing = step.run.as_ref().and_then(|r| r.enclosing_cgroup.as_ref());
    if let Some(e) = enclosing.and_then(|e| e.samples.iter().filter_map(|s| limit(s.stepmon.memory_max)).min()) {
        return Some((e, MemorySource::EnclosingLimit));
    }
    // The machine's memory less the most that the rest of it used at one
    // reading: what was in use then (MemTotal - MemAvailable) without the
    // step's own last reading.
    let sys = &step.usage.sys_usage;
    let total = sys.iter().filter_map(|s| s.memory_stat?.total).max()?.saturating_mul(1024);
    let others = sys
        .iter()
        .filter_map(|s| {
            let m = s.memory_stat?;
            let used = m.total?.saturating_sub(m.available?).saturating_mul(1024);
            Some(used.saturating_sub(step_memory_at(samples, s.timestamp)))
        })
        .max()
        .unwrap_or(0);
    Some((total.saturating_sub(others), MemorySource::MachineLessOthers))
}

/// The cores the step could use, and whose they are.
#[allow(clippy::cast_precision_loss)]
fn cores(step: &Step) -> Option<(f64, CoresSource)> {
    let quota = |s: &StepSample| {
        let quota = limit(s.stepmon.cpu_max_quota_usec)?;
        let period = s.stepmon.cpu_max_period_usec.filter(|p| *p > 0)?;
        Some(quota as f64 / period as f64)
    };
    if let Some(own) = step.usage.resource_usage.samples.iter().rev().find_map(quota) {
        return Some((own, CoresSource::StepLimit));
    }
    let enclosing = step.run.as_ref().and_then(|r| r.enclosing_cgroup.as_ref());
    if let Some(e) = enclosing.and_then(|e| e.samples.iter().filter_map(quota).min_by(f64::total_cmp)) {
        return Some((e, CoresSource::EnclosingLimit));
    }
    crate::cpus::online_cpus(step).map(|n| (n as f64, CoresSource::OnlineCpus))
}

/// The parallelism advice of `step` for the workers `workers` found
/// otherwise than in its process records: a build's actions, each measured
/// in a cgroup of its own (`crate::build`), their peaks exact; `largest`
/// names the heaviest (its process's arguments otherwise).
#[must_use]
pub fn parallelism_of_workers(step: &Step, workers: &CommandAggregate, largest: Option<String>) -> ParallelismAdvice {
    let mut advice = judge_workers(step, Ok(workers), false);
    if largest.is_some() && advice.largest_input.is_none() {
        advice.largest_input = largest;
    }
    advice.reason = line::render(&advice);
    advice
}

fn judge(step: &Step) -> ParallelismAdvice {
    let processes = step.run.as_ref().and_then(|r| r.processes.as_ref());
    let sampled = processes.is_some_and(|p| p.source == Some(ProcessSource::Sampled) || p.partial);
    judge_workers(step, workers(processes), sampled)
}

/// The advice for `workers` (or why there are none) in `step`'s memory and
/// cores; `sampled`: their peaks are lower bounds.
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn judge_workers(step: &Step, workers: Result<&CommandAggregate, NoAdvice>, sampled: bool) -> ParallelismAdvice {
    let summary = &step.summary;
    let mut advice = ParallelismAdvice { headroom: ParallelismAdvice::HEADROOM, ..ParallelismAdvice::default() };
    advice.oom_kills =
        summary.memory.oom_kills.unwrap_or(0).saturating_add(summary.memory.oom_group_kills.unwrap_or(0));
    let wall = step.wall_seconds.filter(|w| *w > 0.0);
    advice.cpu_stall_share =
        summary.cpu_stall.some_share.or_else(|| Some(summary.cpu_stall.some_seconds? / wall?)).map(|s| s.min(1.0));
    if let Some((cores, source)) = cores(step) {
        (advice.cores, advice.cores_source) = (Some(cores), Some(source));
    }
    if let Some((bytes, source)) = memory_available(step) {
        (advice.memory_available_bytes, advice.memory_source) = (Some(bytes), Some(source));
    }
    let workers = match workers {
        Ok(w) => w,
        Err(why) => {
            advice.no_advice = Some(why);
            return advice;
        }
    };
    advice.command = Some(workers.command.clone());
    advice.instances = Some(workers.count);
    advice.observed_concurrency = Some(workers.max_concurrent);
    advice.lifetimes = workers.lifetimes;
    advice.largest_input = workers.max_peak_rss_label().map(str::to_owned);
    advice.workers_cpu_share = (workers.elapsed_seconds > 0.0).then(|| {
        let unqueued = workers.elapsed_seconds - workers.delays.cpu_seconds.unwrap_or(0.0);
        (workers.cpu_seconds / unqueued.max(workers.cpu_seconds).max(f64::MIN_POSITIVE)).min(1.0)
    });
    advice.cpu_bound = advice.workers_cpu_share.is_some_and(|s| s >= ParallelismAdvice::CPU_BOUND_SHARE);
    let (Some(p50), Some(p95), Some(max)) =
        (workers.p50_peak_rss_bytes, workers.p95_peak_rss_bytes, workers.max_peak_rss_bytes)
    else {
        advice.no_advice = Some(NoAdvice::NoPeaks);
        return advice;
    };
    advice.peak_bytes =
        Some(PeakBytes { p50, p95, max, bound: if sampled { Bound::LowerBound } else { Bound::Exact } });
    let Some(available) = advice.memory_available_bytes else {
        advice.no_advice = Some(NoAdvice::MemoryUnknown);
        return advice;
    };
    let fits = (available as f64 * (1.0 - advice.headroom) / p95.max(1) as f64).floor() as u64;
    advice.fits_in_memory = Some(fits);
    let memory_jobs = fits.max(1);
    let core_jobs = advice.cores.map(|c| (c.floor() as u64).max(1));
    let (jobs, limited_by) = match core_jobs {
        Some(cores) if advice.cpu_bound && cores < memory_jobs => (cores, LimitedBy::Cpu),
        _ if advice.oom_kills > 0 || fits < workers.max_concurrent => (memory_jobs, LimitedBy::Memory),
        _ => (memory_jobs, LimitedBy::None),
    };
    (advice.suggested_jobs, advice.limited_by) = (Some(jobs), Some(limited_by));
    advice
}

#[cfg(test)]
mod tests;
