//! Pieces the chart-drawing exports share: escaping for XML and Markdown,
//! axis scales with human tick labels, and the table of facts per step.

pub(crate) mod facts;
pub(crate) mod scale;
