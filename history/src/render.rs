//! A [`CheckReport`] as text, JSON, Markdown (a PR comment or
//! `$GITHUB_STEP_SUMMARY`) or Bencher Metric Format.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use crate::check::{CheckReport, MetricCheck, StepCheck, Verdict};
use crate::record::Machine;
use crate::stats::Test;

/// Output formats of `stepmon baseline check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// For people.
    Text,
    /// The report's JSON.
    Json,
    /// A table per step with a trend sparkline per metric.
    Markdown,
    /// Bencher Metric Format JSON
    /// (<https://bencher.dev/docs/reference/bencher-metric-format/>).
    Bmf,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        Ok(match s {
            "text" => Format::Text,
            "json" => Format::Json,
            "markdown" => Format::Markdown,
            "bmf" => Format::Bmf,
            _ => return Err(format!("unknown format `{s}` (one of: text, json, markdown, bmf)")),
        })
    }
}

/// `report` in `format`.
#[must_use]
pub fn render(report: &CheckReport, format: Format) -> String {
    match format {
        Format::Text => text(report),
        Format::Json => serde_json::to_string_pretty(report).unwrap_or_default() + "\n",
        Format::Markdown => markdown(report),
        Format::Bmf => serde_json::to_string_pretty(&bmf(report)).unwrap_or_default() + "\n",
    }
}

/// The step's name as one line: `build {team=infra} [Linux-X64]`.
fn title(step: &StepCheck) -> String {
    let mut out = step.key.step.clone();
    if !step.key.labels.is_empty() {
        let _ = write!(out, " {{{}}}", step.key.labels_text());
    }
    if !step.key.runner_class.is_empty() {
        let _ = write!(out, " [{}]", step.key.runner_class);
    }
    out
}

/// The test and its numbers: `t-test α=0.01: mean 100.0 MiB, sd 0.2 MiB, n=12, expected 99.5 MiB..100.6 MiB`.
fn numbers(m: &MetricCheck) -> String {
    let show = |v: f64| m.unit.show(v);
    let test = match m.test {
        Test::Percent => format!("percent ±{}%", m.threshold),
        Test::Z => format!("z ±{}σ", m.threshold),
        Test::T => format!("t α={}", m.threshold),
        Test::Iqr => format!("iqr {}×IQR", m.threshold),
    };
    match &m.baseline {
        Some(b) => format!(
            "{test}: mean {}, sd {}, n={}, expected {}..{}, change {:+.1}%, floor {}",
            show(b.mean),
            show(b.sd),
            m.runs,
            show(b.lower),
            show(b.upper),
            b.change_percent,
            show(m.floor)
        ),
        None => format!("not enough history ({} of {} runs)", m.runs, m.min_runs),
    }
}

fn text(report: &CheckReport) -> String {
    let mut out = String::new();
    for step in &report.steps {
        let busy = if step.machine == Machine::Busy { " (machine busy: wall, CPU, stall not gated)" } else { "" };
        let _ = writeln!(out, "{}{busy}", title(step));
        for m in &step.metrics {
            let _ = writeln!(
                out,
                "  {:<18} {:<34} {:>12}  {}",
                m.verdict.words(),
                m.metric,
                m.unit.show(m.value),
                numbers(m)
            );
        }
    }
    let regressions: Vec<String> = report
        .steps
        .iter()
        .flat_map(|s| s.metrics.iter().map(move |m| (s, m)))
        .filter(|(_, m)| m.verdict == Verdict::Regression && report.fail_on.contains(&m.family) && !m.busy_run)
        .map(|(s, m)| format!("{} {}", s.key.step, m.metric))
        .collect();
    let fail_on = report.fail_on.iter().map(|f| f.name()).collect::<Vec<_>>().join(",");
    if regressions.is_empty() {
        let _ = writeln!(out, "verdict: no regression of {fail_on}");
    } else {
        let _ = writeln!(out, "verdict: REGRESSION of {}", regressions.join(", "));
    }
    out
}

/// ▁▂▃▄▅▆▇█ of `values` scaled between their least and largest.
#[must_use]
pub fn sparkline(values: &[f64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    values
        .iter()
        .map(|v| {
            let share = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let i = ((share * 7.0).round() as usize).min(7);
            BARS[i]
        })
        .collect()
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

fn markdown(report: &CheckReport) -> String {
    let mut out = String::from("## Baselines\n\n");
    for step in &report.steps {
        let _ = writeln!(out, "### `{}`\n", cell(&title(step)));
        if step.machine == Machine::Busy {
            out.push_str("This run's machine was busy: its wall, CPU and stall times are not gated.\n\n");
        }
        out.push_str("| Metric | Verdict | This run | Baseline mean | Expected | Change | Trend | Test |\n");
        out.push_str("|---|---|---:|---:|---|---:|---|---|\n");
        for m in &step.metrics {
            let verdict = match m.verdict {
                Verdict::Regression => "**regression**",
                v => v.words(),
            };
            let (mean, expected, change) = m.baseline.as_ref().map_or_else(
                || ("—".to_owned(), "—".to_owned(), "—".to_owned()),
                |b| {
                    (
                        m.unit.show(b.mean),
                        format!("{}..{}", m.unit.show(b.lower), m.unit.show(b.upper)),
                        format!("{:+.1}%", b.change_percent),
                    )
                },
            );
            let _ = writeln!(
                out,
                "| `{}` | {verdict} | {} | {mean} | {expected} | {change} | {} | {} |",
                cell(&m.metric),
                m.unit.show(m.value),
                sparkline(&m.trend),
                cell(&numbers(m)),
            );
        }
        out.push('\n');
    }
    out
}

/// Bencher Metric Format: `{"<benchmark>": {"<measure>": {"value": v,
/// "lower_value": l, "upper_value": u}}}`, the bounds being the interval
/// this run was judged by (left out when there was not history enough).
#[must_use]
pub fn bmf(report: &CheckReport) -> Value {
    let mut benchmarks = Map::new();
    for step in &report.steps {
        let mut measures = Map::new();
        for m in &step.metrics {
            let mut metric = Map::new();
            metric.insert("value".to_owned(), json!(m.value));
            if let Some(b) = &m.baseline {
                metric.insert("lower_value".to_owned(), json!(b.lower));
                metric.insert("upper_value".to_owned(), json!(b.upper));
            }
            measures.insert(m.metric.clone(), Value::Object(metric));
        }
        benchmarks.insert(title(step), Value::Object(measures));
    }
    Value::Object(benchmarks)
}
