//! What is compared run to run: the step's totals and peaks, and each
//! command's CPU and largest peak RSS from the per-process records.

use std::fmt;

use serde::{Deserialize, Serialize};
use stepmon_report::Step;

/// A family of metrics: what `--fail-on`, thresholds and floors name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Family {
    /// CPU time: the step's and each command's.
    Cpu,
    /// Wall time.
    Wall,
    /// Memory peak: the step's `memory.peak` and each command's peak RSS.
    Memory,
    /// Bytes read and written.
    Io,
    /// Pressure stall time (PSI `some`) of CPU, memory and IO.
    Stall,
    /// The largest number of tasks.
    Pids,
}

impl Family {
    /// Every family, in the order reports list them.
    pub const ALL: [Family; 6] = [Family::Cpu, Family::Wall, Family::Memory, Family::Io, Family::Stall, Family::Pids];

    /// Its name on the command line (`cpu`, `wall`, `memory`, `io`, `stall`, `pids`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Family::Cpu => "cpu",
            Family::Wall => "wall",
            Family::Memory => "memory",
            Family::Io => "io",
            Family::Stall => "stall",
            Family::Pids => "pids",
        }
    }

    /// Whether another tenant of the machine changes it: runs on a busy
    /// machine are left out of these baselines (wall, CPU, stall). Memory,
    /// IO and tasks are the step's own work whoever else runs.
    #[must_use]
    pub fn busy_sensitive(self) -> bool {
        matches!(self, Family::Cpu | Family::Wall | Family::Stall)
    }

    /// The unit its values are in.
    #[must_use]
    pub fn unit(self) -> Unit {
        match self {
            Family::Cpu | Family::Wall | Family::Stall => Unit::Seconds,
            Family::Memory | Family::Io => Unit::Bytes,
            Family::Pids => Unit::Count,
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Family {
    type Err = String;
    fn from_str(s: &str) -> Result<Family, String> {
        Family::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| format!("unknown metric `{s}` (one of: {})", Family::ALL.map(Family::name).join(", ")))
    }
}

/// The unit of a metric's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Unit {
    /// Seconds.
    Seconds,
    /// Bytes.
    Bytes,
    /// A count.
    Count,
}

impl Unit {
    /// `value` for people, as every other stepmon report writes it
    /// (stepmon-report's units): `12.3 ms`, `1.49 s`, `1m15.2s`,
    /// `100.0 MiB`, `7`.
    #[must_use]
    pub fn show(self, value: f64) -> String {
        use stepmon_report::units;
        let sign = if value < 0.0 { "-" } else { "" };
        match self {
            Unit::Seconds => format!("{sign}{}", units::seconds(value.abs())),
            // Bytes are whole; far below 2^64.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            Unit::Bytes => format!("{sign}{}", units::bytes(value.abs().round() as u64)),
            Unit::Count => format!("{value:.0}"),
        }
    }
}

/// One measured value of one run: its metric's name and the value.
///
/// Names are stable (they are the store's `metric` column and Bencher's
/// measure slugs): `cpu-seconds`, `wall-seconds`, `memory-peak-bytes`,
/// `io-bytes`, `cpu-stall-seconds`, `memory-stall-seconds`,
/// `io-stall-seconds`, `pids-peak`, `command-cpu-seconds:NAME`,
/// `command-peak-bytes:NAME`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    /// The metric's name.
    pub metric: String,
    /// Its value, in its family's [`Unit`].
    pub value: f64,
}

/// The family of a metric's name (`None`: a name this version does not know).
#[must_use]
pub fn family_of(metric: &str) -> Option<Family> {
    let base = metric.split_once(':').map_or(metric, |(base, _)| base);
    Some(match base {
        "cpu-seconds" | "command-cpu-seconds" => Family::Cpu,
        "wall-seconds" => Family::Wall,
        "memory-peak-bytes" | "command-peak-bytes" => Family::Memory,
        "io-bytes" => Family::Io,
        "cpu-stall-seconds" | "memory-stall-seconds" | "io-stall-seconds" => Family::Stall,
        "pids-peak" => Family::Pids,
        _ => return None,
    })
}

/// The metrics of `step` that were measured (an unmeasured field is left
/// out, never stored as 0).
///
/// ```
/// use stepmon_model::document::RunDocument;
/// use stepmon_report::Step;
/// let json = r#"{"resourceUsage": {"samples": [
///     {"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {"usageNanos": 0}, "pidsStat": {}},
///     {"timestamp": "2026-11-30T10:00:02Z", "cpuStat": {"usageNanos": 1500000000}, "pidsStat": {}}]},
///   "stepmon": {"command": ["make"], "start": "2026-11-30T10:00:00Z", "end": "2026-11-30T10:00:02Z"}}"#;
/// let step = Step::from_run(&serde_json::from_str::<RunDocument>(json)?);
/// let measures = stepmon_history::measures_of(&step);
/// assert!(measures.iter().any(|m| m.metric == "cpu-seconds" && m.value == 1.5));
/// assert!(!measures.iter().any(|m| m.metric == "memory-peak-bytes"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[must_use]
#[allow(clippy::cast_precision_loss)] // bytes and counts far below 2^53
pub fn measures_of(step: &Step) -> Vec<Measure> {
    let s = &step.summary;
    let io = match (s.io.read_bytes, s.io.write_bytes) {
        (None, None) => None,
        (r, w) => Some(r.unwrap_or(0) + w.unwrap_or(0)),
    };
    let fields: [(&str, Option<f64>); 8] = [
        ("cpu-seconds", s.cpu.usage_seconds),
        ("wall-seconds", step.wall_seconds),
        ("memory-peak-bytes", s.memory.peak_bytes.map(|v| v as f64)),
        ("io-bytes", io.map(|v| v as f64)),
        ("cpu-stall-seconds", s.cpu_stall.some_seconds),
        ("memory-stall-seconds", s.memory_stall.some_seconds),
        ("io-stall-seconds", s.io_stall.some_seconds),
        ("pids-peak", s.pids_peak.map(|v| v as f64)),
    ];
    let mut out: Vec<Measure> = fields
        .into_iter()
        .filter_map(|(metric, value)| {
            Some(Measure { metric: metric.to_owned(), value: value.filter(|v| v.is_finite())? })
        })
        .collect();
    if let Some(processes) = step.run.as_ref().and_then(|r| r.processes.as_ref()) {
        for command in &processes.commands {
            out.push(Measure {
                metric: format!("command-cpu-seconds:{}", command.command),
                value: command.cpu_seconds,
            });
            if let Some(peak) = command.max_peak_rss_bytes {
                out.push(Measure { metric: format!("command-peak-bytes:{}", command.command), value: peak as f64 });
            }
        }
    }
    out
}
