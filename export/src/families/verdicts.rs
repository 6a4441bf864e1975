//! The verdicts as statesets: bottleneck, memory outcome, machine load.

use stepmon_model::verdict::{Bottleneck, MachineLoad, MemoryOutcome};

use super::{Family, Kind, states};

// Exhaustive matches, so that a new verdict class fails to compile here
// instead of silently leaving every state at 0.
pub(super) const BOTTLENECK_STATES: [&str; 5] = ["cpuBound", "memoryBound", "ioBound", "notStalled", "unknown"];
pub(super) fn bottleneck_state(b: Bottleneck) -> &'static str {
    match b {
        Bottleneck::CpuBound => "cpuBound",
        Bottleneck::MemoryBound => "memoryBound",
        Bottleneck::IoBound => "ioBound",
        Bottleneck::NotStalled => "notStalled",
        Bottleneck::Unknown => "unknown",
    }
}

pub(super) const MEMORY_STATES: [&str; 5] = ["oomKilled", "hitLimit", "nearLimit", "ok", "unknown"];
pub(super) fn memory_state(m: MemoryOutcome) -> &'static str {
    match m {
        MemoryOutcome::OomKilled => "oomKilled",
        MemoryOutcome::HitLimit => "hitLimit",
        MemoryOutcome::NearLimit => "nearLimit",
        MemoryOutcome::Ok => "ok",
        MemoryOutcome::Unknown => "unknown",
    }
}

pub(super) const MACHINE_STATES: [&str; 3] = ["quiet", "busy", "unknown"];
pub(super) fn machine_state(m: MachineLoad) -> &'static str {
    match m {
        MachineLoad::Quiet => "quiet",
        MachineLoad::Busy => "busy",
        MachineLoad::Unknown => "unknown",
    }
}

pub(super) const FAMILIES: &[Family] = &[
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
