//! The families of the fleet exports ([`super::openmetrics`] and
//! [`super::prometheus`]): one table of what each family reads off a step,
//! its type, unit and help, walked by both encoders so that they can never
//! disagree on names, values or labels. Only the framing differs (type
//! names, `# UNIT`, `# EOF`, HELP escaping).
//!
//! Every sample carries the step's identity: `step` (its name), `origin`,
//! `index` (its position in the report, so that two steps of one name stay
//! distinct label sets), the CI context's `ci_pipeline`, `ci_job`,
//! `ci_runner` where known, and the run's `--label`s (those whose key
//! [`crate::labels::usable_key`] accepts and that no earlier label took:
//! a hand-edited document cannot make a sample carry a name twice).

use std::fmt::Write as _;

use crate::step::{Origin, Step, WallSource};
use crate::verdict::{Bottleneck, MachineLoad, MemoryOutcome, Verdicts};

/// The metric types this export uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Gauge,
    Counter,
    StateSet,
    Info,
}

impl Kind {
    /// The OpenMetrics type name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
            Kind::StateSet => "stateset",
            Kind::Info => "info",
        }
    }

    /// The suffix of the sample name ("Suffixes" in the spec).
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Kind::Counter => "_total",
            Kind::Info => "_info",
            Kind::Gauge | Kind::StateSet => "",
        }
    }
}

/// A sample value: integers stay integers (no decimal point), floats are
/// written with one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value {
    Unsigned(u64),
    Signed(i64),
    Float(f64),
}

impl Value {
    /// The value as the ABNF's `number`, `None` when it must not be written
    /// (NaN or ±inf: nothing here means "division by zero", and a counter
    /// must not be NaN or negative).
    pub(crate) fn render(self, kind: Kind) -> Option<String> {
        match self {
            Value::Unsigned(v) => Some(v.to_string()),
            Value::Signed(v) => (kind != Kind::Counter || v >= 0).then(|| v.to_string()),
            // `{:?}` always writes a decimal point or an exponent (`3.0`,
            // `1e-7`), the float form of the spec's Numbers section.
            Value::Float(v) => (v.is_finite() && (kind != Kind::Counter || v >= 0.0)).then(|| format!("{v:?}")),
        }
    }
}

/// One sample of a family: the labels beyond the step's own, and the value.
pub(crate) type Point = (Vec<(&'static str, String)>, Value);

/// One family: name (without the type's suffix), type, unit, help, and
/// what it reads off a step.
pub(crate) struct Family {
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
    pub(crate) unit: Option<&'static str>,
    pub(crate) help: &'static str,
    points: fn(&Facts<'_>) -> Vec<Point>,
}

/// A step and its verdicts, computed once.
struct Facts<'a> {
    step: &'a Step,
    verdicts: Verdicts,
}

fn one(value: Option<Value>) -> Vec<Point> {
    value.map(|v| (Vec::new(), v)).into_iter().collect()
}

fn u(v: Option<u64>) -> Vec<Point> {
    one(v.map(Value::Unsigned))
}

fn f(v: Option<f64>) -> Vec<Point> {
    one(v.map(Value::Float))
}

/// A stateset's samples: one per state, the current one 1 (the spec:
/// "ENUMs MUST have exactly one Boolean which is true").
pub(crate) fn states(family: &'static str, all: &[&'static str], current: &'static str) -> Vec<Point> {
    all.iter().map(|s| (vec![(family, (*s).to_owned())], Value::Unsigned(u64::from(*s == current)))).collect()
}

// Exhaustive matches, so that a new verdict class fails to compile here
// instead of silently leaving every state at 0.
const BOTTLENECK_STATES: [&str; 5] = ["cpuBound", "memoryBound", "ioBound", "notStalled", "unknown"];
fn bottleneck_state(b: Bottleneck) -> &'static str {
    match b {
        Bottleneck::CpuBound => "cpuBound",
        Bottleneck::MemoryBound => "memoryBound",
        Bottleneck::IoBound => "ioBound",
        Bottleneck::NotStalled => "notStalled",
        Bottleneck::Unknown => "unknown",
    }
}

const MEMORY_STATES: [&str; 5] = ["oomKilled", "hitLimit", "nearLimit", "ok", "unknown"];
fn memory_state(m: MemoryOutcome) -> &'static str {
    match m {
        MemoryOutcome::OomKilled => "oomKilled",
        MemoryOutcome::HitLimit => "hitLimit",
        MemoryOutcome::NearLimit => "nearLimit",
        MemoryOutcome::Ok => "ok",
        MemoryOutcome::Unknown => "unknown",
    }
}

const MACHINE_STATES: [&str; 3] = ["quiet", "busy", "unknown"];
fn machine_state(m: MachineLoad) -> &'static str {
    match m {
        MachineLoad::Quiet => "quiet",
        MachineLoad::Busy => "busy",
        MachineLoad::Unknown => "unknown",
    }
}

fn origin_name(origin: &Origin) -> &'static str {
    match origin {
        Origin::StepmonRun => "stepmonRun",
        Origin::BuildKit { .. } => "buildKit",
    }
}

fn wall_source_name(source: WallSource) -> &'static str {
    match source {
        WallSource::Measured => "measured",
        WallSource::EstimatedFromSamples => "estimatedFromSamples",
        WallSource::Vertex => "vertex",
        WallSource::Unknown => "unknown",
    }
}

/// The `stepmon_step` info sample: what is known about the step beyond its
/// numbers. Unknown values are empty label values, which the spec says
/// "SHOULD be treated as if the label was not present" — so every sample of
/// the family has the same label names, as Metrics SHOULD.
fn info(x: &Facts<'_>) -> Vec<Point> {
    let step = x.step;
    let (step_id, digest) = match &step.origin {
        Origin::BuildKit { step_id, digest } => (step_id.clone(), digest.clone().unwrap_or_default()),
        Origin::StepmonRun => (String::new(), String::new()),
    };
    let run = step.run.as_ref();
    let text = |v: Option<i32>| v.map_or_else(String::new, |v| v.to_string());
    let labels = vec![
        ("exit_code", text(run.and_then(|r| r.exit_code))),
        ("signal", text(run.and_then(|r| r.signal))),
        ("wall_source", wall_source_name(step.wall_source).to_owned()),
        ("step_id", step_id),
        ("digest", digest),
        ("kernel", run.map(|r| r.host.kernel.clone()).unwrap_or_default()),
        ("cgroup_layout", run.map(|r| r.host.cgroup_layout.clone()).unwrap_or_default()),
    ];
    vec![(labels, Value::Unsigned(1))]
}

/// One `stepmon_step_source` info sample per measured field group: the
/// rung of the measurement ladder it came from and whether it is exact.
/// Steps that record no sources (BuildKit's, older documents) are their own
/// cgroup's throughout: no samples.
fn sources(x: &Facts<'_>) -> Vec<Point> {
    crate::source::Group::ALL
        .iter()
        .filter_map(|group| {
            let source = x.step.sources.get(*group)?;
            let bound = match source.bound {
                crate::source::Bound::Exact => "exact",
                crate::source::Bound::LowerBound => "lowerBound",
            };
            let labels = vec![
                ("group", group.as_str().to_owned()),
                ("rung", source.rung.as_str().to_owned()),
                ("bound", bound.to_owned()),
            ];
            Some((labels, Value::Unsigned(1)))
        })
        .collect()
}

/// PSI stall seconds per resource and line (`some`, `full`).
fn stall_seconds(x: &Facts<'_>) -> Vec<Point> {
    let s = &x.step.summary;
    let mut out = Vec::new();
    for (resource, stall) in [("cpu", &s.cpu_stall), ("memory", &s.memory_stall), ("io", &s.io_stall)] {
        for (kind, value) in [("some", stall.some_seconds), ("full", stall.full_seconds)] {
            if let Some(v) = value {
                out.push((vec![("resource", resource.to_owned()), ("kind", kind.to_owned())], Value::Float(v)));
            }
        }
    }
    out
}

/// PSI `some` stall share of the wall time per resource.
fn stall_ratio(x: &Facts<'_>) -> Vec<Point> {
    let s = &x.step.summary;
    [("cpu", s.cpu_stall.some_share), ("memory", s.memory_stall.some_share), ("io", s.io_stall.some_share)]
        .into_iter()
        .filter_map(|(resource, v)| Some((vec![("resource", resource.to_owned())], Value::Float(v?))))
        .collect()
}

/// Every family, in output order.
pub(crate) const FAMILIES: &[Family] = &[
    Family {
        name: "stepmon_step",
        kind: Kind::Info,
        unit: None,
        help: "A recorded step: exit code, signal, how its wall time is known, BuildKit step id and digest, kernel, cgroup layout (empty when unknown).",
        points: info,
    },
    Family {
        name: "stepmon_step_source",
        kind: Kind::Info,
        unit: None,
        help: "Where a field group's numbers came from: the step's own cgroup (cgroupV2), its process tree, the enclosing cgroup, the machine, its network namespace; exact or a lower bound.",
        points: sources,
    },
    Family {
        name: "stepmon_step_exit_code",
        kind: Kind::Gauge,
        unit: None,
        help: "Exit code of the step's command (absent when it was killed by a signal or did not start).",
        points: |x| one(x.step.run.as_ref().and_then(|r| r.exit_code).map(|c| Value::Signed(i64::from(c)))),
    },
    Family {
        name: "stepmon_step_wall_seconds",
        kind: Kind::Gauge,
        unit: Some("seconds"),
        help: "Wall time of the step (measured by stepmon, or estimated from BuildKit's sample times).",
        points: |x| f(x.step.wall_seconds),
    },
    Family {
        name: "stepmon_step_cpu_user_seconds",
        kind: Kind::Counter,
        unit: Some("seconds"),
        help: "CPU time the step spent in user mode (cpu.stat user_usec).",
        points: |x| f(x.step.summary.cpu.user_seconds),
    },
    Family {
        name: "stepmon_step_cpu_system_seconds",
        kind: Kind::Counter,
        unit: Some("seconds"),
        help: "CPU time the step spent in kernel mode (cpu.stat system_usec).",
        points: |x| f(x.step.summary.cpu.system_seconds),
    },
    Family {
        name: "stepmon_step_cpu_usage_seconds",
        kind: Kind::Counter,
        unit: Some("seconds"),
        help: "Total CPU time of the step (cpu.stat usage_usec).",
        points: |x| f(x.step.summary.cpu.usage_seconds),
    },
    Family {
        name: "stepmon_step_cpu_average_cores",
        kind: Kind::Gauge,
        unit: None,
        help: "Cores the step used on average: CPU time over wall time.",
        points: |x| f(x.step.summary.cpu.average_cores),
    },
    Family {
        name: "stepmon_step_cpu_throttled_seconds",
        kind: Kind::Counter,
        unit: Some("seconds"),
        help: "Time the step's own cpu.max held it back (cpu.stat throttled_usec).",
        points: |x| f(x.step.summary.cpu.throttled_seconds),
    },
    Family {
        name: "stepmon_step_cpu_throttled_periods",
        kind: Kind::Counter,
        unit: None,
        help: "Enforcement periods in which the step was throttled (cpu.stat nr_throttled).",
        points: |x| u(x.step.summary.cpu.throttled_periods.map(u64::from)),
    },
    Family {
        name: "stepmon_step_cpu_limit_cores",
        kind: Kind::Gauge,
        unit: None,
        help: "The step's cpu.max quota in cores (absent when it had none).",
        points: |x| f(x.verdicts.throttling.limit_cores),
    },
    Family {
        name: "stepmon_step_throttled",
        kind: Kind::Gauge,
        unit: None,
        help: "1 when the step's own cpu.max held it back for at least the threshold share of its wall time, else 0.",
        points: |x| u(x.verdicts.throttling.throttled.map(u64::from)),
    },
    Family {
        name: "stepmon_step_memory_peak_bytes",
        kind: Kind::Gauge,
        unit: Some("bytes"),
        help: "Peak memory of the step (memory.peak).",
        points: |x| u(x.step.summary.memory.peak_bytes),
    },
    Family {
        name: "stepmon_step_memory_anon_at_peak_bytes",
        kind: Kind::Gauge,
        unit: Some("bytes"),
        help: "Anonymous memory in the sample with the most memory (memory.stat anon).",
        points: |x| u(x.step.summary.memory.anon_at_peak_bytes),
    },
    Family {
        name: "stepmon_step_memory_file_at_peak_bytes",
        kind: Kind::Gauge,
        unit: Some("bytes"),
        help: "Page cache in the sample with the most memory (memory.stat file).",
        points: |x| u(x.step.summary.memory.file_at_peak_bytes),
    },
    Family {
        name: "stepmon_step_memory_limit_bytes",
        kind: Kind::Gauge,
        unit: Some("bytes"),
        help: "The step's memory.max (absent when it had none).",
        points: |x| u(x.verdicts.memory.limit_bytes),
    },
    Family {
        name: "stepmon_step_oom_kills",
        kind: Kind::Counter,
        unit: None,
        help: "Processes of the step killed by the OOM killer (memory.events oom_kill).",
        points: |x| u(x.step.summary.memory.oom_kills),
    },
    Family {
        name: "stepmon_step_oom_group_kills",
        kind: Kind::Counter,
        unit: None,
        help: "Group OOM kills of the step (memory.events oom_group_kill).",
        points: |x| u(x.step.summary.memory.oom_group_kills),
    },
    Family {
        name: "stepmon_step_memory_max_hits",
        kind: Kind::Counter,
        unit: None,
        help: "Times the step's memory usage hit memory.max (memory.events max).",
        points: |x| u(x.step.summary.memory.max_hits),
    },
    Family {
        name: "stepmon_step_memory_high_hits",
        kind: Kind::Counter,
        unit: None,
        help: "Times the step was throttled at memory.high (memory.events high).",
        points: |x| u(x.step.summary.memory.high_hits),
    },
    Family {
        name: "stepmon_step_io_read_bytes",
        kind: Kind::Counter,
        unit: Some("bytes"),
        help: "Bytes the step read from block devices (io.stat rbytes).",
        points: |x| u(x.step.summary.io.read_bytes),
    },
    Family {
        name: "stepmon_step_io_write_bytes",
        kind: Kind::Counter,
        unit: Some("bytes"),
        help: "Bytes the step wrote to block devices (io.stat wbytes).",
        points: |x| u(x.step.summary.io.write_bytes),
    },
    Family {
        name: "stepmon_step_pids_peak",
        kind: Kind::Gauge,
        unit: None,
        help: "Most tasks in the step at once (pids.peak, else the highest pids.current seen).",
        points: |x| u(x.step.summary.pids_peak),
    },
    Family {
        name: "stepmon_step_pressure_stall_seconds",
        kind: Kind::Counter,
        unit: Some("seconds"),
        help: "PSI stall time of the step per resource: some = some task waited, full = all non-idle tasks waited.",
        points: stall_seconds,
    },
    Family {
        name: "stepmon_step_pressure_stall_ratio",
        kind: Kind::Gauge,
        unit: Some("ratio"),
        help: "Share of the step's wall time in which some task of the step waited for the resource (PSI some).",
        points: stall_ratio,
    },
    Family {
        name: "stepmon_step_network_receive_bytes",
        kind: Kind::Counter,
        unit: Some("bytes"),
        help: "Bytes the step received (its own network namespace only).",
        points: |x| u(x.step.summary.net_rx_bytes),
    },
    Family {
        name: "stepmon_step_network_transmit_bytes",
        kind: Kind::Counter,
        unit: Some("bytes"),
        help: "Bytes the step sent (its own network namespace only).",
        points: |x| u(x.step.summary.net_tx_bytes),
    },
    Family {
        name: "stepmon_step_machine_cpu_busy_ratio",
        kind: Kind::Gauge,
        unit: Some("ratio"),
        help: "Share of all CPUs' time that was busy (not idle or iowait) during the step.",
        points: |x| f(x.step.summary.machine.cpu_busy_share),
    },
    Family {
        name: "stepmon_step_machine_cpu_others_busy_ratio",
        kind: Kind::Gauge,
        unit: Some("ratio"),
        help: "Share of all CPUs' time busy with work other than the step's during the step.",
        points: |x| f(x.step.summary.machine.others_busy_share),
    },
    Family {
        name: "stepmon_step_machine_cpu_steal_ratio",
        kind: Kind::Gauge,
        unit: Some("ratio"),
        help: "Share of all CPUs' time taken by the hypervisor (steal) during the step.",
        points: |x| f(x.step.summary.machine.steal_share),
    },
    Family {
        name: "stepmon_step_machine_cpu_stall_ratio",
        kind: Kind::Gauge,
        unit: Some("ratio"),
        help: "Share of the step's wall time in which some task on the machine waited for CPU (/proc/pressure/cpu some).",
        points: |x| f(x.verdicts.machine.machine_cpu_stall_share),
    },
    Family {
        name: "stepmon_step_collector_cpu_seconds",
        kind: Kind::Counter,
        unit: Some("seconds"),
        help: "CPU time stepmon itself used while recording the step (all its threads).",
        points: |x| f(x.step.run.as_ref().and_then(|r| r.collector.cpu_seconds)),
    },
    Family {
        name: "stepmon_step_collector_max_rss_bytes",
        kind: Kind::Gauge,
        unit: Some("bytes"),
        help: "Peak resident memory of stepmon itself while recording the step.",
        points: |x| u(x.step.run.as_ref().and_then(|r| r.collector.max_rss_bytes)),
    },
    Family {
        name: "stepmon_step_bottleneck",
        kind: Kind::StateSet,
        unit: None,
        help: "What the step waited for most, from its PSI stall time over the whole step.",
        points: |x| {
            states("stepmon_step_bottleneck", &BOTTLENECK_STATES, bottleneck_state(x.verdicts.bottleneck.class))
        },
    },
    Family {
        name: "stepmon_step_memory_outcome",
        kind: Kind::StateSet,
        unit: None,
        help: "What happened to the step's memory: OOM kill, limit hit, near the limit, ok.",
        points: |x| states("stepmon_step_memory_outcome", &MEMORY_STATES, memory_state(x.verdicts.memory.class)),
    },
    Family {
        name: "stepmon_step_machine_load",
        kind: Kind::StateSet,
        unit: None,
        help: "Whether the machine was busy with other work during the step.",
        points: |x| states("stepmon_step_machine_load", &MACHINE_STATES, machine_state(x.verdicts.machine.class)),
    },
];

/// Escapes a label value or HELP text per the ABNF's `escaped-string`:
/// backslash, double quote and line feed; everything else is a
/// `normal-char` and stays as is.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes a label value per both formats (OpenMetrics' `escaped-string`,
/// the Prometheus text format's label values): `\\`, `\"`, `\n`. No
/// labels, no braces.
fn write_labels(out: &mut String, labels: &[(&str, &str)]) {
    if labels.is_empty() {
        return;
    }
    out.push('{');
    for (i, (name, value)) in labels.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{name}=\"{}\"", escape(value));
    }
    out.push('}');
}

/// The labels every sample of `step` carries (see the module docs).
fn identity(step: &Step, index: usize) -> Vec<(&str, String)> {
    let mut labels = vec![
        ("step", step.name.clone()),
        ("origin", origin_name(&step.origin).to_owned()),
        ("index", index.to_string()),
    ];
    if let Some(run) = &step.run {
        if let Some(ci) = &run.ci {
            labels.extend(ci.labels().into_iter().map(|(k, v)| (k, v.to_owned())));
        }
        for label in &run.labels {
            if crate::labels::usable_key(&label.key) && labels.iter().all(|(k, _)| *k != label.key) {
                labels.push((label.key.as_str(), label.value.clone()));
            }
        }
    }
    labels
}

/// The sample name of a family's samples (the name plus its type's suffix).
pub(crate) fn sample_name(family: &Family) -> String {
    format!("{}{}", family.name, family.kind.suffix())
}

impl Family {
    /// A family whose samples its caller gives ([`lines`]): the job's own.
    pub(crate) const fn described(
        name: &'static str,
        kind: Kind,
        unit: Option<&'static str>,
        help: &'static str,
    ) -> Family {
        Family { name, kind, unit, help, points: |_| Vec::new() }
    }
}

/// A sample the caller gives: of the step at this index of `steps` (its
/// identity labels first) or of none, its own labels, its value.
pub(crate) type Given = (Option<usize>, Vec<(&'static str, String)>, Value);

/// The sample lines of `family` for `given` samples of `steps`.
pub(crate) fn lines(family: &Family, steps: &[&Step], given: &[Given]) -> String {
    let name = sample_name(family);
    let mut out = String::new();
    for (index, extra, value) in given {
        let Some(value) = value.render(family.kind) else { continue };
        let base = index.and_then(|i| steps.get(i).map(|s| identity(s, i))).unwrap_or_default();
        let labels: Vec<(&str, &str)> =
            base.iter().map(|(n, v)| (*n, v.as_str())).chain(extra.iter().map(|(n, v)| (*n, v.as_str()))).collect();
        out.push_str(&name);
        write_labels(&mut out, &labels);
        let _ = writeln!(out, " {value}");
    }
    out
}

/// Every family that has at least one sample, in table order, with its
/// sample lines (`name{labels} value\n`, no timestamps: OpenMetrics says
/// exposers SHOULD NOT write them, and Pushgateway and node_exporter's
/// textfile collector reject them).
pub(crate) fn families(steps: &[&Step]) -> Vec<(&'static Family, String)> {
    let facts: Vec<Facts<'_>> = steps.iter().map(|&step| Facts { step, verdicts: step.verdicts() }).collect();
    let identities: Vec<_> = steps.iter().enumerate().map(|(i, step)| identity(step, i)).collect();
    let mut out = Vec::new();
    for family in FAMILIES {
        let name = sample_name(family);
        let mut lines = String::new();
        for (x, base) in facts.iter().zip(&identities) {
            for (extra, value) in (family.points)(x) {
                let Some(value) = value.render(family.kind) else { continue };
                lines.push_str(&name);
                let labels: Vec<(&str, &str)> = base
                    .iter()
                    .map(|(n, v)| (*n, v.as_str()))
                    .chain(extra.iter().map(|(n, v)| (*n, v.as_str())))
                    .collect();
                write_labels(&mut lines, &labels);
                let _ = writeln!(lines, " {value}");
            }
        }
        if !lines.is_empty() {
            out.push((family, lines));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_label_values() {
        assert_eq!(escape(r#"sh -c 'echo "hi"'"#), r#"sh -c 'echo \"hi\"'"#);
        assert_eq!(escape("a\\b"), "a\\\\b");
        assert_eq!(escape("line\nbreak"), "line\\nbreak");
        // Not escaped by the spec: tab, carriage return, unicode.
        assert_eq!(escape("tab\tcr\r✓ ü"), "tab\tcr\r✓ ü");
    }

    #[test]
    fn numbers() {
        assert_eq!(Value::Unsigned(42).render(Kind::Counter).as_deref(), Some("42"));
        assert_eq!(Value::Float(3.0).render(Kind::Gauge).as_deref(), Some("3.0"));
        assert_eq!(Value::Float(1.5e-7).render(Kind::Gauge).as_deref(), Some("1.5e-7"));
        assert_eq!(Value::Float(f64::NAN).render(Kind::Gauge), None);
        assert_eq!(Value::Float(f64::INFINITY).render(Kind::Gauge), None);
        assert_eq!(Value::Float(-1.0).render(Kind::Counter), None);
        assert_eq!(Value::Signed(-1).render(Kind::Gauge).as_deref(), Some("-1"));
        assert_eq!(Value::Signed(-1).render(Kind::Counter), None);
    }

    #[test]
    fn family_labels_are_reserved() {
        // A `--label` cannot take a label name a family uses.
        let step = Step::from_run(&crate::RunDocument::default());
        let facts = Facts { step: &step, verdicts: step.verdicts() };
        for family in FAMILIES {
            for (labels, _) in (family.points)(&facts) {
                for (name, _) in labels {
                    assert!(crate::labels::RESERVED.contains(&name), "{name} of {} is not reserved", family.name);
                }
            }
        }
        for (name, _) in identity(&step, 0) {
            assert!(crate::labels::RESERVED.contains(&name), "{name}");
        }
    }

    #[test]
    fn family_names_are_valid_and_do_not_clash() {
        let valid = |n: &str| {
            let mut chars = n.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        };
        let mut sample_names = std::collections::BTreeSet::new();
        for family in FAMILIES {
            assert!(valid(family.name), "{}", family.name);
            if let Some(unit) = family.unit {
                assert!(family.name.ends_with(&format!("_{unit}")), "{} lacks its unit suffix", family.name);
                assert!(matches!(family.kind, Kind::Gauge | Kind::Counter));
            }
            assert!(!family.help.is_empty());
            // Every name a family can put into the text must be its own
            // (the spec's "Suffixes" section: a gauge `foo_created` would
            // clash with a counter `foo`).
            let mut own = std::collections::BTreeSet::from([family.name.to_owned()]);
            own.insert(format!("{}{}", family.name, family.kind.suffix()));
            if family.kind == Kind::Counter {
                own.insert(format!("{}_created", family.name));
            }
            for name in own {
                assert!(sample_names.insert(name.clone()), "clash: {name}");
            }
        }
    }

    #[test]
    fn statesets_have_exactly_one_true_state() {
        for current in BOTTLENECK_STATES {
            let points = states("f", &BOTTLENECK_STATES, current);
            assert_eq!(points.iter().filter(|(_, v)| *v == Value::Unsigned(1)).count(), 1);
            assert_eq!(points.len(), BOTTLENECK_STATES.len());
        }
    }
}
