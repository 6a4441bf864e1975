//! The fields a diff compares: each one's key, label, kind and how to read
//! it from a step, and which rung of the ladder measured it.

use crate::step::Step;
use stepmon_model::source::{Group, Rung};

use super::noise::{FieldDiff, FieldKind, FieldSpec, judge};

#[allow(clippy::cast_precision_loss)]
pub(super) fn float(v: Option<u64>) -> Option<f64> {
    v.map(|v| v as f64)
}

pub(super) const FIELDS: &[FieldSpec] = &[
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

/// The field group of a summary field (`None`: wall time, the same everywhere).
pub(super) fn group_of(field: &str) -> Option<Group> {
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
pub(super) fn rung_of(step: &Step, group: Group) -> Option<Rung> {
    if step.sources.is_empty() { Some(Rung::CgroupV2) } else { step.sources.rung(group) }
}

pub(super) fn compare(spec: &FieldSpec, before: &Step, after: &Step, busy: f64, estimate: (f64, f64)) -> FieldDiff {
    let b = (spec.get)(before).filter(|v| v.is_finite());
    let a = (spec.get)(after).filter(|v| v.is_finite());
    let rungs = group_of(spec.field).map(|g| (rung_of(before, g), rung_of(after, g)));
    let different = rungs.is_some_and(|(rb, ra)| rb.is_some() && ra.is_some() && rb != ra);
    judge(spec, (b, a), different, busy, estimate)
}
