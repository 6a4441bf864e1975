//! A run's metrics judged against the baseline of its comparable runs.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::metric::{Family, Unit, family_of};
use crate::record::{Machine, RunKey, RunRecord};
use crate::stats::{Test, mean, sd};

/// The largest `--min-runs` accepted.
pub const MAX_MIN_RUNS: usize = 10;

/// How runs are judged: the test, its thresholds, the window and what
/// fails the gate. [`Policy::default`] holds the defaults
/// docs/baselines.md justifies from the noise measured there.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Policy {
    /// The test.
    pub test: Test,
    /// Thresholds per family replacing the test's defaults.
    pub thresholds: BTreeMap<Family, f64>,
    /// Changes smaller than these (per family, in its unit) are never flagged.
    pub floors: BTreeMap<Family, f64>,
    /// The baseline: at most this many of the last comparable runs.
    pub window: usize,
    /// Fewer comparable runs than this: "not enough history" (at most
    /// [`MAX_MIN_RUNS`]).
    pub min_runs: usize,
    /// A regression of these fails the gate.
    pub fail_on: Vec<Family>,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            test: Test::T,
            thresholds: BTreeMap::new(),
            floors: Family::ALL.into_iter().map(|f| (f, default_floor(f))).collect(),
            window: 30,
            min_runs: 5,
            fail_on: vec![Family::Memory, Family::Cpu],
        }
    }
}

/// The change below which a family is never flagged: 20 ms of CPU, 100 ms
/// of wall, 4 MiB of memory, 1 MiB of IO, 50 ms of stall, 1 task.
#[must_use]
pub fn default_floor(family: Family) -> f64 {
    match family {
        Family::Cpu => 0.020,
        Family::Wall => 0.100,
        Family::Memory => 4.0 * 1024.0 * 1024.0,
        Family::Io => 1024.0 * 1024.0,
        Family::Stall => 0.050,
        Family::Pids => 2.0,
    }
}

/// The threshold `test` uses for `family` unless told otherwise
/// (docs/baselines.md: why).
#[must_use]
pub fn default_threshold(test: Test, family: Family) -> f64 {
    match test {
        Test::Percent => match family {
            Family::Memory | Family::Io | Family::Pids => 5.0,
            Family::Cpu => 8.0,
            Family::Wall => 30.0,
            Family::Stall => 150.0,
        },
        Test::Z => 4.0,
        Test::T => 0.01,
        Test::Iqr => 3.0,
    }
}

impl Policy {
    /// The threshold of `family`.
    #[must_use]
    pub fn threshold(&self, family: Family) -> f64 {
        self.thresholds.get(&family).copied().unwrap_or_else(|| default_threshold(self.test, family))
    }

    /// The floor of `family`.
    #[must_use]
    pub fn floor(&self, family: Family) -> f64 {
        self.floors.get(&family).copied().unwrap_or_else(|| default_floor(family))
    }
}

/// What a metric's value says against its baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    /// Above the baseline's interval by more than the floor.
    Regression,
    /// Below it by more than the floor.
    Improvement,
    /// Inside it, or closer to the mean than the floor.
    WithinNoise,
    /// Fewer comparable runs than the minimum.
    NotEnoughHistory,
}

impl Verdict {
    /// In words.
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::WithinNoise => "within noise",
            Verdict::NotEnoughHistory => "not enough history",
        }
    }
}

/// One metric of the run judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MetricCheck {
    /// The metric's name (`memory-peak-bytes`, `command-cpu-seconds:cc1`).
    pub metric: String,
    /// Its family.
    pub family: Family,
    /// Its unit.
    pub unit: Unit,
    /// This run's value.
    pub value: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// The test and its threshold.
    pub test: Test,
    /// The threshold (in [`Test::threshold_meaning`]'s terms).
    pub threshold: f64,
    /// The floor.
    pub floor: f64,
    /// Runs in the baseline.
    pub runs: usize,
    /// Runs the test needs.
    pub min_runs: usize,
    /// Busy runs left out of this baseline.
    pub busy_left_out: usize,
    /// The baseline's mean, standard deviation and interval, when there
    /// were runs enough.
    pub baseline: Option<Baseline>,
    /// The baseline's values, oldest first, then this run's (the trend).
    pub trend: Vec<f64>,
    /// Whether this run's machine was busy and the family depends on it:
    /// its regression does not fail the gate.
    pub busy_run: bool,
}

/// The numbers a verdict was reached from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Baseline {
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation.
    pub sd: f64,
    /// Lower end of the interval the value was expected in.
    pub lower: f64,
    /// Upper end.
    pub upper: f64,
    /// (value - mean) / mean, %.
    pub change_percent: f64,
}

/// One step of a run judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepCheck {
    /// The step and what it was compared by.
    pub key: RunKey,
    /// Whether this run's machine was busy.
    pub machine: Machine,
    /// Each metric.
    pub metrics: Vec<MetricCheck>,
}

/// A run's steps judged, and whether the gate fails.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckReport {
    /// Each step.
    pub steps: Vec<StepCheck>,
    /// The families whose regressions fail the gate.
    pub fail_on: Vec<Family>,
    /// Whether one of them regressed.
    pub failed: bool,
}

impl CheckReport {
    /// The report of `steps` under `policy`.
    #[must_use]
    pub fn new(steps: Vec<StepCheck>, policy: &Policy) -> CheckReport {
        let failed = steps
            .iter()
            .flat_map(|s| &s.metrics)
            .any(|m| m.verdict == Verdict::Regression && !m.busy_run && policy.fail_on.contains(&m.family));
        CheckReport { steps, fail_on: policy.fail_on.clone(), failed }
    }
}

/// `run` judged against `history` (its comparable runs, any order; `run`
/// itself, by content key, and other keys are left out) under `policy`.
///
/// ```
/// use stepmon_history::{Machine, Policy, RunKey, RunRecord, Measure, Verdict, check};
/// let run = |at: i64, peak_mib: f64| RunRecord {
///     key: RunKey { step: "build".into(), ..RunKey::default() },
///     branch: None,
///     time: jiff::Timestamp::from_second(at).unwrap(),
///     commit: None,
///     machine: Machine::Quiet,
///     measures: vec![Measure { metric: "memory-peak-bytes".into(), value: peak_mib * 1048576.0 }],
///     content_key: at.to_string(),
/// };
/// let history: Vec<RunRecord> = (0..10).map(|i| run(i, 100.0 + (i % 3) as f64 * 0.2)).collect();
/// let judged = check(&run(100, 130.0), &history, &Policy::default());
/// assert_eq!(judged.metrics[0].verdict, Verdict::Regression);
/// let judged = check(&run(101, 100.2), &history, &Policy::default());
/// assert_eq!(judged.metrics[0].verdict, Verdict::WithinNoise);
/// ```
#[must_use]
pub fn check(run: &RunRecord, history: &[RunRecord], policy: &Policy) -> StepCheck {
    let mut comparable: Vec<&RunRecord> =
        history.iter().filter(|r| r.key == run.key && r.content_key != run.content_key).collect();
    // Newest first.
    comparable.sort_by_key(|r| std::cmp::Reverse(r.time));
    let metrics = run
        .measures
        .iter()
        .filter_map(|m| {
            let family = family_of(&m.metric)?;
            Some(check_metric(&m.metric, family, m.value, run.machine, &comparable, policy))
        })
        .collect();
    StepCheck { key: run.key.clone(), machine: run.machine, metrics }
}

fn check_metric(
    metric: &str,
    family: Family,
    value: f64,
    machine: Machine,
    newest_first: &[&RunRecord],
    policy: &Policy,
) -> MetricCheck {
    let leave_out_busy = family.busy_sensitive();
    let mut busy_left_out = 0;
    let mut values: Vec<f64> = Vec::new();
    for run in newest_first {
        if values.len() == policy.window {
            break;
        }
        let Some(v) = run.value(metric) else { continue };
        if leave_out_busy && run.machine == Machine::Busy {
            busy_left_out += 1;
            continue;
        }
        values.push(v);
    }
    values.reverse();
    let (threshold, floor) = (policy.threshold(family), policy.floor(family));
    let min_runs = policy.min_runs.clamp(2, MAX_MIN_RUNS);
    let (verdict, baseline) = judge(&values, value, family, policy, &mut Vec::new());
    let mut trend = values.clone();
    trend.push(value);
    MetricCheck {
        metric: metric.to_owned(),
        family,
        unit: family.unit(),
        value,
        verdict,
        test: policy.test,
        threshold,
        floor,
        runs: values.len(),
        min_runs,
        busy_left_out,
        baseline,
        trend,
        busy_run: machine == Machine::Busy && leave_out_busy,
    }
}

/// `value` against `values` (the baseline, oldest first) under `policy`:
/// the verdict and, with runs enough, the baseline's numbers. `memo` keeps
/// the test's quantiles between calls ([`Test::bounds`]).
pub(crate) fn judge(
    values: &[f64],
    value: f64,
    family: Family,
    policy: &Policy,
    memo: &mut Vec<Option<f64>>,
) -> (Verdict, Option<Baseline>) {
    let (threshold, floor) = (policy.threshold(family), policy.floor(family));
    if values.len() < policy.min_runs.clamp(2, MAX_MIN_RUNS) {
        return (Verdict::NotEnoughHistory, None);
    }
    let (lower, upper) = policy.test.bounds_memo(values, threshold, memo);
    let m = mean(values);
    let beyond_floor = (value - m).abs() >= floor;
    let verdict = if value > upper && beyond_floor {
        Verdict::Regression
    } else if value < lower && beyond_floor {
        Verdict::Improvement
    } else {
        Verdict::WithinNoise
    };
    let change_percent = if m == 0.0 { 0.0 } else { (value - m) / m.abs() * 100.0 };
    // Every metric is a cost: the interval shown starts at 0 at least.
    (verdict, Some(Baseline { mean: m, sd: sd(values), lower: lower.max(0.0), upper, change_percent }))
}
