//! The summary of a `stepmon run` from its sources: each field group from the
//! rung the run recorded for it ([`crate::source`]) — the step's cgroup
//! samples, the process tree's rusage, or the enclosing cgroup's samples.

use stepmon_model::sample::{CpuSummary, IoSummary, MemorySummary, StallSummary, StepUsage, UsageSummary};

use crate::document::{RunDocument, RunInfo};
use crate::source::{Group, Rung};
use crate::summary::{Baseline, with_baseline};

/// Fills in what a measured step's document leaves to the report: its
/// summary (over the wall time the runner recorded in
/// `stepmon.summary.wallSeconds`) and its verdicts. `stepmon run` writes
/// documents completed so; a builder that runs steps through
/// `stepmon-runner` calls this when it wants them too.
///
/// ```
/// use stepmon_report::RunDocument;
/// let json = r#"{"resourceUsage": {"samples": [
///     {"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {"usageNanos": 0}, "pidsStat": {}},
///     {"timestamp": "2026-11-30T10:00:02Z", "cpuStat": {"usageNanos": 1500000000}, "pidsStat": {}}]},
///   "stepmon": {"command": ["make"], "exitCode": 0}}"#;
/// let mut document: RunDocument = serde_json::from_str(json)?;
/// // What the runner records: the wall time, beside the samples.
/// document.stepmon.as_mut().unwrap().summary.wall_seconds = Some(2.0);
/// stepmon_report::compose::complete(&mut document);
/// let run = document.stepmon.as_ref().unwrap();
/// assert_eq!(run.summary.cpu.average_cores, Some(0.75));
/// assert!(run.verdicts.is_some());
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn complete(document: &mut RunDocument) {
    let Some(wall) = document.stepmon.as_ref().map(|info| info.summary.wall_seconds) else { return };
    let summary = summary(document, wall);
    let Some(info) = document.stepmon.as_mut() else { return };
    info.summary = summary;
    let verdicts = crate::Step::from_run(document).verdicts();
    if let Some(info) = document.stepmon.as_mut() {
        info.verdicts = Some(verdicts);
    }
}

/// The summary of `document`'s step over `wall_seconds` (`None`: unknown,
/// and so are the shares of it). Documents without
/// sources (older versions) are summarised from their step samples alone.
#[must_use]
pub fn summary(document: &RunDocument, wall_seconds: Option<f64>) -> UsageSummary {
    summary_of(&document.usage(), document.stepmon.as_ref(), wall_seconds)
}

/// [`summary`] of a document taken apart: its `usage` (`resourceUsage`
/// and `sysUsage`) and its `run` (`stepmon`).
pub(crate) fn summary_of(usage: &StepUsage, run: Option<&RunInfo>, wall_seconds: Option<f64>) -> UsageSummary {
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
                let [cpu, memory, io] = crate::summary::machine_stalls(usage);
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
