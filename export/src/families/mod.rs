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
//! [`stepmon_model::labels::usable_key`] accepts and that no earlier label took:
//! a hand-edited document cannot make a sample carry a name twice).
//!
//! A report of more than steps adds its own families ([`Family::described`],
//! its samples given to [`lines`]) and frames them with the steps' ones
//! ([`crate::openmetrics::frame`], [`crate::prometheus::frame`]): a job's
//! (`crate::job`), a BuildKit build's (stepmon-import).

use std::fmt::Write as _;

use stepmon_model::verdict::Verdicts;
use stepmon_report::step::Step;

mod advice;
mod cpu;
mod io;
mod labels;
mod machine;
mod memory;
mod network;
mod pressure;
mod step;
mod verdicts;

pub(crate) use labels::escape;
use labels::{identity, write_labels};

/// The metric types this export uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// A value that goes up and down.
    Gauge,
    /// A running total (`_total`).
    Counter,
    /// One of a set of states, a sample per state ([`states`]).
    StateSet,
    /// Labels of a thing, value 1 (`_info`).
    Info,
}

impl Kind {
    /// The OpenMetrics type name.
    #[must_use]
    pub fn name(self) -> &'static str {
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
#[non_exhaustive]
pub enum Value {
    /// A count, a byte size.
    Unsigned(u64),
    /// A signed integer.
    Signed(i64),
    /// Seconds, shares, cores.
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
pub type Point = (Vec<(&'static str, String)>, Value);

/// One family: name (without the type's suffix), type, unit, help, and
/// what it reads off a step.
#[derive(Debug)]
pub struct Family {
    /// Its name, without the type's suffix (`stepmon_build_steps`).
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// Its unit (`seconds`, `bytes`), when it has one.
    pub unit: Option<&'static str>,
    /// Its help text.
    pub help: &'static str,
    pub(super) points: fn(&Facts<'_>) -> Vec<Point>,
}

/// A step and its verdicts, computed once.
pub(super) struct Facts<'a> {
    pub(super) step: &'a Step,
    pub(super) verdicts: Verdicts,
}

pub(super) fn one(value: Option<Value>) -> Vec<Point> {
    value.map(|v| (Vec::new(), v)).into_iter().collect()
}

pub(super) fn u(v: Option<u64>) -> Vec<Point> {
    one(v.map(Value::Unsigned))
}

pub(super) fn f(v: Option<f64>) -> Vec<Point> {
    one(v.map(Value::Float))
}

/// A stateset's samples: one per state, the current one 1 (the spec:
/// "ENUMs MUST have exactly one Boolean which is true").
#[must_use]
pub fn states(family: &'static str, all: &[&'static str], current: &'static str) -> Vec<Point> {
    all.iter().map(|s| (vec![(family, (*s).to_owned())], Value::Unsigned(u64::from(*s == current)))).collect()
}

/// The families of each metric group, in output order.
const GROUPS: [&[Family]; 9] = [
    step::FAMILIES,
    cpu::FAMILIES,
    memory::FAMILIES,
    io::FAMILIES,
    pressure::FAMILIES,
    network::FAMILIES,
    machine::FAMILIES,
    verdicts::FAMILIES,
    advice::FAMILIES,
];

/// Every family, in output order.
pub(crate) fn all() -> impl Iterator<Item = &'static Family> {
    GROUPS.iter().flat_map(|group| group.iter())
}

/// The samples `family` reads off `step`: their own labels (beyond the
/// step's identity) and values.
pub(crate) fn points(family: &Family, step: &Step) -> Vec<Point> {
    (family.points)(&Facts { step, verdicts: step.verdicts() })
}

/// The sample name of a family's samples (the name plus its type's suffix).
pub(crate) fn sample_name(family: &Family) -> String {
    format!("{}{}", family.name, family.kind.suffix())
}

impl Family {
    /// A family whose samples its caller gives ([`lines`]): the job's own.
    #[must_use]
    pub const fn described(name: &'static str, kind: Kind, unit: Option<&'static str>, help: &'static str) -> Family {
        Family { name, kind, unit, help, points: |_| Vec::new() }
    }
}

/// A sample the caller gives: of the step at this index of `steps` (its
/// identity labels first) or of none, its own labels, its value.
pub type Given = (Option<usize>, Vec<(&'static str, String)>, Value);

/// The sample lines of `family` for `given` samples of `steps`.
#[must_use]
pub fn lines(family: &Family, steps: &[&Step], given: &[Given]) -> String {
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
    for family in all() {
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
mod tests;
