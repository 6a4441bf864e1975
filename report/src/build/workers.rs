//! The `-j` advice of a build from its actions: the parallelism advice
//! `stepmon run` gives from a step's per-process records
//! ([`crate::advice::parallelism`]), here with the actions as the workers —
//! each measured in its own cgroup, so its peak is exact (the whole
//! compile's memory, not one process's RSS) — in the memory and cores the
//! build's own step saw on this machine.

use stepmon_model::action::Action;
use stepmon_model::advice::ParallelismAdvice;
use stepmon_model::processes::{CommandAggregate, Lifetime};

use crate::job::table::Job;
use crate::step::Step;

use super::BuildAction;

/// The advice for the build whose own step is `build`.
#[must_use]
pub fn parallelism(build: &Step, job: &Job, actions: &[BuildAction]) -> ParallelismAdvice {
    let workers = aggregate(job, actions);
    let largest = actions
        .iter()
        .filter_map(|a| job.steps.get(a.row))
        .filter(|r| r.memory_peak_bytes.is_some())
        .max_by_key(|r| r.memory_peak_bytes)
        .map(|r| r.label.clone());
    crate::advice::parallelism_of_workers(build, &workers, largest)
}

/// The program most actions ran (`rustc`, `cc`), else `actions`.
fn worker_name(job: &Job, actions: &[BuildAction]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for a in actions {
        let name = match job.steps.get(a.row).and_then(|r| r.action.as_ref()) {
            Some(Action::Crate(c)) => c.compiler.clone(),
            Some(Action::Compile(c)) => c.compiler.clone(),
            Some(Action::Link(l)) => l.linker.clone(),
            Some(Action::Program(p)) => p.program.clone(),
            _ => continue,
        };
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => counts.push((name, 1)),
        }
    }
    counts.into_iter().max_by_key(|(_, c)| *c).map_or_else(|| "actions".to_owned(), |(n, _)| n)
}

/// The nearest-rank `q` quantile of `sorted`.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss)]
fn quantile(sorted: &[u64], q: f64) -> Option<u64> {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len().max(1)) - 1).copied()
}

/// The actions as one command's aggregate: their count, CPU, wall times
/// summed, peaks (p50, p95, the largest), the most at once, and
/// the time they waited for a CPU (their CPU stall share × wall).
#[must_use]
pub fn aggregate(job: &Job, actions: &[BuildAction]) -> CommandAggregate {
    let rows: Vec<_> = actions.iter().filter_map(|a| job.steps.get(a.row).map(|r| (a, r))).collect();
    let mut peaks: Vec<u64> = rows.iter().filter_map(|(_, r)| r.memory_peak_bytes).collect();
    peaks.sort_unstable();
    let mut workers = CommandAggregate::default();
    workers.command = worker_name(job, actions);
    workers.count = rows.len() as u64;
    workers.cpu_seconds = rows.iter().filter_map(|(_, r)| r.cpu_seconds).sum();
    workers.elapsed_seconds = rows.iter().map(|(a, _)| a.span()).sum();
    workers.max_peak_rss_bytes = peaks.last().copied();
    workers.p50_peak_rss_bytes = quantile(&peaks, 0.5);
    workers.p95_peak_rss_bytes = quantile(&peaks, 0.95);
    workers.max_concurrent = super::most_at_once(actions) as u64;
    // Each action's start and end are its step's: stepmon's clock around
    // the compiler, exact to its start-up.
    workers.lifetimes = Some(Lifetime::ForkEvent);
    workers.read_bytes = rows.iter().filter_map(|(_, r)| r.io_read_bytes).sum();
    workers.write_bytes = rows.iter().filter_map(|(_, r)| r.io_write_bytes).sum();
    let waits: Vec<f64> = rows.iter().filter_map(|(a, r)| r.cpu_stall_share.map(|s| s * a.span())).collect();
    workers.delays.cpu_seconds = (!waits.is_empty()).then(|| waits.iter().sum());
    workers
}
