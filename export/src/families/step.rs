//! The step itself: what is known about it beyond its numbers, where each
//! field group came from, its exit code and wall time.

use stepmon_report::step::Origin;

use super::{Facts, Family, Kind, Point, Value, f, one};

/// The `stepmon_step` info sample: what is known about the step beyond its
/// numbers. Unknown values are empty label values, which the spec says
/// "SHOULD be treated as if the label was not present" — so every sample of
/// the family has the same label names, as Metrics SHOULD.
fn info(x: &Facts<'_>) -> Vec<Point> {
    let step = x.step;
    let (step_id, digest) = match &step.origin {
        Origin::BuildKit { step_id, digest } => (step_id.clone(), digest.clone().unwrap_or_default()),
        _ => (String::new(), String::new()),
    };
    let run = step.run.as_ref();
    let text = |v: Option<i32>| v.map_or_else(String::new, |v| v.to_string());
    let labels = vec![
        ("exit_code", text(run.and_then(|r| r.exit_code))),
        ("signal", text(run.and_then(|r| r.signal))),
        ("wall_source", step.wall_source.name().to_owned()),
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
    stepmon_model::source::Group::ALL
        .iter()
        .filter_map(|group| {
            let source = x.step.sources.get(*group)?;
            let bound = match source.bound {
                stepmon_model::source::Bound::Exact => "exact",
                stepmon_model::source::Bound::LowerBound => "lowerBound",
                stepmon_model::source::Bound::UpperBound => "upperBound",
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

pub(super) const FAMILIES: &[Family] = &[
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
        name: "stepmon_step_end_timestamp_seconds",
        kind: Kind::Gauge,
        unit: Some("seconds"),
        help: "When the step ended (Unix time): a run seen in several scrapes has one end, so a reader of the history (stepmon baseline check prometheus+http://...) counts it once.",
        points: |x| f(x.step.end.map(end_seconds)),
    },
];

/// `t` as Unix seconds with its microseconds (exact in an f64 until 2255).
#[allow(clippy::cast_precision_loss)]
fn end_seconds(t: jiff::Timestamp) -> f64 {
    t.as_microsecond() as f64 / 1e6
}
