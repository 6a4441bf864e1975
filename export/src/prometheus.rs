//! Steps in the [Prometheus text exposition format 0.0.4]: what Pushgateway
//! accepts on a push and node_exporter's textfile collector reads from
//! `*.prom` files (both reject OpenMetrics' `info` and `stateset` types and
//! its `# EOF`). The families, values and labels are those of
//! [`super::openmetrics`] (one table, `super::families`); the framing is
//! 0.0.4's:
//!
//! * `# HELP` then `# TYPE`, once per family, on the name the samples carry:
//!   a counter is typed on its `_total` name (`# TYPE
//!   stepmon_step_cpu_usage_seconds_total counter`), as 0.0.4 has no
//!   family-name/sample-name split.
//! * 0.0.4 knows counter, gauge, histogram, summary and untyped: an
//!   OpenMetrics stateset becomes a gauge with one 0/1 sample per state
//!   (exactly one 1), an info family a gauge named `…_info` of value 1 —
//!   the conventions Prometheus' own exporters use.
//! * No `# UNIT` (0.0.4 has none; the unit is the name's suffix), no
//!   `# EOF`, no timestamps (Pushgateway refuses pushes with them and the
//!   textfile collector refuses files with them).
//! * Label values escape `\`, `"` and line feed as `\\`, `\"`, `\n`; HELP
//!   text escapes only `\` and line feed (a `\"` in HELP would be read as
//!   two characters).
//!
//! [Prometheus text exposition format 0.0.4]: https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
//!
//! ```
//! use stepmon_model::document::RunDocument;
//! use stepmon_report::Step;
//!
//! let json = r#"{"resourceUsage": {"samples": [
//!     {"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {"usageNanos": 0}, "pidsStat": {}},
//!     {"timestamp": "2026-11-30T10:00:02Z", "cpuStat": {"usageNanos": 1500000000}, "pidsStat": {}}]},
//!   "sysUsage": [],
//!   "stepmon": {"command": ["/usr/bin/make", "-j8"], "name": "build", "exitCode": 0,
//!     "labels": [{"key": "team", "value": "infra"}],
//!     "start": "2026-11-30T10:00:00Z", "end": "2026-11-30T10:00:02Z"}}"#;
//! let step = Step::from_run(&serde_json::from_str::<RunDocument>(json)?);
//! let text = stepmon_export::prometheus::render(&[step]);
//! assert!(text.contains("# TYPE stepmon_step_cpu_usage_seconds_total counter\n"));
//! assert!(text.contains(
//!     "stepmon_step_cpu_usage_seconds_total{step=\"build\",origin=\"stepmonRun\",index=\"0\",team=\"infra\"} 1.5\n"
//! ));
//! assert!(text.contains("# TYPE stepmon_step_info gauge\n"));
//! assert!(!text.contains("# EOF") && !text.contains("# UNIT"));
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::fmt::Write as _;

use super::families::{Family, Kind, families, sample_name};
use stepmon_report::step::Step;

/// The HTTP content type of this exposition (what Pushgateway expects on a
/// push of the text format).
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The 0.0.4 type of a family.
fn type_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Counter => "counter",
        Kind::Gauge | Kind::StateSet | Kind::Info => "gauge",
    }
}

/// HELP text per 0.0.4: backslash and line feed escaped, nothing else.
fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

/// Renders `steps` in the Prometheus text format 0.0.4 (empty for no steps).
#[must_use]
pub fn render(steps: &[Step]) -> String {
    frame(families(&steps.iter().collect::<Vec<_>>()))
}

/// The exposition of `families` (each with its sample lines): the steps'
/// ([`crate::families`]) and those a caller adds.
#[must_use]
pub fn frame(families: Vec<(&Family, String)>) -> String {
    let mut out = String::new();
    for (family, lines) in families {
        let name = sample_name(family);
        let _ = writeln!(out, "# HELP {name} {}", escape_help(family.help));
        let _ = writeln!(out, "# TYPE {name} {}", type_name(family.kind));
        out.push_str(&lines);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_escapes_only_backslash_and_newline() {
        assert_eq!(escape_help("a \"b\" \\ c\nd"), "a \"b\" \\\\ c\\nd");
    }

    #[test]
    fn empty_report_is_empty() {
        assert_eq!(render(&[]), "");
    }
}
