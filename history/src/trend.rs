//! The history of each metric of a step: every stored run judged by the
//! gate against the runs before it (`stepmon baseline show`), so that a
//! chart can draw the band the gate expected each run in and mark the runs
//! it flagged.

use std::collections::{BTreeMap, VecDeque};

use jiff::Timestamp;
use serde::Serialize;

use crate::check::{Baseline, Policy, Verdict, judge};
use crate::metric::{Family, Unit, family_of};
use crate::record::{Machine, RunKey, RunRecord};

/// One run of a metric's trend.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TrendRun {
    /// When it ran.
    pub time: Timestamp,
    /// Its commit, when known.
    pub commit: Option<String>,
    /// Whether its machine was busy.
    pub machine: Machine,
    /// Its value.
    pub value: f64,
    /// What the gate said of it against the runs before it.
    pub verdict: Verdict,
    /// The baseline it was judged by, when there were runs enough.
    pub baseline: Option<Baseline>,
    /// Whether it ran on a busy machine and the metric depends on that: it
    /// is left out of later baselines and its regression fails no gate.
    pub busy_run: bool,
}

/// One metric of a step over its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricTrend {
    /// The metric's name.
    pub metric: String,
    /// Its family.
    pub family: Family,
    /// Its unit.
    pub unit: Unit,
    /// Runs that measured it, in the whole history.
    pub total_runs: usize,
    /// The last runs (at most the `last` asked for), oldest first.
    pub runs: Vec<TrendRun>,
}

impl MetricTrend {
    /// How many of [`MetricTrend::runs`] have `verdict`.
    #[must_use]
    pub fn count(&self, verdict: Verdict) -> usize {
        self.runs.iter().filter(|r| r.verdict == verdict && !r.busy_run).count()
    }
}

/// One step (key) of the history.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepTrend {
    /// The step and what it is compared by.
    pub key: RunKey,
    /// Its runs in the store.
    pub total_runs: usize,
    /// Each metric, in family order.
    pub metrics: Vec<MetricTrend>,
}

/// Which metrics a trend keeps: a family's (`memory`) or one by name
/// (`memory-peak-bytes`, `command-cpu-seconds:cc1`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum MetricFilter {
    /// Every metric.
    #[default]
    All,
    /// The metrics of one family.
    Family(Family),
    /// One metric.
    Name(String),
}

impl MetricFilter {
    /// A family's name or a metric's.
    #[must_use]
    pub fn parse(text: &str) -> MetricFilter {
        text.parse().map_or_else(|_| MetricFilter::Name(text.to_owned()), MetricFilter::Family)
    }

    fn keeps(&self, metric: &str, family: Family) -> bool {
        match self {
            MetricFilter::All => true,
            MetricFilter::Family(f) => *f == family,
            MetricFilter::Name(name) => name == metric,
        }
    }
}

/// The trends of `runs` (any order, any keys) under `policy`: per key, per
/// metric, each run judged against the `policy.window` runs before it as
/// [`crate::check`] would have judged it then (busy runs left out of the
/// wall, CPU and stall baselines); the last `last` runs kept (0: all).
///
/// ```
/// use stepmon_history::{Machine, Measure, MetricFilter, Policy, RunKey, RunRecord, Verdict, trends};
/// let run = |i: i64, peak_mib: f64| RunRecord {
///     key: RunKey { step: "build".into(), ..RunKey::default() },
///     branch: None, commit: Some(format!("c{i}")), machine: Machine::Quiet,
///     time: jiff::Timestamp::from_second(1_800_000_000 + i).unwrap(),
///     measures: vec![Measure { metric: "memory-peak-bytes".into(), value: peak_mib * 1048576.0 }],
///     content_key: i.to_string(),
/// };
/// let mut runs: Vec<RunRecord> = (0..20).map(|i| run(i, 100.0 + (i % 3) as f64 * 0.2)).collect();
/// runs.push(run(20, 130.0));
/// let steps = trends(&runs, &Policy::default(), &MetricFilter::All, 0);
/// let memory = &steps[0].metrics[0];
/// assert_eq!(memory.runs.len(), 21);
/// assert_eq!(memory.runs[20].verdict, Verdict::Regression);
/// assert_eq!(memory.count(Verdict::Regression), 1);
/// ```
#[must_use]
pub fn trends(runs: &[RunRecord], policy: &Policy, filter: &MetricFilter, last: usize) -> Vec<StepTrend> {
    let mut by_key: BTreeMap<&RunKey, Vec<&RunRecord>> = BTreeMap::new();
    for run in runs {
        by_key.entry(&run.key).or_default().push(run);
    }
    let mut memo = Vec::new();
    by_key
        .into_iter()
        .map(|(key, mut runs)| {
            runs.sort_by(|a, b| a.time.cmp(&b.time).then_with(|| a.content_key.cmp(&b.content_key)));
            let mut names: Vec<(Family, &str)> = Vec::new();
            for run in &runs {
                for m in &run.measures {
                    if let Some(family) = family_of(&m.metric)
                        && filter.keeps(&m.metric, family)
                        && !names.iter().any(|(_, n)| *n == m.metric)
                    {
                        names.push((family, &m.metric));
                    }
                }
            }
            // Family order (Family::ALL), the step's own metric before the
            // commands', then by name.
            names.sort_by_key(|(family, name)| (*family, name.contains(':'), *name));
            let metrics = names
                .into_iter()
                .map(|(family, name)| metric_trend(&runs, name, family, policy, last, &mut memo))
                .collect();
            StepTrend { key: key.clone(), total_runs: runs.len(), metrics }
        })
        .collect()
}

fn metric_trend(
    runs: &[&RunRecord],
    metric: &str,
    family: Family,
    policy: &Policy,
    last: usize,
    memo: &mut Vec<Option<f64>>,
) -> MetricTrend {
    let measured: Vec<(&RunRecord, f64)> = runs.iter().filter_map(|r| Some((*r, r.value(metric)?))).collect();
    let keep_from = if last == 0 { 0 } else { measured.len().saturating_sub(last) };
    let sensitive = family.busy_sensitive();
    let mut window: VecDeque<f64> = VecDeque::with_capacity(policy.window + 1);
    let mut baseline: Vec<f64> = Vec::with_capacity(policy.window);
    let mut out = Vec::with_capacity(measured.len() - keep_from);
    // The threshold of a family is the same for every run, but the memo of
    // t quantiles is per threshold: clear it when the family changes.
    memo.clear();
    for (i, (run, value)) in measured.iter().enumerate() {
        if i >= keep_from {
            baseline.clear();
            baseline.extend(window.iter());
            let (verdict, judged) = judge(&baseline, *value, family, policy, memo);
            out.push(TrendRun {
                time: run.time,
                commit: run.commit.clone(),
                machine: run.machine,
                value: *value,
                verdict,
                baseline: judged,
                busy_run: sensitive && run.machine == Machine::Busy,
            });
        }
        if !(sensitive && run.machine == Machine::Busy) {
            window.push_back(*value);
            if window.len() > policy.window {
                window.pop_front();
            }
        }
    }
    MetricTrend { metric: metric.to_owned(), family, unit: family.unit(), total_runs: measured.len(), runs: out }
}
