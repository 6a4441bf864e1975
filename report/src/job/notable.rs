//! The steps of a job that matter: the few a view of a large job shows in
//! detail, while every step keeps its row in the table. A job of 10,000
//! short steps (a build's actions) shown in full is a report per step; the
//! reader looks for the longest, the heaviest, the ones that failed or were
//! cut short and the one the job's verdict blames.
//!
//! ```
//! use stepmon_report::job::notable::{Why, notable};
//! use stepmon_report::job::table::job;
//!
//! // An empty job has no step that matters.
//! assert!(notable(&job(&[], &[]), &[], 10).is_empty());
//! assert_eq!(Why::Failed.words(), "failed");
//! ```

use super::Entry;
use super::table::{Job, Row};

/// How many steps each ranking (wall time, CPU, memory peak) keeps by
/// default: the build report's number ([`crate::build`]'s views use the
/// same).
pub const TOP: usize = 10;

/// How many steps of each unranked kind (failed, interrupted, with an
/// event) are kept at most, in start order: a job where thousands failed
/// shows the first ones in detail and marks the rest in its table.
pub const MOST_OF_A_KIND: usize = 100;

/// Why a step matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Why {
    /// Among the longest by wall time.
    Longest,
    /// Among those with the most CPU time.
    MostCpu,
    /// Among those with the highest memory peak.
    HighestPeak,
    /// It ended with a status other than 0, or could not run.
    Failed,
    /// Its record has no end ([`super::StepStatus::Interrupted`]).
    Interrupted,
    /// The job's verdict names it (memory-bound).
    NamedByVerdict,
    /// It has an event (its memory near what bounds it).
    Event,
}

impl Why {
    /// The reason in a few words.
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            Why::Longest => "among the longest",
            Why::MostCpu => "among those with the most CPU",
            Why::HighestPeak => "among the highest memory peaks",
            Why::Failed => "failed",
            Why::Interrupted => "interrupted",
            Why::NamedByVerdict => "named by the job's verdict",
            Why::Event => "an event",
        }
    }
}

/// A step that matters: its row and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Notable {
    /// Its index in [`Job::steps`].
    pub row: usize,
    /// Why it matters, in the order of [`Why`].
    pub why: Vec<Why>,
}

/// The indices of `items` by `key`, the largest first (equal ones in their
/// order); those without it (or NaN) last, in their order.
#[must_use]
pub fn ranked<T>(items: &[T], key: impl Fn(&T) -> Option<f64>) -> Vec<usize> {
    let value = |i: usize| key(&items[i]).filter(|v| !v.is_nan());
    let mut keyed: Vec<(Option<f64>, usize)> = (0..items.len()).map(|i| (value(i), i)).collect();
    keyed.sort_by(|(x, a), (y, b)| match (x, y) {
        (Some(x), Some(y)) => y.total_cmp(x).then(a.cmp(b)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    });
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// A number a ranking orders the rows by.
type Key = fn(&Row) -> Option<f64>;
/// Whether a row is of a kind that matters.
type Kind<'a> = dyn Fn(&Row) -> bool + 'a;

/// Whether `row` failed: it ended with a status other than 0 or could not run.
#[must_use]
pub fn failed(row: &Row) -> bool {
    row.status == "notRun" || (row.status == "ended" && row.exit_code != Some(0))
}

/// The steps of `job` (made of `entries`) that matter, in the table's
/// order: the `top` longest, the `top` with the most CPU, the `top` with
/// the highest memory peak, the step the job's verdict names, and the first
/// [`MOST_OF_A_KIND`] that failed, that were interrupted and that have an
/// event.
#[must_use]
#[allow(clippy::cast_precision_loss)]
pub fn notable(job: &Job, entries: &[Entry], top: usize) -> Vec<Notable> {
    let mut why: Vec<Vec<Why>> = vec![Vec::new(); job.steps.len()];
    let rankings: [(Why, Key); 3] = [
        (Why::Longest, |r| r.wall_seconds),
        (Why::MostCpu, |r| r.cpu_seconds),
        (Why::HighestPeak, |r| r.memory_peak_bytes.filter(|_| !r.memory_not_own).map(|b| b as f64)),
    ];
    for (reason, key) in rankings {
        // Only steps that have the number rank: a ranking of dashes says nothing.
        for i in ranked(&job.steps, key).into_iter().take(top).filter(|i| key(&job.steps[*i]).is_some()) {
            why[i].push(reason);
        }
    }
    let kinds: [(Why, &Kind<'_>); 3] = [
        (Why::Failed, &failed),
        (Why::Interrupted, &|r: &Row| r.status == "interrupted"),
        (Why::Event, &|r: &Row| {
            entries.get(r.entry).is_some_and(|e| e.step.run.as_ref().is_some_and(|run| !run.events.is_empty()))
        }),
    ];
    for (reason, is) in kinds {
        for i in (0..job.steps.len()).filter(|i| is(&job.steps[*i])).take(MOST_OF_A_KIND) {
            why[i].push(reason);
        }
    }
    if let Some(entry) = job.verdict.memory_bound_entry
        && let Some(i) = job.steps.iter().position(|r| r.entry == entry)
    {
        why[i].push(Why::NamedByVerdict);
    }
    why.into_iter()
        .enumerate()
        .filter(|(_, w)| !w.is_empty())
        .map(|(row, mut why)| {
            why.sort_unstable();
            Notable { row, why }
        })
        .collect()
}
