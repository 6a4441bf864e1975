//! Steps as an [OpenMetrics 1.0] text exposition: one family per fact, one
//! sample per step, for scrapers that speak OpenMetrics (Prometheus scraping
//! a file server or an exporter, the OpenTelemetry Collector's Prometheus
//! receiver). Pushgateway and node_exporter's textfile collector do not:
//! they parse only the Prometheus text format 0.0.4 (and protobuf) and
//! reject `# TYPE … info` / `stateset` and `# EOF` — give them
//! [`super::prometheus`], which walks the same families.
//!
//! What the [spec] asks and this export does:
//!
//! * Every family has `# TYPE`, then `# UNIT` when it has a unit (the unit
//!   is the name's suffix: `_seconds`, `_bytes`, `_ratio`), then `# HELP`
//!   ([MetricFamily metadata]); families are never interleaved and the
//!   exposition ends with `# EOF`.
//! * Counters (CPU seconds, IO bytes, OOM kills, stall seconds, ...) are
//!   totals over the step and their samples carry the `_total` suffix;
//!   peaks and shares are gauges; the verdicts are [StateSets] with exactly
//!   one true state; who the step was is the `stepmon_step` [Info] family.
//! * Every sample carries `step` (the step's name), `origin` (`stepmonRun`
//!   or `buildKit`), `index` (its position in the report, so that two
//!   steps of the same name stay distinct label sets), then the CI context
//!   and the run's `--label`s (see `super::families`).
//! * A value that was not measured has no sample at all — never a 0 — and
//!   a family none of whose samples is known is left out (the spec allows
//!   empty families, but they say nothing). Non-finite values are never
//!   written.
//! * Label values and HELP text are escaped per the ABNF's
//!   `escaped-string` (`\\`, `\"`, `\n`; [Escaping]); integers are written
//!   without a decimal point, floats always with one or an exponent
//!   ([Numbers]).
//! * No sample has a timestamp: the spec says they SHOULD NOT.
//!
//! [OpenMetrics 1.0]: https://prometheus.io/docs/specs/om/open_metrics_spec/
//! [spec]: https://prometheus.io/docs/specs/om/open_metrics_spec/
//! [MetricFamily metadata]: https://prometheus.io/docs/specs/om/open_metrics_spec/#metricfamily-metadata
//! [StateSets]: https://prometheus.io/docs/specs/om/open_metrics_spec/#stateset-1
//! [Info]: https://prometheus.io/docs/specs/om/open_metrics_spec/#info-1
//! [Escaping]: https://prometheus.io/docs/specs/om/open_metrics_spec/#escaping
//! [Numbers]: https://prometheus.io/docs/specs/om/open_metrics_spec/#numbers
//!
//! ```
//! use stepmon_model::document::RunDocument;
//! use stepmon_report::Step;
//!
//! let json = r#"{"resourceUsage": {"samples": [
//!     {"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {"usageNanos": 0}, "pidsStat": {}},
//!     {"timestamp": "2026-11-30T10:00:02Z", "cpuStat": {"usageNanos": 1500000000}, "pidsStat": {}}]},
//!   "sysUsage": [],
//!   "stepmon": {"command": ["make"], "exitCode": 0,
//!     "start": "2026-11-30T10:00:00Z", "end": "2026-11-30T10:00:02Z"}}"#;
//! let step = Step::from_run(&serde_json::from_str::<RunDocument>(json)?);
//! let text = stepmon_export::openmetrics::render(&[step]);
//! assert!(text.contains("# TYPE stepmon_step_cpu_usage_seconds counter\n"));
//! assert!(text.contains("stepmon_step_cpu_usage_seconds_total{step=\"make\",origin=\"stepmonRun\",index=\"0\"} 1.5\n"));
//! // No memory was measured: no memory family at all, not a 0.
//! assert!(!text.contains("stepmon_step_memory_peak_bytes"));
//! assert!(text.ends_with("# EOF\n"));
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::fmt::Write as _;

use super::families::{Family, escape, families};
use stepmon_report::step::Step;

/// The HTTP content type of this exposition ([Overall Structure]).
///
/// [Overall Structure]: https://prometheus.io/docs/specs/om/open_metrics_spec/#overall-structure
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Renders `steps` as an OpenMetrics text exposition ending in `# EOF`.
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
        let _ = writeln!(out, "# TYPE {} {}", family.name, family.kind.name());
        if let Some(unit) = family.unit {
            let _ = writeln!(out, "# UNIT {} {unit}", family.name);
        }
        let _ = writeln!(out, "# HELP {} {}", family.name, escape(family.help));
        out.push_str(&lines);
    }
    out.push_str("# EOF\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_report_is_just_eof() {
        assert_eq!(render(&[]), "# EOF\n");
    }
}
