//! The builds of a bundle in every `--format`: text and JSON are the
//! build report ([`super::render`], [`super::to_json`]); the others are the
//! job views of the builds' steps ([`super::entries`]: a BuildKit build is
//! a job of BuildKit steps, each platform a group — one process in the
//! trace), the Markdown and HTML with each build's summary on top
//! ([`super::summary`]: counts, critical path, per-platform totals), the
//! expositions with each build's families after the job's
//! ([`super::metrics`]).

use super::build::Build;
use stepmon_export::job as views;
use stepmon_export::{Format, openmetrics, prometheus};
use stepmon_report::job;

/// The builds in `format`.
#[must_use]
pub fn render(format: Format, builds: &[Build]) -> String {
    let entries = || -> Vec<job::Entry> { builds.iter().flat_map(super::entries).collect() };
    // Each build's notice (why it has no per-step usage) as a job note.
    let notes = || -> Vec<String> {
        builds.iter().filter_map(|b| b.notice.as_ref().map(|n| format!("{}: {n}", b.reference))).collect()
    };
    match format {
        Format::Text => super::render(builds),
        Format::Json => super::to_json(builds),
        Format::Markdown | Format::MarkdownSvg => {
            views::markdown::render_with(&entries(), &notes(), &super::summary::sections(builds))
        }
        Format::Html => views::html::render_with(&entries(), &notes(), &super::summary::sections(builds)),
        Format::OpenMetrics | Format::Prometheus => {
            let mut families = views::metrics::all(&entries());
            families.extend(super::metrics::families(builds));
            if format == Format::OpenMetrics { openmetrics::frame(families) } else { prometheus::frame(families) }
        }
        // SVG, the trace, and any format without a build view of its own:
        // the job's.
        format => views::render(format, &entries(), &notes()),
    }
}
