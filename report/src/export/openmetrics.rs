//! TODO(helper): the openmetrics export.

use crate::step::Step;

/// Renders `steps` as openmetrics.
#[must_use]
pub fn render(steps: &[Step]) -> String {
    let _ = steps;
    todo!("openmetrics export")
}
