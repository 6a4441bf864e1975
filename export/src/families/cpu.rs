//! CPU time, average cores and the step's own `cpu.max` throttling.

use super::{Family, Kind, f, u};

pub(super) const FAMILIES: &[Family] = &[
    Family {
        name: "stepmon_step_cpu_user_seconds",
        kind: Kind::Counter,
        unit: Some("seconds"),
        help: "CPU time the step spent in user mode (cpu.stat user_usec).",
        points: |x| f(x.step.summary.cpu.user_seconds),
    },
    Family {
        name: "stepmon_step_cpu_system_seconds",
        kind: Kind::Counter,
        unit: Some("seconds"),
        help: "CPU time the step spent in kernel mode (cpu.stat system_usec).",
        points: |x| f(x.step.summary.cpu.system_seconds),
    },
    Family {
        name: "stepmon_step_cpu_usage_seconds",
        kind: Kind::Counter,
        unit: Some("seconds"),
        help: "Total CPU time of the step (cpu.stat usage_usec).",
        points: |x| f(x.step.summary.cpu.usage_seconds),
    },
    Family {
        name: "stepmon_step_cpu_average_cores",
        kind: Kind::Gauge,
        unit: None,
        help: "Cores the step used on average: CPU time over wall time.",
        points: |x| f(x.step.summary.cpu.average_cores),
    },
    Family {
        name: "stepmon_step_cpu_throttled_seconds",
        kind: Kind::Counter,
        unit: Some("seconds"),
        help: "Time the step's own cpu.max held it back (cpu.stat throttled_usec).",
        points: |x| f(x.step.summary.cpu.throttled_seconds),
    },
    Family {
        name: "stepmon_step_cpu_throttled_periods",
        kind: Kind::Counter,
        unit: None,
        help: "Enforcement periods in which the step was throttled (cpu.stat nr_throttled).",
        points: |x| u(x.step.summary.cpu.throttled_periods.map(u64::from)),
    },
    Family {
        name: "stepmon_step_cpu_limit_cores",
        kind: Kind::Gauge,
        unit: None,
        help: "The step's cpu.max quota in cores (absent when it had none).",
        points: |x| f(x.verdicts.throttling.limit_cores),
    },
    Family {
        name: "stepmon_step_throttled",
        kind: Kind::Gauge,
        unit: None,
        help: "1 when the step's own cpu.max held it back for at least the threshold share of its wall time, else 0.",
        points: |x| u(x.verdicts.throttling.throttled.map(u64::from)),
    },
];
