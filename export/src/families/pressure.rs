//! PSI stall time and share per resource.

use super::{Facts, Family, Kind, Point, Value};

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

pub(super) const FAMILIES: &[Family] = &[
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
];
