//! `stepmon diff`: two runs of the same step compared field by field, with
//! the changes beyond the noise flagged.
//!
//! # Noise model
//!
//! A change is *significant* when it is larger than both
//!
//! * a **relative tolerance** of the `before` value, per kind of field
//!   ([`FieldKind::base_relative`]): CPU time 5 %, wall time 10 %, memory
//!   5 %, IO and network bytes 1 %, PSI stall time 25 %, tasks 10 %, OOM
//!   kills 0 (every change counts); and
//! * an **absolute floor** ([`FieldKind::floor`]), so that tiny values do
//!   not flag: 10 ms of CPU, 100 ms of wall time, 0.05 cores, 1 MiB of
//!   memory or IO, 64 KiB of network traffic, 50 ms of stall, 1 task.
//!
//! The machine's context widens the time-like tolerances: a busy machine
//! stretches wall time and stall time, and inflates CPU time a little
//! (shared caches, SMT siblings, frequency). Each run's *busy share* is the
//! largest of its [`MachineVerdict`]'s `others_busy_share` (other work's
//! share of all CPU time), `steal_share`, and `machine_cpu_stall_share`
//! minus `step_cpu_stall_share` (the machine's CPU pressure includes the
//! step's own: a step throttled by its own `cpu.max` makes the whole
//! machine look stalled); the
//! larger of the two runs' shares, times the field kind's
//! [`FieldKind::busy_widening`] (1 for wall, cores and stall, 1/4 for CPU
//! time, 0 for memory, IO and counters), is added to the relative
//! tolerance. A run whose machine numbers are unknown widens nothing, and a
//! warning says so.
//!
//! A BuildKit step's wall time estimated from its samples (its first sample
//! comes about [`BUILDKIT_FIRST_SAMPLE_SECONDS`] into the step) adds that
//! much to the wall floor, and the matching share to the average-cores
//! tolerance; one from its vertex (a history bundle's status stream) is
//! the step's real start and end and adds nothing.
//!
//! A field measured on one side only is *not comparable* — never read as 0.
//!
//! # Verdict
//!
//! Every field is a cost, so a significant increase is "heavier" and a
//! decrease "lighter". Average cores is CPU time / wall time: it is shown
//! and judged, but it does not count towards the verdict
//! ([`FieldDiff::derived`]) — its change is the CPU and wall changes', and
//! the same work spread over a longer wall time is not "lighter". [`DiffVerdict::Heavier`] when only increases are
//! significant, [`DiffVerdict::Lighter`] when only decreases,
//! [`DiffVerdict::Mixed`] when both, [`DiffVerdict::SameWithinNoise`] when
//! none, [`DiffVerdict::NotComparable`] when no field was measured on both
//! sides. The significant fields, largest relative change first, are the
//! drivers.
//!
//! ```
//! use stepmon_report::{RunDocument, Step, diff::{DiffVerdict, StepDiff}};
//!
//! let run = |cpu_ns: u64| -> Step {
//!     let json = format!(r#"{{"resourceUsage": {{"samples": [
//!         {{"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {{"usageNanos": 0}}, "pidsStat": {{}}}},
//!         {{"timestamp": "2026-11-30T10:00:04Z", "cpuStat": {{"usageNanos": {cpu_ns}}}, "pidsStat": {{}}}}]}},
//!       "stepmon": {{"command": ["make"], "start": "2026-11-30T10:00:00Z", "end": "2026-11-30T10:00:04Z"}}}}"#);
//!     Step::from_run(&serde_json::from_str::<RunDocument>(&json).unwrap())
//! };
//! let diff = StepDiff::between(&run(2_000_000_000), &run(3_000_000_000));
//! assert_eq!(diff.verdict, DiffVerdict::Heavier);
//! assert_eq!(diff.drivers[0], "cpu.usageSeconds");
//! println!("{}", diff.render_text());
//! ```

mod commands;

use std::fmt::Write as _;

use serde::Serialize;

use crate::source::{Group, Rung};
use crate::step::{BUILDKIT_FIRST_SAMPLE_SECONDS, Origin, Step, WallSource, label};
use crate::units;
use crate::verdict::{MachineLoad, MachineVerdict, Thresholds};

pub use commands::CommandDiff;

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

    fn show(self, value: f64) -> String {
        match self {
            FieldKind::Wall | FieldKind::CpuTime | FieldKind::Stall => units::seconds(value.abs()),
            FieldKind::Memory | FieldKind::IoBytes | FieldKind::NetBytes => bytes(value.abs()),
            FieldKind::Cores => format!("{:.2}", value.abs()),
            FieldKind::Tasks | FieldKind::Events => format!("{:.0}", value.abs()),
        }
    }
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn bytes(value: f64) -> String {
    units::bytes(value.round().max(0.0) as u64)
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

/// Which field, how to read it from a step.
struct FieldSpec {
    field: &'static str,
    label: &'static str,
    kind: FieldKind,
    get: fn(&Step) -> Option<f64>,
}

#[allow(clippy::cast_precision_loss)]
fn float(v: Option<u64>) -> Option<f64> {
    v.map(|v| v as f64)
}

const FIELDS: &[FieldSpec] = &[
    FieldSpec { field: "wallSeconds", label: "wall time", kind: FieldKind::Wall, get: |s| s.wall_seconds },
    FieldSpec {
        field: "cpu.userSeconds",
        label: "CPU user",
        kind: FieldKind::CpuTime,
        get: |s| s.summary.cpu.user_seconds,
    },
    FieldSpec {
        field: "cpu.systemSeconds",
        label: "CPU system",
        kind: FieldKind::CpuTime,
        get: |s| s.summary.cpu.system_seconds,
    },
    FieldSpec {
        field: "cpu.usageSeconds",
        label: "CPU time",
        kind: FieldKind::CpuTime,
        get: |s| s.summary.cpu.usage_seconds,
    },
    FieldSpec {
        field: "cpu.averageCores",
        label: "average cores",
        kind: FieldKind::Cores,
        get: |s| s.summary.cpu.average_cores,
    },
    FieldSpec {
        field: "cpu.throttledSeconds",
        label: "throttled",
        kind: FieldKind::CpuTime,
        get: |s| s.summary.cpu.throttled_seconds,
    },
    FieldSpec {
        field: "memory.peakBytes",
        label: "memory peak",
        kind: FieldKind::Memory,
        get: |s| float(s.summary.memory.peak_bytes),
    },
    FieldSpec {
        field: "memory.anonAtPeakBytes",
        label: "anon at peak",
        kind: FieldKind::Memory,
        get: |s| float(s.summary.memory.anon_at_peak_bytes),
    },
    FieldSpec {
        field: "memory.fileAtPeakBytes",
        label: "page cache at peak",
        kind: FieldKind::Memory,
        get: |s| float(s.summary.memory.file_at_peak_bytes),
    },
    FieldSpec {
        field: "memory.oomKills",
        label: "OOM kills",
        kind: FieldKind::Events,
        get: |s| float(s.summary.memory.oom_kills),
    },
    FieldSpec {
        field: "io.readBytes",
        label: "IO read",
        kind: FieldKind::IoBytes,
        get: |s| float(s.summary.io.read_bytes),
    },
    FieldSpec {
        field: "io.writeBytes",
        label: "IO written",
        kind: FieldKind::IoBytes,
        get: |s| float(s.summary.io.write_bytes),
    },
    FieldSpec { field: "pidsPeak", label: "tasks peak", kind: FieldKind::Tasks, get: |s| float(s.summary.pids_peak) },
    FieldSpec {
        field: "cpuStall.someSeconds",
        label: "CPU stall",
        kind: FieldKind::Stall,
        get: |s| s.summary.cpu_stall.some_seconds,
    },
    FieldSpec {
        field: "memoryStall.someSeconds",
        label: "memory stall",
        kind: FieldKind::Stall,
        get: |s| s.summary.memory_stall.some_seconds,
    },
    FieldSpec {
        field: "ioStall.someSeconds",
        label: "IO stall",
        kind: FieldKind::Stall,
        get: |s| s.summary.io_stall.some_seconds,
    },
    FieldSpec {
        field: "netRxBytes",
        label: "network received",
        kind: FieldKind::NetBytes,
        get: |s| float(s.summary.net_rx_bytes),
    },
    FieldSpec {
        field: "netTxBytes",
        label: "network sent",
        kind: FieldKind::NetBytes,
        get: |s| float(s.summary.net_tx_bytes),
    },
];

/// The largest of the machine's signs of being busy with other work
/// (module docs). The machine's CPU pressure counts the step's own stalls
/// too (a step throttled by its own `cpu.max` stalls machine-wide), so only
/// the machine stall beyond the step's own counts.
fn busy_share(machine: &MachineVerdict) -> Option<f64> {
    let machine_stall =
        machine.machine_cpu_stall_share.map(|m| (m - machine.step_cpu_stall_share.unwrap_or(0.0)).max(0.0));
    [machine.others_busy_share, machine.steal_share, machine_stall]
        .into_iter()
        .flatten()
        .filter(|v| v.is_finite())
        .reduce(f64::max)
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

/// Extra allowance for an estimated (BuildKit) wall time: (absolute s,
/// relative share of the shorter wall).
fn estimate_allowance(before: &Step, after: &Step) -> (f64, f64) {
    let estimated = [before, after].iter().any(|s| s.wall_source == WallSource::EstimatedFromSamples);
    if !estimated {
        return (0.0, 0.0);
    }
    let shortest = [before.wall_seconds, after.wall_seconds].into_iter().flatten().fold(f64::INFINITY, f64::min);
    let relative = if shortest.is_finite() && shortest > 0.0 { BUILDKIT_FIRST_SAMPLE_SECONDS / shortest } else { 0.0 };
    (BUILDKIT_FIRST_SAMPLE_SECONDS, relative)
}

/// The field group of a summary field (`None`: wall time, the same everywhere).
fn group_of(field: &str) -> Option<Group> {
    match field.split('.').next()? {
        "cpu" => Some(Group::Cpu),
        "memory" => Some(Group::Memory),
        "io" => Some(Group::Io),
        "pidsPeak" => Some(Group::Pids),
        "cpuStall" | "memoryStall" | "ioStall" => Some(Group::Pressure),
        "netRxBytes" | "netTxBytes" => Some(Group::Network),
        _ => None,
    }
}

/// The rung `step` measured `group` from; steps without sources (older
/// documents, BuildKit) are their own cgroup's throughout.
fn rung_of(step: &Step, group: Group) -> Option<Rung> {
    if step.sources.is_empty() { Some(Rung::CgroupV2) } else { step.sources.rung(group) }
}

fn compare(spec: &FieldSpec, before: &Step, after: &Step, busy: f64, estimate: (f64, f64)) -> FieldDiff {
    let b = (spec.get)(before).filter(|v| v.is_finite());
    let a = (spec.get)(after).filter(|v| v.is_finite());
    let rungs = group_of(spec.field).map(|g| (rung_of(before, g), rung_of(after, g)));
    let different = rungs.is_some_and(|(rb, ra)| rb.is_some() && ra.is_some() && rb != ra);
    judge(spec, (b, a), different, busy, estimate)
}

/// The diff of `spec`'s values `(before, after)` by the noise model:
/// `different` when they were measured from different sources.
fn judge(
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

    /// For people: the verdict, warnings, then one line per field measured
    /// on at least one side (`*` marks significant changes).
    #[must_use]
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let (before, after) = (&self.before, &self.after);
        let (before, after) = (label(&before.name, &before.command), label(&after.name, &after.command));
        let _ = writeln!(out, "stepmon diff: `{before}` → `{after}`");
        let _ = writeln!(out, "  verdict  {}", self.reason);
        for w in &self.warnings {
            let _ = writeln!(out, "  warning  {w}");
        }
        field_lines(&mut out, &self.fields);
        commands::lines(&mut out, &self.commands);
        out
    }
}

/// The verdict on `fields` (judged on a machine `busy`), the fields that
/// drive it, and the sentence saying so.
fn verdict_of(fields: &[FieldDiff], busy: f64) -> (DiffVerdict, Vec<&'static str>, String) {
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

/// One line per field measured on at least one side (`*` marks the
/// significant changes), under a header.
fn field_lines(out: &mut String, fields: &[FieldDiff]) {
    let _ = writeln!(out, "  {:<20} {:>12} {:>12} {:>22}  tolerance", "field", "before", "after", "change");
    for f in fields.iter().filter(|f| f.comparability != Comparability::MissingBoth) {
        let show = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| f.kind.show(v));
        let change = match (f.change, f.comparability) {
            (Some(c), _) => {
                let sign = if c < 0.0 { "-" } else { "+" };
                let rel =
                    f.relative_change.map_or_else(String::new, |r| format!(" ({sign}{})", units::percent(r.abs())));
                format!("{sign}{}{rel}", f.kind.show(c))
            }
            (None, _) => "not comparable".to_owned(),
        };
        let tolerance = f.tolerance.map_or_else(String::new, |t| {
            let widened =
                if t.widened_by > 0.0 { format!(" (+{} busy)", units::percent(t.widened_by)) } else { String::new() };
            format!("±{}{widened}, ≥ {}", units::percent(t.relative), f.kind.show(t.absolute))
        });
        let mark = if f.significant { "*" } else { " " };
        let _ = writeln!(
            out,
            "{mark} {:<20} {:>12} {:>12} {:>22}  {tolerance}",
            f.label,
            show(f.before),
            show(f.after),
            change
        );
    }
}

fn describe_change(f: &FieldDiff) -> String {
    let change = f.change.unwrap_or(0.0);
    let sign = if change < 0.0 { "-" } else { "+" };
    match f.relative_change {
        Some(r) => format!("{} {sign}{}", f.label, units::percent(r.abs())),
        None => format!("{} {sign}{}", f.label, f.kind.show(change)),
    }
}

/// Several steps before and after (e.g. two BuildKit builds), paired by name.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RunDiff {
    /// The diff of each pair of steps with the same name, in `after` order.
    pub steps: Vec<StepDiff>,
    /// Steps only in the `before` input.
    pub only_before: Vec<String>,
    /// Steps only in the `after` input.
    pub only_after: Vec<String>,
    /// The two jobs' totals (wall, CPU, peak memory), when both sides are
    /// jobs ([`RunDiff::with_totals`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub totals: Option<TotalsDiff>,
}

/// What a job's totals are for a diff.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct JobTotals {
    /// First start to last end, s.
    pub wall_seconds: Option<f64>,
    /// CPU time of all its steps, s.
    pub cpu_seconds: Option<f64>,
    /// The most memory its running steps held at once, bytes.
    pub memory_peak_bytes: Option<f64>,
    /// The largest busy share of the machine over its steps (it widens the
    /// time tolerances, as for a step).
    pub busy_share: f64,
}

impl JobTotals {
    /// The totals of the job of `entries` (their steps as compared: the
    /// caller leaves out what it does not compare, e.g. interrupted steps).
    #[must_use]
    pub fn of(entries: &[crate::job::Entry]) -> JobTotals {
        let verdict = crate::job::JobVerdict::of(entries);
        let thresholds = Thresholds::default();
        let origin = entries.iter().filter_map(|e| e.step.time_origin()).min();
        let end = entries
            .iter()
            .filter_map(|e| {
                let wall = jiff::SignedDuration::try_from_secs_f64(e.step.wall_seconds?).ok()?;
                e.step.time_origin()?.checked_add(wall).ok()
            })
            .max();
        let cpu: Vec<f64> = entries.iter().filter_map(|e| e.step.summary.cpu.usage_seconds).collect();
        JobTotals {
            wall_seconds: origin.zip(end).map(|(o, e)| e.duration_since(o).as_secs_f64()),
            cpu_seconds: (!cpu.is_empty()).then(|| cpu.iter().sum()),
            memory_peak_bytes: float(verdict.memory_peak_bytes),
            busy_share: entries
                .iter()
                .filter_map(|e| busy_share(&crate::verdict::machine_of(&e.step, &thresholds)))
                .fold(0.0, f64::max),
        }
    }
}

/// Two jobs' totals compared with the noise model of a step's fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TotalsDiff {
    /// Before.
    pub before: JobTotals,
    /// After.
    pub after: JobTotals,
    /// Wall, CPU and peak memory.
    pub fields: Vec<FieldDiff>,
    /// Heavier, lighter, ... as for a step.
    pub verdict: DiffVerdict,
    /// In words.
    pub reason: String,
}

/// A job total a diff compares: (field, label, kind, value).
type Total = (&'static str, &'static str, FieldKind, fn(&JobTotals) -> Option<f64>);

/// The job totals a diff compares.
const TOTALS: [Total; 3] = [
    ("job.wallSeconds", "job wall time", FieldKind::Wall, |t| t.wall_seconds),
    ("job.cpuSeconds", "job CPU time", FieldKind::CpuTime, |t| t.cpu_seconds),
    ("job.memoryPeakBytes", "job memory peak", FieldKind::Memory, |t| t.memory_peak_bytes),
];

impl TotalsDiff {
    /// Compares the totals `before` with `after`.
    #[must_use]
    pub fn between(before: JobTotals, after: JobTotals) -> TotalsDiff {
        let busy = before.busy_share.max(after.busy_share);
        let fields: Vec<FieldDiff> = TOTALS
            .iter()
            .map(|(field, label, kind, get)| {
                let spec = FieldSpec { field, label, kind: *kind, get: |_| None };
                let finite = |t: &JobTotals| get(t).filter(|v| v.is_finite());
                judge(&spec, (finite(&before), finite(&after)), false, busy, (0.0, 0.0))
            })
            .collect();
        let (verdict, _, reason) = verdict_of(&fields, busy);
        TotalsDiff { before, after, fields, verdict, reason }
    }

    /// For people: the verdict, then a line per total.
    #[must_use]
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "stepmon diff: the jobs' totals");
        let _ = writeln!(out, "  verdict  {}", self.reason);
        field_lines(&mut out, &self.fields);
        out
    }

    /// Whether the job got heavier beyond the noise.
    #[must_use]
    pub fn heavier(&self) -> bool {
        matches!(self.verdict, DiffVerdict::Heavier | DiffVerdict::Mixed)
    }
}

impl RunDiff {
    /// Pairs the steps of `before` and `after`: by name and command (steps
    /// of one program differ by command), the n-th of a name and command
    /// with the n-th of the same; then what is left by name alone; when
    /// both sides hold exactly one step they are paired whatever their
    /// names (the diff warns when the commands differ).
    #[must_use]
    pub fn between(before: &[Step], after: &[Step]) -> RunDiff {
        if let ([b], [a]) = (before, after) {
            return RunDiff {
                steps: vec![StepDiff::between(b, a)],
                only_before: Vec::new(),
                only_after: Vec::new(),
                totals: None,
            };
        }
        let mut used = vec![false; before.len()];
        let mut paired: Vec<Option<usize>> = vec![None; after.len()];
        let same_command = |b: &Step, a: &Step| b.name == a.name && b.command() == a.command();
        let same_name = |b: &Step, a: &Step| b.name == a.name;
        for same in [&same_command as &dyn Fn(&Step, &Step) -> bool, &same_name] {
            for (a, pair) in after.iter().zip(paired.iter_mut()).filter(|(_, p)| p.is_none()) {
                if let Some(i) = (0..before.len()).find(|&i| !used[i] && same(&before[i], a)) {
                    used[i] = true;
                    *pair = Some(i);
                }
            }
        }
        let mut steps = Vec::new();
        let mut only_after = Vec::new();
        for (a, pair) in after.iter().zip(&paired) {
            match pair {
                Some(i) => steps.push(StepDiff::between(&before[*i], a)),
                None => only_after.push(a.label()),
            }
        }
        let only_before = before.iter().zip(&used).filter(|(_, used)| !**used).map(|(b, _)| b.label()).collect();
        RunDiff { steps, only_before, only_after, totals: None }
    }

    /// The same diff with the two jobs' totals compared too.
    #[must_use]
    pub fn with_totals(mut self, before: JobTotals, after: JobTotals) -> RunDiff {
        self.totals = Some(TotalsDiff::between(before, after));
        self
    }

    /// Whether a step, or the job's totals, got heavier beyond the noise
    /// (what `--fail-if-heavier` gates on).
    #[must_use]
    pub fn heavier(&self) -> bool {
        self.steps.iter().any(|s| matches!(s.verdict, DiffVerdict::Heavier | DiffVerdict::Mixed))
            || self.totals.as_ref().is_some_and(TotalsDiff::heavier)
    }

    /// Every step's text, then the unpaired steps.
    #[must_use]
    pub fn render_text(&self) -> String {
        let mut out = self.steps.iter().map(StepDiff::render_text).collect::<Vec<_>>().join("\n");
        for name in &self.only_before {
            let _ = writeln!(out, "only before: `{name}`");
        }
        for name in &self.only_after {
            let _ = writeln!(out, "only after: `{name}`");
        }
        if let Some(totals) = &self.totals {
            out.push('\n');
            out.push_str(&totals.render_text());
        }
        out
    }
}
