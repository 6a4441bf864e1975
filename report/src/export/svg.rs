//! TODO(helper): inline SVG charts.

use crate::step::Step;

/// An SVG chart of `step`'s CPU and memory over time.
#[must_use]
pub fn chart(step: &Step) -> String {
    let _ = step;
    todo!("svg chart")
}
