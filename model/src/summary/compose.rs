//! The summary of a measured step from its sources: each field group from
//! the rung the run recorded for it ([`crate::source`]) — the step's cgroup
//! samples, the process tree's rusage, or the enclosing cgroup's samples.

use crate::document::{RunDocument, RunInfo};
use crate::sample::{CpuSummary, IoSummary, MemorySummary, StallSummary, StepUsage, UsageSummary};
use crate::source::{Group, Rung};

use super::{Baseline, with_baseline};

/// The summary of `document`'s step over `wall_seconds` (`None`: unknown,
/// and so are the shares of it). Documents without
/// sources (older versions) are summarised from their step samples alone.
#[must_use]
pub fn summary(document: &RunDocument, wall_seconds: Option<f64>) -> UsageSummary {
    summary_of(&document.usage(), document.stepmon.as_ref(), wall_seconds)
}

/// [`summary`] of a document taken apart (what the runner has before the
/// document exists): its `usage` (`resourceUsage`
/// and `sysUsage`) and its `run` (`stepmon`).
pub fn summary_of(usage: &StepUsage, run: Option<&RunInfo>, wall_seconds: Option<f64>) -> UsageSummary {
    let mut summary = with_baseline(usage, wall_seconds, Baseline::FirstSample);
    let Some(run) = run.filter(|run| !run.sources.is_empty()) else { return summary };
    let sources = &run.sources;
    let enclosing = run.enclosing_cgroup.as_ref();
    let around = enclosing.map(|e| with_baseline(&e.usage(), wall_seconds, Baseline::FirstSample));
    let own = |group| matches!(sources.rung(group), Some(Rung::CgroupV2 | Rung::CgroupV1 | Rung::SystemdScope));

    if !own(Group::Cpu) {
        let mut cpu = CpuSummary::default();
        match (sources.rung(Group::Cpu), run.process_tree, enclosing) {
            (Some(Rung::ProcessTree), Some(tree), _) => {
                cpu.user_seconds = Some(tree.user_seconds);
                cpu.system_seconds = Some(tree.system_seconds);
                cpu.usage_seconds = Some(tree.cpu_seconds());
            }
            (Some(Rung::EnclosingCgroup), _, Some(e)) => cpu.usage_seconds = e.cpu_seconds_without_stepmon(),
            _ => {}
        }
        cpu.average_cores = cpu.usage_seconds.zip(wall_seconds.filter(|w| *w > 0.0)).map(|(s, w)| s / w);
        summary.cpu = cpu;
        summary.machine.others_busy_share = others_share(usage, cpu.usage_seconds);
    }
    if !own(Group::Memory) {
        let mut memory = MemorySummary::default();
        if let (Some(Rung::EnclosingCgroup), Some(e), Some(around)) = (sources.rung(Group::Memory), enclosing, &around)
        {
            memory = around.memory;
            memory.peak_bytes = e.memory_peak().map(|(peak, _)| peak);
        } else if let (Some(Rung::ProcessTree), Some(sampled)) =
            (sources.rung(Group::Memory), run.process_tree.and_then(|t| t.memory))
        {
            memory.peak_bytes = Some(sampled.peak_bytes);
        }
        summary.memory = memory;
    }
    if !own(Group::Io) {
        let mut io = IoSummary::default();
        match (sources.rung(Group::Io), run.process_tree, &around) {
            (Some(Rung::ProcessTree), Some(tree), _) => {
                io.read_bytes = Some(tree.block_read_bytes);
                io.write_bytes = Some(tree.block_write_bytes);
            }
            (Some(Rung::EnclosingCgroup), _, Some(around)) => io = around.io,
            _ => {}
        }
        summary.io = io;
    }
    if !own(Group::Pids) {
        summary.pids_peak = match (sources.rung(Group::Pids), enclosing) {
            (Some(Rung::EnclosingCgroup), Some(e)) => e.pids_peak().map(|(peak, _)| peak),
            _ => None,
        };
    }
    if !own(Group::Pressure) {
        let (cpu, memory, io) = match (sources.rung(Group::Pressure), &around) {
            // The machine's stall from /proc/pressure (sysUsage), unless the
            // enclosing cgroup is the root, whose pressure files are the same.
            (Some(Rung::Machine), _) if !enclosing.is_some_and(|e| e.root) => {
                let [cpu, memory, io] = super::machine_stalls(usage);
                (cpu, memory, io)
            }
            (Some(Rung::EnclosingCgroup | Rung::Machine), Some(a)) => (a.cpu_stall, a.memory_stall, a.io_stall),
            _ => (StallSummary::default(), StallSummary::default(), StallSummary::default()),
        };
        (summary.cpu_stall, summary.memory_stall, summary.io_stall) = (cpu, memory, io);
    }
    if sources.rung(Group::Network) == Some(Rung::NetworkNamespace)
        && summary.net_rx_bytes.is_none()
        && let Some(around) = &around
    {
        // The namespace was sampled with the enclosing cgroup (no step cgroup).
        (summary.net_rx_bytes, summary.net_tx_bytes) = (around.net_rx_bytes, around.net_tx_bytes);
    } else if sources.network.is_none() {
        (summary.net_rx_bytes, summary.net_tx_bytes) = (None, None);
    }
    summary
}

/// Share of all CPUs' time busy with work other than `step_cpu_seconds`.
fn others_share(usage: &StepUsage, step_cpu_seconds: Option<f64>) -> Option<f64> {
    let c = usage.resource_usage.sys_cpu_stat?;
    let total = c.user + c.nice + c.system + c.idle + c.iowait + c.irq + c.softirq + c.steal;
    let busy = total - c.idle - c.iowait;
    step_cpu_seconds.filter(|_| total > 0.0).map(|s| ((busy - s) / total).max(0.0))
}
