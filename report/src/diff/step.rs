//! Two runs of one step compared: both sides, the warnings about their
//! context, every field judged, and the verdict.

use serde::Serialize;

use crate::step::{BUILDKIT_FIRST_SAMPLE_SECONDS, Origin, Step, WallSource};
use crate::units;
use stepmon_model::source::{Group, Rung};
use stepmon_model::verdict::{MachineLoad, Thresholds};

use super::commands::{self, CommandDiff};
use super::fields::{FIELDS, compare, group_of, rung_of};
use super::noise::{busy_share, estimate_allowance};
use super::{Comparability, Direction, FieldDiff};

/// The overall outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum DiffVerdict {
    /// Only increases beyond the noise.
    Heavier,
    /// Only decreases beyond the noise.
    Lighter,
    /// Some fields up, some down beyond the noise.
    Mixed,
    /// No change beyond the noise.
    SameWithinNoise,
    /// No field was measured on both sides.
    NotComparable,
}

impl DiffVerdict {
    /// `heavier`, `lighter`, `mixed`, `same within noise`, `not comparable`.
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            DiffVerdict::Heavier => "heavier",
            DiffVerdict::Lighter => "lighter",
            DiffVerdict::Mixed => "mixed",
            DiffVerdict::SameWithinNoise => "same within noise",
            DiffVerdict::NotComparable => "not comparable",
        }
    }
}

/// One side of the comparison, as far as the diff needs it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Side {
    /// The step's name.
    pub name: String,
    /// The command it ran (argv), when known.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// Where it was recorded.
    pub origin: Origin,
    /// How its wall time is known.
    pub wall_source: WallSource,
    /// The machine's load class during the step.
    pub machine_load: MachineLoad,
    /// The busy share used to widen tolerances (module docs), when known.
    pub busy_share: Option<f64>,
}

/// Two runs of the same step compared field by field.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StepDiff {
    /// The earlier (reference) run.
    pub before: Side,
    /// The later run.
    pub after: Side,
    /// The busy share the time-like tolerances were widened by (the larger
    /// of the two sides'; 0 when neither is known).
    pub busy_share: f64,
    /// Every field.
    pub fields: Vec<FieldDiff>,
    /// The outcome.
    pub verdict: DiffVerdict,
    /// The significant fields (`field` keys) that are not derived, largest
    /// relative change first.
    pub drivers: Vec<&'static str>,
    /// Why the comparison may mislead: different commands, hosts, kernels,
    /// cgroup layouts, controllers, exit status; fields measured on one side
    /// only.
    pub warnings: Vec<String>,
    /// The verdict in one sentence.
    pub reason: String,
    /// Each command's CPU and largest peak RSS compared (from the runs'
    /// per-process records; empty when neither has them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandDiff>,
}

fn side(step: &Step, thresholds: &Thresholds) -> Side {
    let machine = crate::verdict::machine_of(step, thresholds);
    Side {
        name: step.name.clone(),
        command: step.command().to_vec(),
        origin: step.origin.clone(),
        wall_source: step.wall_source,
        machine_load: machine.class,
        busy_share: busy_share(&machine),
    }
}

/// A step's command for a warning: quoted, else its name.
fn shown_command(step: &Step) -> String {
    if step.command().is_empty() { step.name.clone() } else { crate::step::quote_command(step.command()) }
}

/// Why the two runs may not be the same thing measured twice.
fn context_warnings(before: &Step, after: &Step, sides: (&Side, &Side)) -> Vec<String> {
    let mut out = Vec::new();
    let command = |s: &Step| s.run.as_ref().filter(|r| !r.command.is_empty()).map(|r| r.command.clone());
    let same_command = match (command(before), command(after)) {
        (Some(b), Some(a)) => a == b,
        _ => before.name == after.name,
    };
    if !same_command {
        out.push(format!("the commands differ: `{}` before, `{}` after", shown_command(before), shown_command(after)));
    }
    if std::mem::discriminant(&before.origin) != std::mem::discriminant(&after.origin) {
        out.push(
            "one run was recorded by stepmon, the other by BuildKit: BuildKit has no start sample, no memory.current, pids.peak or oom_group_kill"
                .to_owned(),
        );
    }
    if let (Some(b), Some(a)) = (&before.run, &after.run) {
        let pairs = [
            ("kernels", &b.host.kernel, &a.host.kernel),
            ("cgroup layouts", &b.host.cgroup_layout, &a.host.cgroup_layout),
            ("cgroup2 mounts", &b.host.cgroup2_mount, &a.host.cgroup2_mount),
        ];
        for (what, b, a) in pairs {
            if b != a {
                out.push(format!("different {what}: {b} before, {a} after"));
            }
        }
        if b.host.psi != a.host.psi {
            out.push("PSI was available in one run only".to_owned());
        }
        let (mut bc, mut ac) = (b.controllers.clone(), a.controllers.clone());
        bc.sort();
        ac.sort();
        if bc != ac {
            out.push(format!("different controllers: {} before, {} after", bc.join(","), ac.join(",")));
        }
        if (b.exit_code, b.signal) != (a.exit_code, a.signal) {
            let status = |code: Option<i32>, signal: Option<i32>| match (code, signal) {
                (Some(c), _) => format!("exit {c}"),
                (None, Some(s)) => format!("signal {s}"),
                _ => "did not start".to_owned(),
            };
            out.push(format!(
                "different outcome: {} before, {} after",
                status(b.exit_code, b.signal),
                status(a.exit_code, a.signal)
            ));
        }
    }
    for (which, side) in [("before", sides.0), ("after", sides.1)] {
        if side.busy_share.is_none() {
            out.push(format!("the machine's load is unknown for the {which} run: time tolerances not widened for it"));
        }
        if side.wall_source == WallSource::EstimatedFromSamples {
            out.push(format!(
                "the {which} run's wall time is estimated from BuildKit's samples (± {} s)",
                BUILDKIT_FIRST_SAMPLE_SECONDS
            ));
        }
    }
    out
}

impl StepDiff {
    /// Compares `before` with `after`, judging the machine by the default
    /// [`Thresholds`].
    #[must_use]
    pub fn between(before: &Step, after: &Step) -> StepDiff {
        let thresholds = Thresholds::default();
        let sides = (side(before, &thresholds), side(after, &thresholds));
        let busy = [sides.0.busy_share, sides.1.busy_share].into_iter().flatten().fold(0.0, f64::max);
        let estimate = estimate_allowance(before, after);
        let fields: Vec<FieldDiff> = FIELDS.iter().map(|spec| compare(spec, before, after, busy, estimate)).collect();
        let mut warnings = context_warnings(before, after, (&sides.0, &sides.1));
        for f in &fields {
            match f.comparability {
                Comparability::MissingBefore => {
                    warnings.push(format!("{} not comparable: not measured in the before run", f.label));
                }
                Comparability::MissingAfter => {
                    warnings.push(format!("{} not comparable: not measured in the after run", f.label));
                }
                Comparability::DifferentSources => {
                    let group = group_of(f.field).unwrap_or(Group::Cpu);
                    let words = |s: &Step| rung_of(s, group).map_or("—", Rung::words);
                    warnings.push(format!(
                        "{} not comparable: measured from the {} before and the {} after",
                        f.label,
                        words(before),
                        words(after)
                    ));
                }
                _ => {}
            }
        }
        let (verdict, drivers, reason) = verdict_of(&fields, busy);
        let commands = commands::between(before, after, busy);
        StepDiff {
            before: sides.0,
            after: sides.1,
            busy_share: busy,
            fields,
            verdict,
            drivers,
            warnings,
            reason,
            commands,
        }
    }

    /// The fields whose change is beyond the noise.
    pub fn significant(&self) -> impl Iterator<Item = &FieldDiff> {
        self.fields.iter().filter(|f| f.significant)
    }
}

/// The verdict on `fields` (judged on a machine `busy`), the fields that
/// drive it, and the sentence saying so.
pub(super) fn verdict_of(fields: &[FieldDiff], busy: f64) -> (DiffVerdict, Vec<&'static str>, String) {
    let mut significant: Vec<&FieldDiff> = fields.iter().filter(|f| f.significant && !f.derived).collect();
    // Largest relative change first; a change from 0 (no relative change) leads.
    significant.sort_by(|a, b| {
        let key = |f: &FieldDiff| f.relative_change.map_or(f64::INFINITY, f64::abs);
        key(b).total_cmp(&key(a))
    });
    let up = significant.iter().any(|f| f.direction == Direction::Up);
    let down = significant.iter().any(|f| f.direction == Direction::Down);
    let compared = fields.iter().any(|f| f.comparability == Comparability::Compared);
    let verdict = match (compared, up, down) {
        (false, _, _) => DiffVerdict::NotComparable,
        (true, true, true) => DiffVerdict::Mixed,
        (true, true, false) => DiffVerdict::Heavier,
        (true, false, true) => DiffVerdict::Lighter,
        (true, false, false) => DiffVerdict::SameWithinNoise,
    };
    let drivers: Vec<&'static str> = significant.iter().map(|f| f.field).collect();
    let changes = significant.iter().map(|f| describe_change(f)).collect::<Vec<_>>().join(", ");
    let reason = match verdict {
        DiffVerdict::NotComparable => "not comparable: no field was measured in both runs".to_owned(),
        DiffVerdict::SameWithinNoise => format!(
            "same within noise: no field changed beyond its tolerance ({} fields compared{})",
            fields.iter().filter(|f| f.comparability == Comparability::Compared).count(),
            if busy > 0.0 {
                format!(", time tolerances widened by {} for a busy machine", units::percent(busy))
            } else {
                String::new()
            }
        ),
        other => format!("{}: {changes}", other.words()),
    };
    (verdict, drivers, reason)
}

/// "CPU time +50.0%": one field's change, relative where it can be.
fn describe_change(f: &FieldDiff) -> String {
    let change = f.change.unwrap_or(0.0);
    let sign = if change < 0.0 { "-" } else { "+" };
    match f.relative_change {
        Some(r) => format!("{} {sign}{}", f.label, units::percent(r.abs())),
        None => format!("{} {sign}{}", f.label, f.kind.show(change)),
    }
}
