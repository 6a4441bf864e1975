//! The table of the step's top commands (per-process records) in the
//! Markdown and HTML reports.

mod html;
mod markdown;
mod table;

pub(crate) use html::html_table;
pub(crate) use markdown::markdown_table;
