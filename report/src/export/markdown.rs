//! TODO(helper): the markdown export.

use crate::step::Step;

/// Renders `steps` as markdown.
#[must_use]
pub fn render(steps: &[Step]) -> String {
    let _ = steps;
    todo!("markdown export")
}
