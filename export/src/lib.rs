//! stepmon's recorded steps and CI jobs in the formats people and tools
//! read, chosen with `--format`: the human summary, JSON, Chrome trace
//! event JSON (Perfetto, `chrome://tracing`), OpenMetrics and Prometheus
//! text, Markdown for CI job summaries (charts as Mermaid, which GitHub
//! renders), self-contained HTML and SVG charts drawn here (no chart
//! service); [`trend`] draws one metric over many runs.
//!
//! [`render`] shows steps ([`stepmon_report::Step`]), [`job::render`] a
//! job ([`stepmon_report::job::Entry`]), [`build`] a build's report
//! ([`stepmon_report::build::Build`]). No I/O: values in, text out.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod build;
pub(crate) mod chart;
pub mod escape;
pub mod families;
pub mod html;
pub mod job;
pub mod markdown;
pub mod openmetrics;
mod processes;
pub mod prometheus;
pub mod svg;
pub mod trace;
pub mod trend;

use serde::Serialize;

use stepmon_model::verdict::Verdicts;
use stepmon_report::step::Step;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// The human summary with verdicts.
    Text,
    /// stepmon's JSON: per step its name, origin, wall time, summary and verdicts.
    Json,
    /// Chrome trace event JSON (Perfetto, `chrome://tracing`).
    Trace,
    /// OpenMetrics text exposition (for OpenMetrics scrapers).
    OpenMetrics,
    /// Prometheus text exposition format 0.0.4 (for Pushgateway and
    /// node_exporter's textfile collector).
    Prometheus,
    /// GitLab's metrics report (`artifacts:reports:metrics`): an
    /// OpenMetrics exposition of each step's headline numbers, with labels
    /// that stay the same from run to run, for the merge request's
    /// comparison ([`job::gitlab`]).
    GitlabMetrics,
    /// Markdown for CI job summaries, charts as Mermaid blocks (GitHub
    /// strips inline SVG and `data:` images; see [`markdown`]).
    Markdown,
    /// Markdown with the SVG charts inline, for renderers that keep inline
    /// SVG (not GitHub's).
    MarkdownSvg,
    /// A self-contained HTML page with the SVG charts.
    Html,
    /// The SVG chart (memory, CPU, stall, machine over time) of each step.
    Svg,
}

impl Format {
    /// Every format with its command-line name.
    pub const ALL: [(&'static str, Format); 10] = [
        ("text", Format::Text),
        ("json", Format::Json),
        ("trace", Format::Trace),
        ("openmetrics", Format::OpenMetrics),
        ("prometheus", Format::Prometheus),
        ("gitlab-metrics", Format::GitlabMetrics),
        ("markdown", Format::Markdown),
        ("markdown-svg", Format::MarkdownSvg),
        ("html", Format::Html),
        ("svg", Format::Svg),
    ];
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Format::ALL.iter().find(|(name, _)| *name == s).map(|(_, f)| *f).ok_or_else(|| {
            let names: Vec<&str> = Format::ALL.iter().map(|(n, _)| *n).collect();
            format!("unknown format {s:?}; expected one of {}", names.join(", "))
        })
    }
}

/// One step in the JSON format: its name, labels, origin, times, summary,
/// verdicts and advice (also a BuildKit build's per-step usage).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepJson<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    labels: &'a [stepmon_model::labels::Label],
    origin: &'a stepmon_report::step::Origin,
    start: Option<jiff::Timestamp>,
    end: Option<jiff::Timestamp>,
    wall_seconds: Option<f64>,
    wall_source: stepmon_report::step::WallSource,
    summary: &'a stepmon_model::sample::UsageSummary,
    verdicts: Verdicts,
    /// The advice ([`stepmon_report::advice`]), for steps with per-process records
    /// (with `noAdvice` and its reason when there is none).
    #[serde(skip_serializing_if = "Option::is_none")]
    advice: Option<stepmon_model::advice::Advice>,
}

impl<'a> StepJson<'a> {
    /// The JSON of one step.
    #[must_use]
    pub fn of(s: &'a Step) -> StepJson<'a> {
        StepJson {
            name: &s.name,
            labels: s.run.as_ref().map_or(&[], |r| r.labels.as_slice()),
            origin: &s.origin,
            start: s.start,
            end: s.end,
            wall_seconds: s.wall_seconds,
            wall_source: s.wall_source,
            summary: &s.summary,
            verdicts: s.verdicts(),
            advice: s.run.as_ref().and_then(|r| r.processes.as_ref()).map(|_| s.advice()),
        }
    }
}

/// Renders `steps` in `format`.
#[must_use]
pub fn render(format: Format, steps: &[Step]) -> String {
    match format {
        Format::Text => {
            steps.iter().map(|s| stepmon_report::text::render(s, &s.verdicts())).collect::<Vec<_>>().join("\n")
        }
        Format::Json => {
            let steps: Vec<StepJson<'_>> = steps.iter().map(StepJson::of).collect();
            #[derive(Serialize)]
            struct Steps<'a> {
                steps: Vec<StepJson<'a>>,
            }
            // Serialising plain data structures cannot fail.
            serde_json::to_string_pretty(&Steps { steps }).unwrap_or_default() + "\n"
        }
        Format::Trace => trace::render(steps),
        Format::OpenMetrics => openmetrics::render(steps),
        Format::Prometheus => prometheus::render(steps),
        Format::GitlabMetrics => {
            let entries: Vec<_> =
                steps.iter().map(|s| stepmon_report::job::Entry::of_run(s.clone(), String::new())).collect();
            job::gitlab::render(&entries)
        }
        Format::Markdown => markdown::render(steps),
        Format::MarkdownSvg => markdown::render_with_svg(steps),
        Format::Html => html::render(steps),
        Format::Svg => svg::charts(steps),
    }
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
