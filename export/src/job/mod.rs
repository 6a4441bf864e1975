//! A CI job (`stepmon_report::job`) in every `--format` beyond text and JSON: the same table
//! (a row per step by start) and timeline (lanes for overlapping steps, gaps, the
//! machine's samples once) in Markdown, HTML,
//! a Chrome trace, SVG and the fleet expositions. Interrupted steps read as
//! interrupted and cached steps as cached in every one, with dashes (or no
//! sample at all, in the expositions) for what they lack.

pub mod gitlab;
pub mod html;
pub mod markdown;
pub mod metrics;
pub mod section;
pub mod svg;
pub(crate) mod timeline;
mod timeline_lanes;
mod timeline_svg;
pub mod trace;

use stepmon_report::job::{Entry, render as text, to_json};

use crate::Format;

/// The job of `entries` in `format`, with `notes` (lost lines and the like:
/// the text, JSON, Markdown and HTML show them; the others have no place
/// for them, and the caller shows them beside).
#[must_use]
pub fn render(format: Format, entries: &[Entry], notes: &[String]) -> String {
    match format {
        Format::Text => text(entries, notes),
        Format::Json => to_json(entries, notes),
        Format::Markdown | Format::MarkdownSvg => markdown::render(entries, notes),
        Format::Html => html::render(entries, notes),
        Format::Svg => svg::render(entries),
        Format::Trace => trace::render(entries),
        Format::OpenMetrics => metrics::openmetrics(entries),
        Format::Prometheus => metrics::prometheus(entries),
        Format::GitlabMetrics => gitlab::render(entries),
    }
}
