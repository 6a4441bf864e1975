//! The noise model: each kind of field's tolerance (relative, floor, how a
//! busy machine widens it), and one field judged by it.

use serde::Serialize;

use crate::step::{BUILDKIT_FIRST_SAMPLE_SECONDS, Step, WallSource};
use stepmon_model::verdict::MachineVerdict;

/// Which field, how to read it from a step.
pub(super) struct FieldSpec {
    pub(super) field: &'static str,
    pub(super) label: &'static str,
    pub(super) kind: FieldKind,
    pub(super) get: fn(&Step) -> Option<f64>,
}

/// Relative tolerance of CPU time (user, system, total, throttled).
pub const CPU_TIME_RELATIVE: f64 = 0.05;
/// Relative tolerance of wall time.
pub const WALL_RELATIVE: f64 = 0.10;
/// Relative tolerance of average cores (CPU time / wall time).
pub const CORES_RELATIVE: f64 = 0.10;
/// Relative tolerance of memory (peak, anonymous, page cache).
pub const MEMORY_RELATIVE: f64 = 0.05;
/// Relative tolerance of block IO bytes.
pub const IO_RELATIVE: f64 = 0.01;
/// Relative tolerance of network bytes.
pub const NET_RELATIVE: f64 = 0.01;
/// Relative tolerance of PSI stall time (it depends on scheduling luck).
pub const STALL_RELATIVE: f64 = 0.25;
/// Relative tolerance of the peak number of tasks.
pub const TASKS_RELATIVE: f64 = 0.10;

/// Absolute floor of CPU-time changes, s.
pub const CPU_TIME_FLOOR_SECONDS: f64 = 0.010;
/// Absolute floor of wall-time changes, s (process start-up jitter).
pub const WALL_FLOOR_SECONDS: f64 = 0.100;
/// Absolute floor of average-cores changes.
pub const CORES_FLOOR: f64 = 0.05;
/// Absolute floor of memory changes, bytes.
pub const MEMORY_FLOOR_BYTES: f64 = 1_048_576.0;
/// Absolute floor of block IO changes, bytes.
pub const IO_FLOOR_BYTES: f64 = 1_048_576.0;
/// Absolute floor of network changes, bytes.
pub const NET_FLOOR_BYTES: f64 = 65_536.0;
/// Absolute floor of stall-time changes, s.
pub const STALL_FLOOR_SECONDS: f64 = 0.050;
/// Absolute floor of task-count changes.
pub const TASKS_FLOOR: f64 = 1.0;

/// How much of the busy share widens wall, cores and stall tolerances.
pub const BUSY_WIDENING_TIME: f64 = 1.0;
/// How much of the busy share widens CPU-time tolerances.
pub const BUSY_WIDENING_CPU: f64 = 0.25;

/// The kind of a field, which sets its noise tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum FieldKind {
    /// Wall time, s.
    Wall,
    /// CPU time, s.
    CpuTime,
    /// Average cores.
    Cores,
    /// Memory, bytes.
    Memory,
    /// Block IO, bytes.
    IoBytes,
    /// Network traffic, bytes.
    NetBytes,
    /// PSI stall time, s.
    Stall,
    /// Number of tasks.
    Tasks,
    /// Event counters (OOM kills): every change is significant.
    Events,
}

impl FieldKind {
    /// The relative tolerance before the machine's context widens it.
    #[must_use]
    pub fn base_relative(self) -> f64 {
        match self {
            FieldKind::Wall => WALL_RELATIVE,
            FieldKind::CpuTime => CPU_TIME_RELATIVE,
            FieldKind::Cores => CORES_RELATIVE,
            FieldKind::Memory => MEMORY_RELATIVE,
            FieldKind::IoBytes => IO_RELATIVE,
            FieldKind::NetBytes => NET_RELATIVE,
            FieldKind::Stall => STALL_RELATIVE,
            FieldKind::Tasks => TASKS_RELATIVE,
            FieldKind::Events => 0.0,
        }
    }

    /// The absolute floor, in the field's unit.
    #[must_use]
    pub fn floor(self) -> f64 {
        match self {
            FieldKind::Wall => WALL_FLOOR_SECONDS,
            FieldKind::CpuTime => CPU_TIME_FLOOR_SECONDS,
            FieldKind::Cores => CORES_FLOOR,
            FieldKind::Memory => MEMORY_FLOOR_BYTES,
            FieldKind::IoBytes => IO_FLOOR_BYTES,
            FieldKind::NetBytes => NET_FLOOR_BYTES,
            FieldKind::Stall => STALL_FLOOR_SECONDS,
            FieldKind::Tasks => TASKS_FLOOR,
            FieldKind::Events => 0.0,
        }
    }

    /// How much of the busy share is added to the relative tolerance.
    #[must_use]
    pub fn busy_widening(self) -> f64 {
        match self {
            FieldKind::Wall | FieldKind::Cores | FieldKind::Stall => BUSY_WIDENING_TIME,
            FieldKind::CpuTime => BUSY_WIDENING_CPU,
            _ => 0.0,
        }
    }
}

/// The noise allowance a field was judged by.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Tolerance {
    /// Relative tolerance of the `before` value, widened.
    pub relative: f64,
    /// Of which added for the machine's context.
    pub widened_by: f64,
    /// Absolute floor, in the field's unit.
    pub absolute: f64,
    /// The change a value had to exceed: max(relative × |before|, absolute).
    pub threshold: f64,
}

/// Whether a field could be compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Comparability {
    /// Measured on both sides.
    Compared,
    /// Not measured in the `before` run.
    MissingBefore,
    /// Not measured in the `after` run.
    MissingAfter,
    /// Measured on neither side.
    MissingBoth,
    /// Measured on both sides, but from different rungs of the measurement
    /// ladder (e.g. the step's cgroup before, its process tree after): not
    /// the same quantity, so not compared.
    DifferentSources,
}

/// Which way a field moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Direction {
    /// Up by more than the tolerance (costlier).
    Up,
    /// Down by more than the tolerance.
    Down,
    /// Within the tolerance.
    WithinNoise,
    /// Not compared.
    Unknown,
}

/// One field, before and after.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FieldDiff {
    /// Key in the summary's JSON (`cpu.usageSeconds`).
    pub field: &'static str,
    /// For people (`CPU time`).
    pub label: &'static str,
    /// Kind of value.
    pub kind: FieldKind,
    /// The `before` value, in the field's unit (s, bytes, cores, count).
    pub before: Option<f64>,
    /// The `after` value.
    pub after: Option<f64>,
    /// after − before.
    pub change: Option<f64>,
    /// (after − before) / before; `None` when before is 0 or not measured.
    pub relative_change: Option<f64>,
    /// Measured on both sides or not.
    pub comparability: Comparability,
    /// The allowance it was judged by (when compared).
    pub tolerance: Option<Tolerance>,
    /// The change exceeds the tolerance.
    pub significant: bool,
    /// Which way.
    pub direction: Direction,
    /// Computed from other fields (average cores): not counted in the verdict.
    pub derived: bool,
}

/// The largest of the machine's signs of being busy with other work
/// (module docs). The machine's CPU pressure counts the step's own stalls
/// too (a step throttled by its own `cpu.max` stalls machine-wide), so only
/// the machine stall beyond the step's own counts.
pub(super) fn busy_share(machine: &MachineVerdict) -> Option<f64> {
    let machine_stall =
        machine.machine_cpu_stall_share.map(|m| (m - machine.step_cpu_stall_share.unwrap_or(0.0)).max(0.0));
    [machine.others_busy_share, machine.steal_share, machine_stall]
        .into_iter()
        .flatten()
        .filter(|v| v.is_finite())
        .reduce(f64::max)
}

/// Extra allowance for an estimated (BuildKit) wall time: (absolute s,
/// relative share of the shorter wall).
pub(super) fn estimate_allowance(before: &Step, after: &Step) -> (f64, f64) {
    let estimated = [before, after].iter().any(|s| s.wall_source == WallSource::EstimatedFromSamples);
    if !estimated {
        return (0.0, 0.0);
    }
    let shortest = [before.wall_seconds, after.wall_seconds].into_iter().flatten().fold(f64::INFINITY, f64::min);
    let relative = if shortest.is_finite() && shortest > 0.0 { BUILDKIT_FIRST_SAMPLE_SECONDS / shortest } else { 0.0 };
    (BUILDKIT_FIRST_SAMPLE_SECONDS, relative)
}

/// The diff of `spec`'s values `(before, after)` by the noise model:
/// `different` when they were measured from different sources.
pub(super) fn judge(
    spec: &FieldSpec,
    (b, a): (Option<f64>, Option<f64>),
    different: bool,
    busy: f64,
    estimate: (f64, f64),
) -> FieldDiff {
    let comparability = match (b, a) {
        (Some(_), Some(_)) if different => Comparability::DifferentSources,
        (Some(_), Some(_)) => Comparability::Compared,
        (None, Some(_)) => Comparability::MissingBefore,
        (Some(_), None) => Comparability::MissingAfter,
        (None, None) => Comparability::MissingBoth,
    };
    let mut diff = FieldDiff {
        field: spec.field,
        label: spec.label,
        kind: spec.kind,
        before: b,
        after: a,
        change: None,
        relative_change: None,
        comparability,
        tolerance: None,
        significant: false,
        direction: Direction::Unknown,
        derived: spec.kind == FieldKind::Cores,
    };
    let (Some(b), Some(a), Comparability::Compared) = (b, a, comparability) else { return diff };
    let change = a - b;
    let widened_by = spec.kind.busy_widening() * busy;
    let (extra_floor, extra_relative) = match spec.kind {
        FieldKind::Wall => (estimate.0, 0.0),
        FieldKind::Cores => (0.0, estimate.1),
        _ => (0.0, 0.0),
    };
    let relative = spec.kind.base_relative() + widened_by + extra_relative;
    let absolute = spec.kind.floor() + extra_floor;
    let threshold = (relative * b.abs()).max(absolute);
    let significant = change.abs() > threshold;
    diff.change = Some(change);
    diff.relative_change = (b != 0.0).then(|| change / b.abs());
    diff.tolerance = Some(Tolerance { relative, widened_by: widened_by + extra_relative, absolute, threshold });
    diff.significant = significant;
    diff.direction = match (significant, change > 0.0) {
        (false, _) => Direction::WithinNoise,
        (true, true) => Direction::Up,
        (true, false) => Direction::Down,
    };
    diff
}
