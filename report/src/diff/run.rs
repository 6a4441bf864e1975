//! Several steps before and after (e.g. two BuildKit builds), paired by
//! name.

use serde::Serialize;

use crate::step::Step;

use super::{DiffVerdict, JobTotals, StepDiff, TotalsDiff};

/// Several steps before and after (e.g. two BuildKit builds), paired by name.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RunDiff {
    /// The diff of each pair of steps with the same name, in `after` order.
    pub steps: Vec<StepDiff>,
    /// Steps only in the `before` input.
    pub only_before: Vec<String>,
    /// Steps only in the `after` input.
    pub only_after: Vec<String>,
    /// The two jobs' totals (wall, CPU, peak memory), when both sides are
    /// jobs ([`RunDiff::with_totals`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub totals: Option<TotalsDiff>,
}

impl RunDiff {
    /// Pairs the steps of `before` and `after`: by name (the command), the
    /// n-th of a name with the n-th of the same name; when both sides hold
    /// exactly one step they are paired whatever their names (the diff
    /// warns when the commands differ).
    #[must_use]
    pub fn between(before: &[Step], after: &[Step]) -> RunDiff {
        if let ([b], [a]) = (before, after) {
            return RunDiff {
                steps: vec![StepDiff::between(b, a)],
                only_before: Vec::new(),
                only_after: Vec::new(),
                totals: None,
            };
        }
        let mut used = vec![false; before.len()];
        let mut steps = Vec::new();
        let mut only_after = Vec::new();
        for a in after {
            let found = before.iter().zip(used.iter_mut()).find(|(b, used)| !**used && b.name == a.name);
            match found {
                Some((b, used)) => {
                    *used = true;
                    steps.push(StepDiff::between(b, a));
                }
                None => only_after.push(a.name.clone()),
            }
        }
        let only_before = before.iter().zip(&used).filter(|(_, used)| !**used).map(|(b, _)| b.name.clone()).collect();
        RunDiff { steps, only_before, only_after, totals: None }
    }

    /// The same diff with the two jobs' totals compared too.
    #[must_use]
    pub fn with_totals(mut self, before: JobTotals, after: JobTotals) -> RunDiff {
        self.totals = Some(TotalsDiff::between(before, after));
        self
    }

    /// Whether a step, or the job's totals, got heavier beyond the noise
    /// (what `--fail-if-heavier` gates on).
    #[must_use]
    pub fn heavier(&self) -> bool {
        self.steps.iter().any(|s| matches!(s.verdict, DiffVerdict::Heavier | DiffVerdict::Mixed))
            || self.totals.as_ref().is_some_and(TotalsDiff::heavier)
    }
}
