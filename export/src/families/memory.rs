//! Memory: peak, what it held at the peak, its limit, and the
//! `memory.events` counters.

use super::{Family, Kind, u};

pub(super) const FAMILIES: &[Family] = &[
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
];
