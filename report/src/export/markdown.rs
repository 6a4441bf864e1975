//! Markdown for a GitHub Actions job summary (`$GITHUB_STEP_SUMMARY`): per
//! step a heading, how it ended, a table of the key numbers, the verdicts as
//! a list, and its CPU and memory over time as Mermaid charts.
//!
//! # Why Mermaid and not the SVG chart
//!
//! GitHub renders job summaries through its Markdown sanitizer, which
//! removes raw `<svg>` elements (their `<text>` would leak through as loose
//! words) and removes `data:` URIs from images, so neither an inline SVG nor
//! `<img src="data:image/svg+xml;base64,…">` shows up; an image would have to
//! be hosted on the web, which a CI step cannot assume. Reports of this:
//! Lullabot/playwright-drupal#121 dropped base64 screenshots from its
//! `$GITHUB_STEP_SUMMARY` output because "GitHub strips `data:` URIs from
//! rendered Markdown"; github/markup#1840 (data URLs in images are not
//! supported); test-summary/action#58 (its summary SVGs are served from a web
//! service because GitHub Markdown does not allow inline `<svg>`).
//!
//! What job summaries do render is GitHub-flavoured Markdown including
//! ` ```mermaid ` blocks (announced with job summaries in 2022), and Mermaid
//! has line charts (`xychart-beta`). So each chart here is a Mermaid
//! `xychart-beta` block: numbers only (the step's name never goes into it),
//! at most [`MAX_CHART_POINTS`] points (each the largest value of its share of
//! the series, so peaks survive), evenly spaced with each point labelled by
//! its time. The full SVG chart ([`super::svg::chart`]) is in the HTML export,
//! and inline in [`render_with_svg`] (format `markdown-svg`) for renderers
//! that keep inline SVG.
//!
//! All text from the step (its name, verdicts, what was not measured) is
//! escaped for inline Markdown: ASCII punctuation that means something there
//! is backslash-escaped, so `<script>` stays text and `|` cannot end a table
//! cell; line breaks become spaces. Only where a line could start a block
//! (the status paragraph, list items) are a leading `-`, `#`, `>` … and a
//! leading `12.` escaped too; numbers such as `3.80 s` read raw everywhere.

use std::fmt::Write as _;

use super::chart::escape::{markdown_inline as md, markdown_line as md_line};
use super::chart::facts;
use crate::series::{Point, StepSeries};
use crate::step::Step;

/// The most points a Mermaid chart gets.
pub const MAX_CHART_POINTS: usize = 60;

/// Renders `steps` as Markdown for a job summary.
///
/// ```
/// use stepmon_report::{RunDocument, Step};
///
/// let json = r#"{"resourceUsage": {"samples": []}, "sysUsage": [],
///   "stepmon": {"command": ["sh", "-c", "echo a|b"], "exitCode": 7}}"#;
/// let step = Step::from_run(&serde_json::from_str::<RunDocument>(json)?);
/// let markdown = stepmon_report::export::markdown::render(&[step]);
/// assert!(markdown.starts_with("## sh -c 'echo a\\|b'\n"));
/// assert!(markdown.contains("| OOM kills | not measured |"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[must_use]
pub fn render(steps: &[Step]) -> String {
    steps.iter().map(|s| step(s, Charts::Mermaid)).collect::<Vec<_>>().join("\n")
}

/// [`render`] with the SVG chart ([`super::svg::chart`]) inline instead of
/// the Mermaid blocks: for Markdown renderers that keep inline SVG (editors'
/// previews, static site generators), not for GitHub (see the module docs).
#[must_use]
pub fn render_with_svg(steps: &[Step]) -> String {
    steps.iter().map(|s| step(s, Charts::InlineSvg)).collect::<Vec<_>>().join("\n")
}

/// How the charts are drawn.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Charts {
    Mermaid,
    InlineSvg,
}

fn step(step: &Step, charts: Charts) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## {}\n", md(&step.name));
    let _ = writeln!(out, "{}\n", md_line(&facts::status(step)));
    out.push_str("| Measure | Value |\n|:--|:--|\n");
    for f in facts::facts(step) {
        let _ = writeln!(out, "| {} | {} |", md(f.label), md(&f.value));
    }
    out.push_str("\n**Verdicts**\n\n");
    for sentence in step.verdicts().sentences() {
        let _ = writeln!(out, "- {}", md_line(sentence));
    }
    if charts == Charts::InlineSvg {
        // A CommonMark HTML block (type 6: a line starting with `<div>`), so
        // that the SVG's text is not read as Markdown; the block ends at the
        // first blank line, so the SVG must not have one.
        out.push_str("\n<div class=\"stepmon-chart-block\">\n");
        for line in super::svg::chart(step).lines().filter(|l| !l.trim().is_empty()) {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("</div>\n");
    } else {
        let series = StepSeries::of(step);
        #[allow(clippy::cast_precision_loss)]
        let mib = |v: f64| v / (1024.0 * 1024.0);
        for (title, unit, points, scale) in [
            ("CPU", "cores", &series.cpu_cores, (|v| v) as fn(f64) -> f64),
            ("Memory in use", "MiB", &series.memory_bytes, mib as fn(f64) -> f64),
        ] {
            out.push('\n');
            out.push_str(&chart(title, unit, points, scale));
        }
    }
    let not_measured: Vec<&String> = step.run.iter().flat_map(|r| &r.not_measured).collect();
    if !not_measured.is_empty() {
        out.push_str("\n**Not measured**\n\n");
        for item in not_measured {
            let _ = writeln!(out, "- {}", md_line(item));
        }
    }
    out
}

/// At most [`MAX_CHART_POINTS`] points of `points`: consecutive runs merged
/// into their largest value at the run's last time.
fn thin(points: &[Point]) -> Vec<Point> {
    let finite: Vec<Point> = points.iter().copied().filter(|p| p.t.is_finite() && p.value.is_finite()).collect();
    if finite.len() <= MAX_CHART_POINTS {
        return finite;
    }
    let per = finite.len().div_ceil(MAX_CHART_POINTS);
    finite
        .chunks(per)
        .filter_map(|run| {
            let last = run.last()?;
            Some(Point { t: last.t, value: run.iter().map(|p| p.value).fold(f64::MIN, f64::max) })
        })
        .collect()
}

/// A Mermaid line chart of `points` (values mapped by `scale` into `unit`),
/// or a sentence saying why there is none.
fn chart(title: &str, unit: &str, points: &[Point], scale: fn(f64) -> f64) -> String {
    let points = thin(points);
    match points.len() {
        0 => return format!("*{title} over time: not measured.*\n"),
        1 => return format!("*{title} over time: one interval only, no chart (see the table).*\n"),
        _ => {}
    }
    let values: Vec<f64> = points.iter().map(|p| scale(p.value)).collect();
    let top = values.iter().copied().fold(0.0, f64::max);
    let top = if top > 0.0 { top * 1.1 } else { 1.0 };
    let times: Vec<String> = points.iter().map(|p| format!("\"{:.2} s\"", p.t)).collect();
    let values: Vec<String> = values.iter().map(|v| format!("{v:.3}")).collect();
    format!(
        "```mermaid\nxychart-beta\n    title \"{title} ({unit})\"\n    x-axis \"time since the step started\" [{}]\n    \
         y-axis \"{unit}\" 0 --> {top:.3}\n    line [{}]\n```\n",
        times.join(", "),
        values.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_keeps_peaks_and_bounds_the_size() {
        let points: Vec<Point> =
            (0..1000).map(|i| Point { t: f64::from(i), value: if i == 500 { 99.0 } else { 1.0 } }).collect();
        let thinned = thin(&points);
        assert!(thinned.len() <= MAX_CHART_POINTS);
        assert!(thinned.iter().any(|p| p.value == 99.0));
        assert_eq!(thinned.last().map(|p| p.t), Some(999.0));
    }

    #[test]
    fn charts_need_two_points() {
        let one = [Point { t: 1.0, value: 0.5 }];
        assert!(chart("CPU", "cores", &[], |v| v).contains("not measured"));
        assert!(chart("CPU", "cores", &one, |v| v).contains("no chart"));
        let two = [Point { t: 1.0, value: 0.5 }, Point { t: 2.0, value: f64::NAN }, Point { t: 3.0, value: 1.0 }];
        let text = chart("CPU", "cores", &two, |v| v);
        assert!(text.contains("line [0.500, 1.000]"), "{text}");
        assert!(!text.contains("NaN"));
    }
}
