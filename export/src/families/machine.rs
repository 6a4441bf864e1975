//! The machine during the step (busy, others' work, steal, CPU pressure)
//! and stepmon's own cost.

use super::{Family, Kind, f, u};

pub(super) const FAMILIES: &[Family] = &[
    Family {
        name: "stepmon_step_machine_cpu_busy_ratio",
        kind: Kind::Gauge,
        unit: Some("ratio"),
        help: "Share of all CPUs' time that was busy (not idle or iowait) during the step.",
        points: |x| f(x.step.summary.machine.cpu_busy_share),
    },
    Family {
        name: "stepmon_step_machine_cpu_others_busy_ratio",
        kind: Kind::Gauge,
        unit: Some("ratio"),
        help: "Share of all CPUs' time busy with work other than the step's during the step.",
        points: |x| f(x.step.summary.machine.others_busy_share),
    },
    Family {
        name: "stepmon_step_machine_cpu_steal_ratio",
        kind: Kind::Gauge,
        unit: Some("ratio"),
        help: "Share of all CPUs' time taken by the hypervisor (steal) during the step.",
        points: |x| f(x.step.summary.machine.steal_share),
    },
    Family {
        name: "stepmon_step_machine_cpu_stall_ratio",
        kind: Kind::Gauge,
        unit: Some("ratio"),
        help: "Share of the step's wall time in which some task on the machine waited for CPU (/proc/pressure/cpu some).",
        points: |x| f(x.verdicts.machine.machine_cpu_stall_share),
    },
    Family {
        name: "stepmon_step_collector_cpu_seconds",
        kind: Kind::Counter,
        unit: Some("seconds"),
        help: "CPU time stepmon itself used while recording the step (all its threads).",
        points: |x| f(x.step.run.as_ref().and_then(|r| r.collector.cpu_seconds)),
    },
    Family {
        name: "stepmon_step_collector_max_rss_bytes",
        kind: Kind::Gauge,
        unit: Some("bytes"),
        help: "Peak resident memory of stepmon itself while recording the step.",
        points: |x| u(x.step.run.as_ref().and_then(|r| r.collector.max_rss_bytes)),
    },
];
