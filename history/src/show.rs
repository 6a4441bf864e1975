//! Trends ([`crate::trends`]) as a text table with sparklines, JSON, SVG
//! charts (stepmon-report's trend chart) or a self-contained HTML page.

use std::fmt::Write as _;

use stepmon_export::trend::{Mark, TrendPoint, ValueUnit, chart};

use crate::check::Verdict;
use crate::metric::Unit;
use crate::render::sparkline;
use crate::trend::{MetricTrend, StepTrend, TrendRun};

/// Output formats of `stepmon baseline show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShowFormat {
    /// A table per step, a sparkline per metric.
    Text,
    /// The trends' JSON.
    Json,
    /// One SVG: a chart per metric, stacked.
    Svg,
    /// A self-contained page with the charts.
    Html,
}

impl std::str::FromStr for ShowFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<ShowFormat, String> {
        Ok(match s {
            "text" => ShowFormat::Text,
            "json" => ShowFormat::Json,
            "svg" => ShowFormat::Svg,
            "html" => ShowFormat::Html,
            _ => return Err(format!("unknown format `{s}` (one of: text, json, svg, html)")),
        })
    }
}

/// At most this many runs in a text sparkline (the last ones).
pub const SPARK_RUNS: usize = 40;

/// `steps` in `format`.
#[must_use]
pub fn show(steps: &[StepTrend], format: ShowFormat) -> String {
    match format {
        ShowFormat::Text => text(steps),
        ShowFormat::Json => serde_json::to_string_pretty(steps).unwrap_or_default() + "\n",
        ShowFormat::Svg => svg(steps),
        ShowFormat::Html => html(steps),
    }
}

/// `build {team=infra} [Linux-X64]`.
pub(crate) fn key_title(key: &crate::RunKey) -> String {
    let mut out = key.step.clone();
    if !key.labels.is_empty() {
        let _ = write!(out, " {{{}}}", key.labels_text());
    }
    if !key.runner_class.is_empty() {
        let _ = write!(out, " [{}]", key.runner_class);
    }
    out
}

fn text(steps: &[StepTrend]) -> String {
    let mut out = String::new();
    if steps.is_empty() {
        out.push_str("no runs stored (of this step)\n");
    }
    for step in steps {
        let _ = writeln!(out, "{} — {} run(s)", key_title(&step.key), step.total_runs);
        let width = step.metrics.iter().map(|m| m.runs.len().min(SPARK_RUNS)).max().unwrap_or(0).max(5);
        let _ = writeln!(
            out,
            "  {:<34} {:>5} {:>12} {:>23}  {:<width$}  {:>4} {:>4} {:>4}",
            "metric", "runs", "last", "min..max", "trend", "reg", "imp", "busy",
        );
        for m in &step.metrics {
            let shown = &m.runs[m.runs.len().saturating_sub(SPARK_RUNS)..];
            let values: Vec<f64> = shown.iter().map(|r| r.value).collect();
            let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(*v), b.max(*v)));
            let range =
                if values.is_empty() { String::new() } else { format!("{}..{}", m.unit.show(lo), m.unit.show(hi)) };
            let _ = writeln!(
                out,
                "  {:<34} {:>5} {:>12} {:>23}  {:<width$}  {:>4} {:>4} {:>4}",
                m.metric,
                m.total_runs,
                m.runs.last().map_or_else(String::new, |r| m.unit.show(r.value)),
                range,
                sparkline(&values),
                m.count(Verdict::Regression),
                m.count(Verdict::Improvement),
                m.runs.iter().filter(|r| r.busy_run).count(),
            );
        }
    }
    out
}

fn value_unit(unit: Unit) -> ValueUnit {
    match unit {
        Unit::Seconds => ValueUnit::Seconds,
        Unit::Bytes => ValueUnit::Bytes,
        Unit::Count => ValueUnit::Count,
    }
}

fn point(m: &MetricTrend, run: &TrendRun) -> TrendPoint {
    let mark = if run.busy_run {
        Mark::Busy
    } else {
        match run.verdict {
            Verdict::Regression => Mark::Regression,
            Verdict::Improvement => Mark::Improvement,
            _ => Mark::Plain,
        }
    };
    let mut hover = format!("{} · {}", run.time, m.unit.show(run.value));
    if let Some(commit) = &run.commit {
        let _ = write!(hover, " · commit {commit}");
    }
    let _ = write!(hover, " · {}", run.verdict.words());
    if let Some(b) = &run.baseline {
        let _ = write!(hover, " (expected {}..{})", m.unit.show(b.lower), m.unit.show(b.upper));
    }
    if run.busy_run {
        hover.push_str(" · machine busy");
    }
    TrendPoint { value: run.value, band: run.baseline.map(|b| (b.lower, b.upper)), mark, hover }
}

/// The chart of one metric.
#[must_use]
pub fn metric_chart(step: &StepTrend, m: &MetricTrend) -> String {
    let points: Vec<TrendPoint> = m.runs.iter().map(|r| point(m, r)).collect();
    chart(&format!("{} · {}", key_title(&step.key), m.metric), value_unit(m.unit), &points)
}

fn svg(steps: &[StepTrend]) -> String {
    let charts: Vec<String> = steps.iter().flat_map(|s| s.metrics.iter().map(move |m| metric_chart(s, m))).collect();
    let height_of = |svg: &str| -> f64 {
        svg.split("height=\"").nth(1).and_then(|h| h.split('"').next()).and_then(|h| h.parse().ok()).unwrap_or(0.0)
    };
    let (mut body, mut offset) = (String::new(), 0.0);
    for c in &charts {
        body.push_str(&c.replacen("<svg ", &format!("<svg y=\"{offset}\" "), 1));
        body.push('\n');
        offset += height_of(c);
    }
    let width = charts.first().and_then(|c| c.split("width=\"").nth(1)?.split('"').next()).unwrap_or("720");
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"stepmon-trends\" width=\"{width}\" height=\"{offset}\" \
         viewBox=\"0 0 {width} {offset}\">\n{body}</svg>\n"
    )
}

fn html(steps: &[StepTrend]) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>stepmon baselines</title><style>\
         :root {{ color-scheme: light dark; }} body {{ font-family: system-ui, sans-serif; max-width: 780px; \
         margin: 2em auto; padding: 0 1em; }} svg {{ max-width: 100%; height: auto; }} \
         figure {{ margin: 1em 0; }}</style></head><body><h1>Baselines</h1>\n",
        stepmon_export::html::CSP
    );
    if steps.is_empty() {
        out.push_str("<p>No runs stored (of this step).</p>\n");
    }
    for step in steps {
        let _ = writeln!(
            out,
            "<section class=\"step\"><h2>{}</h2><p>{} run(s)</p>",
            stepmon_export::escape::xml(&key_title(&step.key)),
            step.total_runs
        );
        for m in &step.metrics {
            let _ = writeln!(
                out,
                "<figure class=\"trend\">{}<figcaption>{}: {} regression(s), {} improvement(s), {} busy run(s) of the last {}</figcaption></figure>",
                metric_chart(step, m),
                stepmon_export::escape::xml(&m.metric),
                m.count(Verdict::Regression),
                m.count(Verdict::Improvement),
                m.runs.iter().filter(|r| r.busy_run).count(),
                m.runs.len()
            );
        }
        out.push_str("</section>\n");
    }
    out.push_str("</body></html>\n");
    out
}
