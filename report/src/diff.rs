//! TODO(helper): `stepmon diff`.

use serde::Serialize;

use crate::step::Step;

/// Two runs of the same step compared field by field.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StepDiff {}

impl StepDiff {
    /// Compares `before` with `after`.
    #[must_use]
    pub fn between(before: &Step, after: &Step) -> StepDiff {
        let _ = (before, after);
        todo!("diff")
    }

    /// For people.
    #[must_use]
    pub fn render_text(&self) -> String {
        todo!("diff text")
    }
}
