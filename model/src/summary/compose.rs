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
            (Some(Rung::JobObject | Rung::ProcessRusage), _, _) => {
                let accounted = run.accounting.unwrap_or_default();
                cpu.user_seconds = accounted.user_seconds;
                cpu.system_seconds = accounted.system_seconds;
                cpu.usage_seconds = accounted.user_seconds.zip(accounted.system_seconds).map(|(u, s)| u + s);
            }
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
        } else if let Some(Rung::JobObject | Rung::ProcessRusage) = sources.rung(Group::Memory) {
            memory.peak_bytes = run.accounting.and_then(|a| a.memory_peak_bytes);
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
            (Some(Rung::JobObject | Rung::ProcessRusage), _, _) => {
                io.read_bytes = run.accounting.and_then(|a| a.read_bytes);
                io.write_bytes = run.accounting.and_then(|a| a.write_bytes);
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Accounting, Source};

    #[test]
    fn an_os_accounting_fills_the_groups_it_is_the_source_of() {
        let mut run = RunInfo::default();
        run.accounting = Some(Accounting {
            user_seconds: Some(1.5),
            system_seconds: Some(0.5),
            memory_peak_bytes: Some(64 << 20),
            read_bytes: Some(4096),
            write_bytes: Some(8192),
            ..Accounting::default()
        });
        run.sources.cpu = Some(Source::exact(Rung::JobObject, "the step's job object"));
        run.sources.memory = Some(Source::exact(Rung::JobObject, "the step's job object"));
        let summary = summary_of(&StepUsage::default(), Some(&run), Some(4.0));
        assert_eq!((summary.cpu.user_seconds, summary.cpu.usage_seconds), (Some(1.5), Some(2.0)));
        assert_eq!(summary.cpu.average_cores, Some(0.5));
        assert_eq!(summary.memory.peak_bytes, Some(64 << 20));
        // IO has no source: its counters are not the step's numbers.
        assert_eq!((summary.io.read_bytes, summary.io.write_bytes), (None, None));
        run.sources.io = Some(Source::exact(Rung::ProcessRusage, "the first process"));
        let summary = summary_of(&StepUsage::default(), Some(&run), Some(4.0));
        assert_eq!((summary.io.read_bytes, summary.io.write_bytes), (Some(4096), Some(8192)));
        // A source without the accounting gives nothing, not zeros.
        run.accounting = None;
        let summary = summary_of(&StepUsage::default(), Some(&run), Some(4.0));
        assert_eq!((summary.cpu.user_seconds, summary.memory.peak_bytes), (None, None));
    }
}
