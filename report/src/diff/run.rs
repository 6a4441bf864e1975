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
    /// Pairs the steps of `before` and `after`: by name and command (steps
    /// of one program differ by command), the n-th of a name and command
    /// with the n-th of the same; then what is left by name alone; when
    /// both sides hold exactly one step they are paired whatever their
    /// names (the diff warns when the commands differ).
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
        let mut paired: Vec<Option<usize>> = vec![None; after.len()];
        let same_command = |b: &Step, a: &Step| b.name == a.name && b.command() == a.command();
        let same_name = |b: &Step, a: &Step| b.name == a.name;
        for same in [&same_command as &dyn Fn(&Step, &Step) -> bool, &same_name] {
            for (a, pair) in after.iter().zip(paired.iter_mut()).filter(|(_, p)| p.is_none()) {
                if let Some(i) = (0..before.len()).find(|&i| !used[i] && same(&before[i], a)) {
                    used[i] = true;
                    *pair = Some(i);
                }
            }
        }
        let mut steps = Vec::new();
        let mut only_after = Vec::new();
        for (a, pair) in after.iter().zip(&paired) {
            match pair {
                Some(i) => steps.push(StepDiff::between(&before[*i], a)),
                None => only_after.push(a.label()),
            }
        }
        let only_before = before.iter().zip(&used).filter(|(_, used)| !**used).map(|(b, _)| b.label()).collect();
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
