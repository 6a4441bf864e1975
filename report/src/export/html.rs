//! TODO(helper): the html export.

use crate::step::Step;

/// Renders `steps` as html.
#[must_use]
pub fn render(steps: &[Step]) -> String {
    let _ = steps;
    todo!("html export")
}
