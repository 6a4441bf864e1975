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
//! `xychart-beta` block: numbers only (the step's name never goes into it).
//! Mermaid spaces the x points of a line chart evenly whatever their labels
//! say, so the samples (taken at uneven times) are resampled onto an even
//! time grid first: one point per bucket of a round width (1, 2 or 5 × 10ⁿ
//! s, at most [`MAX_CHART_POINTS`] buckets, the width in the title),
//! labelled with the bucket's end. A gauge (memory in use) shows the last
//! sample at or before the bucket's end, so a peak between two bucket ends
//! may not show (the table has the peak); a rate (CPU cores) shows the rate
//! over the bucket: the time-weighted mean of the sample intervals' rates
//! over the part of the bucket they cover. The full SVG chart ([`super::svg::chart`]) is in the HTML export,
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

use super::chart::facts;
use super::chart::scale::nice_step;
use crate::escape::{markdown_inline as md, markdown_line as md_line};
use stepmon_report::series::{Point, StepSeries};
use stepmon_report::step::Step;

/// The most points (time buckets) a Mermaid chart gets.
pub const MAX_CHART_POINTS: usize = 60;

/// Renders `steps` as Markdown for a job summary.
///
/// ```
/// use stepmon_model::document::RunDocument;
/// use stepmon_report::Step;
///
/// let json = r#"{"resourceUsage": {"samples": []}, "sysUsage": [],
///   "stepmon": {"command": ["sh", "-c", "echo a|b"], "exitCode": 7}}"#;
/// let step = Step::from_run(&serde_json::from_str::<RunDocument>(json)?);
/// let markdown = stepmon_export::markdown::render(&[step]);
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
    let _ = writeln!(out, "## {}\n", md(&stepmon_report::step::elide(&step.name)));
    let _ = writeln!(out, "{}\n", md_line(&facts::status(step)));
    out.push_str("| Measure | Value |\n|:--|:--|\n");
    for f in facts::facts(step) {
        let _ = writeln!(out, "| {} | {} |", md(f.label), md(&f.value));
    }
    out.push_str("\n**Verdicts**\n\n");
    for sentence in step.verdicts().sentences() {
        let _ = writeln!(out, "- {}", md_line(sentence));
    }
    if let Some(advice) = step.advice().parallelism.filter(|p| p.suggested_jobs.is_some()) {
        let _ = writeln!(out, "\n**Advice**\n\n- {}", md_line(&advice.reason));
    }
    if let Some(p) = step.run.as_ref().and_then(|r| r.processes.as_ref()) {
        out.push_str(&crate::processes::markdown_table(p, step.summary.cpu.usage_seconds));
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
        let cpu = Kind::Rate { start: step.first_reading(|s| s.cpu_stat.and_then(|c| c.usage_nanos).is_some()) };
        for (title, unit, points, kind, scale) in [
            ("CPU", "cores", &series.cpu_cores, cpu, (|v| v) as fn(f64) -> f64),
            ("Memory in use", "MiB", &series.memory_bytes, Kind::Gauge, mib as fn(f64) -> f64),
        ] {
            out.push('\n');
            out.push_str(&chart(title, unit, points, kind, scale));
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

/// How a series' points stand for the time between them.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// A reading at each point's time (memory in use).
    Gauge,
    /// The rate over each interval between two counter readings, at the
    /// interval's end ([`stepmon_report::series`]): the first point's interval starts
    /// at `start` (the first reading), each later one at the point before.
    Rate {
        /// When the first reading was taken (seconds since the start).
        start: Option<f64>,
    },
}

/// A series on an even time grid: bucket `k` is `((k - 1) × width, k × width]`,
/// its point at `k × width`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Grid {
    pub(crate) width: f64,
    pub(crate) points: Vec<Point>,
}

/// Slack for comparing times with grid times (`k × width` is not exact in
/// binary), as a share of the bucket width.
pub(crate) const SLACK: f64 = 1e-9;

/// The bucket ends covering `from..=to` for `width`: the first bucket ends
/// at or after `from` (`first_open`: strictly after, for intervals that
/// start at `from`), the last at or after `to`.
#[allow(clippy::cast_possible_truncation)]
pub(crate) fn bucket_range(from: f64, to: f64, width: f64, first_open: bool) -> std::ops::RangeInclusive<i64> {
    let first = if first_open { (from / width + SLACK).floor() + 1.0 } else { (from / width - SLACK).ceil() };
    // Both are whole numbers of at most a few hundred buckets from zero
    // (the span is at most MAX_CHART_POINTS widths).
    first as i64..=(to / width - SLACK).ceil() as i64
}

/// `points` of `kind` resampled onto an even grid of at most
/// [`MAX_CHART_POINTS`] buckets; `None` when they span no time or a bucket
/// has no interval in it (a rate with a gap).
#[allow(clippy::cast_precision_loss)]
fn resample(points: &[Point], kind: Kind) -> Option<Grid> {
    // Each point as (start, end, value): a gauge's reading holds from its
    // time on; a rate's over the interval up to its time.
    let mut previous = match kind {
        Kind::Rate { start } => start.or_else(|| points.first().map(|p| p.t)),
        Kind::Gauge => None,
    };
    let mut spans = Vec::with_capacity(points.len());
    for p in points.iter().filter(|p| p.t.is_finite()) {
        let start = previous.unwrap_or(p.t);
        previous = Some(p.t);
        if p.value.is_finite() {
            spans.push((start, p.t, p.value));
        }
    }
    let from = spans.first()?.0.min(spans.first()?.1);
    let to = spans.last()?.1;
    // Finite (the spans are), so this is the "no time spanned" case.
    if to <= from {
        return None;
    }
    let mut width = nice_step((to - from) / MAX_CHART_POINTS as f64);
    let open = matches!(kind, Kind::Rate { .. });
    while bucket_range(from, to, width, open).count() > MAX_CHART_POINTS {
        width = nice_step(width * 1.5);
    }
    let mut out = Vec::new();
    for k in bucket_range(from, to, width, open) {
        // `+ 0.0` turns -0.0 into 0.0 for the label.
        let end = k as f64 * width + 0.0;
        let value = match kind {
            Kind::Gauge => spans.iter().rev().find(|(_, t, _)| *t <= end + SLACK * width)?.2,
            Kind::Rate { .. } => {
                let (mut covered, mut area) = (0.0, 0.0);
                for &(a, b, v) in &spans {
                    let overlap = b.min(end) - a.max(end - width);
                    if overlap > 0.0 {
                        covered += overlap;
                        area += overlap * v;
                    }
                }
                if covered <= 0.0 {
                    return None;
                }
                area / covered
            }
        };
        out.push(Point { t: end, value });
    }
    Some(Grid { width, points: out })
}

/// Decimals that tell grid times of `width` apart (`0.2` → 1, `0.05` → 2).
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn decimals(width: f64) -> usize {
    (-(width.log10() + SLACK).floor()).clamp(0.0, 9.0) as usize
}

/// A Mermaid line chart of `points` (values mapped by `scale` into `unit`)
/// on an even time grid, or a sentence saying why there is none.
fn chart(title: &str, unit: &str, points: &[Point], kind: Kind, scale: fn(f64) -> f64) -> String {
    let finite = points.iter().filter(|p| p.t.is_finite() && p.value.is_finite()).count();
    match finite {
        0 => return format!("*{title} over time: not measured.*\n"),
        1 => return format!("*{title} over time: one interval only, no chart (see the table).*\n"),
        _ => {}
    }
    let Some(grid) = resample(points, kind) else {
        return format!("*{title} over time: the samples leave gaps or span no time, no chart (see the table).*\n");
    };
    xychart(title, unit, "time since the step started", &grid, scale)
}

/// `grid` (values mapped by `scale` into `unit`) as a Mermaid `xychart-beta`
/// block, its x axis titled `axis`: a label per bucket end, the y axis from
/// 0 to a tenth above the highest value.
pub(crate) fn xychart(title: &str, unit: &str, axis: &str, grid: &Grid, scale: fn(f64) -> f64) -> String {
    let values: Vec<f64> = grid.points.iter().map(|p| scale(p.value)).collect();
    let top = values.iter().copied().fold(0.0, f64::max);
    let top = if top > 0.0 { top * 1.1 } else { 1.0 };
    let d = decimals(grid.width);
    let times: Vec<String> = grid.points.iter().map(|p| format!("\"{:.d$} s\"", p.t)).collect();
    // Sums and differences of readings can land a hair below zero: the
    // charts' quantities never do, and `-0.000` reads as a defect.
    let values: Vec<String> = values.iter().map(|v| format!("{:.3}", if *v > 0.0 { *v } else { 0.0 })).collect();
    format!(
        "```mermaid\nxychart-beta\n    title \"{title} ({unit}), one point per {:.d$} s\"\n    \
         x-axis \"{axis}\" [{}]\n    y-axis \"{unit}\" 0 --> {top:.3}\n    line [{}]\n```\n",
        grid.width,
        times.join(", "),
        values.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: f64, value: f64) -> Point {
        Point { t, value }
    }

    /// The grid times and values of `grid`, times rounded to 1e-9 s.
    fn read(grid: &Grid) -> Vec<(f64, f64)> {
        grid.points.iter().map(|p| ((p.t * 1e9).round() / 1e9, p.value)).collect()
    }

    #[test]
    fn gauges_show_the_last_sample_at_or_before_each_bucket_end() {
        // Uneven sample times: 0.25, 0.5, 1.77, then 3.80 s.
        let samples = [at(0.25, 1.0), at(0.5, 2.0), at(1.77, 3.0), at(3.80, 4.0)];
        let grid = resample(&samples, Kind::Gauge).expect("a grid");
        // 3.55 s / 60 → 0.1 s buckets, from the first end at or after 0.25 s
        // to the first at or after 3.80 s: 0.3, 0.4, ..., 3.8.
        assert_eq!(grid.width, 0.1);
        let points = read(&grid);
        assert_eq!(points.len(), 36);
        for (k, (t, value)) in points.iter().enumerate() {
            let end = (3.0 + k as f64) / 10.0;
            assert!((t - end).abs() < 1e-9, "{t} vs {end}");
            let expected = match end {
                e if e < 0.5 - 1e-9 => 1.0,
                e if e < 1.77 => 2.0,
                e if e < 3.8 - 1e-9 => 3.0,
                _ => 4.0,
            };
            assert_eq!(*value, expected, "at {t}");
        }
    }

    #[test]
    fn rates_show_the_mean_rate_over_each_bucket() {
        // Readings at 0, 1.25 and 4 s: 2 cores over (0, 1.25], 4 over (1.25, 4].
        let rates = [at(1.25, 2.0), at(4.0, 4.0)];
        let grid = resample(&rates, Kind::Rate { start: Some(0.0) }).expect("a grid");
        assert_eq!(grid.width, 0.1);
        let points = read(&grid);
        assert_eq!(points.len(), 40);
        assert_eq!(points[0], (0.1, 2.0));
        assert_eq!(points[11], (1.2, 2.0));
        // (1.2, 1.3]: half at 2 cores, half at 4.
        assert_eq!(points[12].0, 1.3);
        assert!((points[12].1 - 3.0).abs() < 1e-9, "{:?}", points[12]);
        assert_eq!(points[13], (1.4, 4.0));
        assert_eq!(points[39], (4.0, 4.0));
        // The CPU time is kept: Σ rate × width = 2 × 1.25 + 4 × 2.75.
        let cpu: f64 = points.iter().map(|(_, v)| v * grid.width).sum();
        assert!((cpu - 13.5).abs() < 1e-9, "{cpu}");
    }

    #[test]
    fn partial_buckets_average_over_the_covered_part() {
        // The first reading 51 ms before the start, the last at 6.71 s.
        let rates = [at(3.98, 0.5), at(6.71, 0.25)];
        let grid = resample(&rates, Kind::Rate { start: Some(-0.051) }).expect("a grid");
        assert_eq!(grid.width, 0.2);
        let points = read(&grid);
        // (-0.2, 0]: only (-0.051, 0] is covered, at 0.5 cores.
        assert_eq!(points.first(), Some(&(0.0, 0.5)));
        assert_eq!(points.last(), Some(&(6.8, 0.25)));
        assert!(points.len() <= MAX_CHART_POINTS);
    }

    #[test]
    fn long_series_get_at_most_the_bound() {
        let points: Vec<Point> = (0..10_000).map(|i| at(f64::from(i) * 0.37, 1.0)).collect();
        for kind in [Kind::Gauge, Kind::Rate { start: Some(-0.37) }] {
            let grid = resample(&points, kind).expect("a grid");
            assert!(grid.points.len() <= MAX_CHART_POINTS, "{}", grid.points.len());
            assert!(grid.points.len() >= MAX_CHART_POINTS / 5, "{}", grid.points.len());
            let gaps: Vec<f64> = grid.points.windows(2).map(|w| w[1].t - w[0].t).collect();
            assert!(gaps.iter().all(|g| (g - grid.width).abs() < 1e-6), "{gaps:?}");
        }
    }

    #[test]
    fn charts_need_two_points_and_some_time() {
        let one = [at(1.0, 0.5)];
        assert!(chart("CPU", "cores", &[], Kind::Gauge, |v| v).contains("not measured"));
        assert!(chart("CPU", "cores", &one, Kind::Gauge, |v| v).contains("no chart"));
        let same_time = [at(1.0, 0.5), at(1.0, 0.7)];
        assert!(chart("CPU", "cores", &same_time, Kind::Gauge, |v| v).contains("no chart"));
        let with_nan = [at(1.0, 0.5), at(2.0, f64::NAN), at(3.0, 1.0)];
        let text = chart("Memory", "MiB", &with_nan, Kind::Gauge, |v| v);
        assert!(!text.contains("NaN"), "{text}");
        assert!(text.contains("one point per 0.05 s"), "{text}");
        assert!(text.contains("\"1.00 s\", \"1.05 s\""), "{text}");
        // A rate interval without a value leaves a gap: no made-up numbers.
        let rate_gap = [at(1.0, 0.5), at(2.0, f64::NAN), at(3.0, 1.0)];
        assert!(chart("CPU", "cores", &rate_gap, Kind::Rate { start: Some(0.0) }, |v| v).contains("gaps"));
    }
}
