//! TODO(helper): the trace export.

use crate::step::Step;

/// Renders `steps` as trace.
#[must_use]
pub fn render(steps: &[Step]) -> String {
    let _ = steps;
    todo!("trace export")
}
