//! A job as GitLab's metrics report (`artifacts:reports:metrics`,
//! <https://docs.gitlab.com/ci/testing/metrics_reports/>): an OpenMetrics
//! exposition that GitLab's reader takes line by line and a merge request
//! compares with its target branch's, metric by metric.
//!
//! GitLab's reader keeps, of each line, the text before its first `#`,
//! split into shell words: the first word (the sample's name and labels,
//! their quotes removed) is the metric, the second its value, kept as a
//! string. Two reports are compared by that name and labels, and a value by
//! its string. So this format differs from the job's full exposition
//! ([`super::metrics`]) in what would make every metric of every run "new"
//! or "changed" there:
//!
//! * **labels that stay the same from run to run**: the step's name, its
//!   group (a platform of a multi-platform build) and its `--label`s,
//!   without `index` (a step added before it would rename it),
//!   `origin`, or the CI context (`ci_runner` differs between the runners
//!   of one pipeline); a name that repeats gets ` (2)`, ` (3)`, ... in the
//!   order of the job table, so no two samples share a label set;
//! * **no `#` in a label value** (GitLab would cut the line there, leaving
//!   an open quote that fails the whole report): it is written `%23`;
//! * **three significant digits**: a value at full precision differs in
//!   every run, so every metric would read as changed; rounded, a change
//!   shows once it reaches the third digit;
//! * **a number that is not the step's own** (measured where stepmon's
//!   rights reached: the enclosing cgroup, the machine) carries its `rung`
//!   and `bound`, as `stepmon_step_source_info` gives them in the full
//!   exposition, so that it is never read as the step's;
//! * **the headline numbers only**, those of the job table: each step's
//!   wall time, CPU time, memory peak, IO read and written, PSI `some`
//!   stall shares and exit code, its status (so that an interrupted or
//!   cached step reads as such), and the job's wall time, CPU time and
//!   memory peak. A number stepmon could not read has no line, as in the
//!   other expositions.

use std::fmt::Write as _;

use stepmon_model::source::{Bound, Group};
use stepmon_report::job::Entry;
use stepmon_report::job::table::job;
use stepmon_report::step::Step;

use super::metrics::{CPU, MEMORY_PEAK, STATUS, STATUS_STATES, WALL};
use crate::families::{self, Family, Value, escape};
use crate::openmetrics;

/// The step families this report keeps, by name (the job table's columns),
/// with the field group whose source their numbers come from.
const STEP_FAMILIES: [(&str, Option<Group>); 7] = [
    ("stepmon_step_wall_seconds", None),
    ("stepmon_step_cpu_usage_seconds", Some(Group::Cpu)),
    ("stepmon_step_memory_peak_bytes", Some(Group::Memory)),
    ("stepmon_step_io_read_bytes", Some(Group::Io)),
    ("stepmon_step_io_write_bytes", Some(Group::Io)),
    ("stepmon_step_pressure_stall_ratio", Some(Group::Pressure)),
    ("stepmon_step_exit_code", None),
];

/// Significant digits of every value (see the module docs).
const DIGITS: i32 = 3;

/// The job of `entries` as GitLab's metrics report, ending in `# EOF`.
#[must_use]
pub fn render(entries: &[Entry]) -> String {
    let job = job(entries, &[]);
    let steps: Vec<&Step> = job.steps.iter().map(|r| &entries[r.entry].step).collect();
    let groups: Vec<Option<&str>> = job.steps.iter().map(|r| r.group.as_deref()).collect();
    let identities = identities(&steps, &groups);
    let mut out: Vec<(&'static Family, String)> = Vec::new();
    for family in families::all() {
        let Some((_, group)) = STEP_FAMILIES.iter().find(|(name, _)| *name == family.name) else { continue };
        let mut lines = String::new();
        for (step, identity) in steps.iter().zip(&identities) {
            let source = group.map_or_else(Vec::new, |g| qualifier(step, g));
            for (extra, value) in families::points(family, step) {
                let labels: Vec<(&str, &str)> = identity
                    .iter()
                    .map(|(k, v)| (*k, v.as_str()))
                    .chain(source.iter().copied())
                    .chain(extra.iter().map(|(k, v)| (*k, v.as_str())))
                    .collect();
                write_sample(&mut lines, family, &labels, value);
            }
        }
        if !lines.is_empty() {
            out.push((family, lines));
        }
    }
    // Each step's status, so that an interrupted or cached step reads as
    // such (its numbers stop where the record does, or it has none).
    let mut lines = String::new();
    for (row, identity) in job.steps.iter().zip(&identities) {
        let current = STATUS_STATES.iter().find(|s| **s == row.status).copied().unwrap_or("ended");
        for (extra, value) in families::states(STATUS.name, &STATUS_STATES, current) {
            let labels: Vec<(&str, &str)> = identity
                .iter()
                .map(|(k, v)| (*k, v.as_str()))
                .chain(extra.iter().map(|(k, v)| (*k, v.as_str())))
                .collect();
            write_sample(&mut lines, &STATUS, &labels, value);
        }
    }
    if !lines.is_empty() {
        out.push((&STATUS, lines));
    }
    let totals = [
        (&WALL, job.wall_seconds.map(Value::Float)),
        (&CPU, Some(Value::Float(job.cpu_seconds))),
        (&MEMORY_PEAK, job.verdict.memory_peak_bytes.map(Value::Unsigned)),
    ];
    for (family, value) in totals {
        let mut lines = String::new();
        if let Some(value) = value {
            write_sample(&mut lines, family, &[], value);
        }
        if !lines.is_empty() {
            out.push((family, lines));
        }
    }
    openmetrics::frame(out)
}

/// The `rung` and `bound` labels of a number of `group` that is not the
/// step's own exact number (the enclosing cgroup's memory peak, the
/// machine's stall share: [`stepmon_model::source::Source::is_exact_for_step`]), so that it is
/// never read as the step's; none for the step's own numbers. A number
/// whose source changes between two runs is then another metric, as it
/// should be: the two are not comparable.
fn qualifier(step: &Step, group: Group) -> Vec<(&'static str, &'static str)> {
    match step.sources.get(group) {
        Some(source) if !source.is_exact_for_step() => {
            let bound = match source.bound {
                Bound::Exact => "exact",
                Bound::LowerBound => "lowerBound",
                Bound::UpperBound => "upperBound",
            };
            vec![("rung", source.rung.as_str()), ("bound", bound)]
        }
        _ => Vec::new(),
    }
}

/// Each step's labels: `step` (its name, numbered from its second use in
/// its group on), `group` (a platform of a multi-platform build) when it
/// has one, and its usable `--label`s.
fn identities<'a>(steps: &[&'a Step], groups: &[Option<&'a str>]) -> Vec<Vec<(&'a str, String)>> {
    let mut seen: Vec<(&str, Option<&str>)> = Vec::with_capacity(steps.len());
    steps
        .iter()
        .zip(groups)
        .map(|(step, group)| {
            let name = step.name.as_str();
            let uses = seen.iter().filter(|n| **n == (name, *group)).count();
            seen.push((name, *group));
            let name = if uses == 0 { name.to_owned() } else { format!("{name} ({})", uses + 1) };
            let mut labels = vec![("step", name)];
            if let Some(group) = group {
                labels.push(("group", (*group).to_owned()));
            }
            for label in step.run.iter().flat_map(|r| &r.labels) {
                let key = label.key.as_str();
                if stepmon_model::labels::usable_key(key) && labels.iter().all(|(k, _)| *k != key) {
                    labels.push((key, label.value.clone()));
                }
            }
            labels
        })
        .collect()
}

/// One sample line: the family's sample name, its labels with `#` escaped,
/// its value rounded; nothing for a value the family must not write.
fn write_sample(out: &mut String, family: &Family, labels: &[(&str, &str)], value: Value) {
    let Some(value) = rounded(value).render(family.kind) else { return };
    out.push_str(&families::sample_name(family));
    if !labels.is_empty() {
        out.push('{');
        for (i, (key, text)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{key}=\"{}\"", escape(text).replace('#', "%23"));
        }
        out.push('}');
    }
    let _ = writeln!(out, " {value}");
}

/// `value` to [`DIGITS`] significant digits.
fn rounded(value: Value) -> Value {
    match value {
        Value::Unsigned(v) => Value::Unsigned(round_unsigned(v)),
        Value::Signed(v) if v >= 0 => Value::Signed(i64::try_from(round_unsigned(v.unsigned_abs())).unwrap_or(v)),
        Value::Signed(v) => Value::Signed(v),
        Value::Float(v) => Value::Float(round_float(v)),
    }
}

fn round_unsigned(v: u64) -> u64 {
    let digits = v.checked_ilog10().map_or(1, |d| d + 1);
    let Some(drop) = digits.checked_sub(DIGITS.unsigned_abs()).filter(|d| *d > 0) else { return v };
    let step = 10u64.pow(drop);
    // Half up, saturating at the top of the range.
    (v / step).saturating_mul(step).saturating_add(if v % step >= step / 2 { step } else { 0 })
}

#[allow(clippy::cast_possible_truncation)]
fn round_float(v: f64) -> f64 {
    if !v.is_finite() || v == 0.0 {
        return v;
    }
    // The power of ten of the last digit kept; formatting with that many
    // decimals (and parsing back) rounds in decimal, as the reader sees it.
    let last = v.abs().log10().floor() as i32 - (DIGITS - 1);
    if last >= 0 {
        let step = 10f64.powi(last);
        return (v / step).round() * step;
    }
    let decimals = last.unsigned_abs() as usize;
    format!("{v:.decimals$}").parse().unwrap_or(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_three_significant_digits() {
        assert_eq!(round_unsigned(123_456), 123_000);
        assert_eq!(round_unsigned(123_500), 124_000);
        assert_eq!(round_unsigned(999_999), 1_000_000);
        assert_eq!(round_unsigned(987), 987);
        assert_eq!(round_unsigned(0), 0);
        assert_eq!(round_unsigned(u64::MAX), 18_400_000_000_000_000_000);
        assert_eq!(round_unsigned(u64::MAX - 10u64.pow(17)), 18_300_000_000_000_000_000);
        for (v, want) in
            [(12.345, "12.3"), (0.001_234_5, "0.00123"), (12_345.6, "12300.0"), (0.0, "0.0"), (-2.468, "-2.47")]
        {
            assert_eq!(format!("{:?}", round_float(v)), want, "{v}");
        }
        assert_eq!(rounded(Value::Signed(137)), Value::Signed(137));
        assert_eq!(rounded(Value::Signed(-1)), Value::Signed(-1));
    }

    #[test]
    fn a_hash_in_a_label_value_is_escaped() {
        let mut out = String::new();
        write_sample(&mut out, &WALL, &[("step", "build #2 \"x\"")], Value::Float(1.0));
        assert_eq!(out, "stepmon_job_wall_seconds{step=\"build %232 \\\"x\\\"\"} 1.0\n");
    }
}
