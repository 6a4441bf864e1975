//! The summary's lines about the step's processes: how many were
//! accounted and lost, and the commands that used the most CPU with the
//! largest of each ("cc1plus ×312: 71% of the step's CPU, largest 1.2 GiB
//! (pid 8841, foo.cpp)"), and in a sampled document what stepmon's own
//! `wait4` said of the processes it reaped.

use crate::units::{bytes, percent, seconds};
use stepmon_model::processes::{CpuTime, ProcessSource, Processes};

/// Commands named in the summary.
const TOP_COMMANDS: usize = 3;

/// The summary's lines (without indentation). `step_cpu_seconds`: the
/// step's CPU from its best source, for the shares; without it the
/// processes' own sum.
pub(super) fn summary_lines(p: &Processes, step_cpu_seconds: Option<f64>) -> Vec<String> {
    if p.source.is_none() {
        return p.missing.first().map(|m| format!("procs    none per process: {m}")).into_iter().collect();
    }
    let source = if p.source == Some(ProcessSource::Sampled) { "sampled" } else { "taskstats" };
    let sampled = if p.cpu_time == Some(CpuTime::TickSampled) { ", CPU sampled at timer ticks" } else { "" };
    let mut lines = vec![format!("procs    {} processes ({source}), {}{sampled}", p.processes, p.losses())];
    let total = step_cpu_seconds.filter(|c| *c > 0.0).unwrap_or_else(|| p.cpu_seconds());
    for c in p.commands.iter().take(TOP_COMMANDS) {
        let share = if total > 0.0 {
            format!("{} of the step's CPU", percent(c.cpu_seconds / total))
        } else {
            format!("{} CPU", seconds(c.cpu_seconds))
        };
        let largest = super::largest(c).map_or_else(String::new, |l| format!(", largest {l}"));
        lines.push(format!("top      {} ×{}: {share}{largest}", c.command, c.count));
    }
    lines.extend(reaped_line(p));
    lines
}

/// "reaped   3 processes (wait4 rusage, with what each waited for):
/// 1.2 s CPU, largest 512.0 MiB (pid 77, make, or one it waited for)",
/// when stepmon reaped orphans too: the main process alone is what the
/// `tree` line already says.
fn reaped_line(p: &Processes) -> Option<String> {
    let r = p.reaped.as_ref().filter(|r| r.count > 1)?;
    let largest = r.largest().map_or_else(String::new, |p| {
        let command = p.command.as_ref().map_or_else(String::new, |c| format!(", {c}"));
        format!(", largest {} (pid {}{command}, or one it waited for)", bytes(p.max_rss_bytes), p.pid)
    });
    Some(format!(
        "reaped   {} processes (wait4 rusage, with what each waited for): {} CPU{largest}",
        r.count,
        seconds(r.cpu_seconds)
    ))
}

#[cfg(test)]
mod tests {
    use super::super::ProcessesText as _;
    use super::*;
    use stepmon_model::processes::{Keep, ProcessRecord};

    fn process(command: &str, pid: u32, cpu: f64, rss: u64) -> ProcessRecord {
        ProcessRecord {
            command: command.to_owned(),
            pid,
            cpu_seconds: cpu,
            cpu_time: Some(CpuTime::Exact),
            peak_rss_bytes: Some(rss),
            ..ProcessRecord::default()
        }
    }

    #[test]
    fn top_commands_with_their_share_and_largest() {
        let mut all: Vec<_> = (0..312).map(|i| process("cc1plus", 1000 + i, 0.01, 100 << 20)).collect();
        all.push(process("cc1plus", 8841, 0.1, 1288 << 20));
        all.push(process("ld", 7, 1.0, 50 << 20));
        let p = Processes::build(all, Keep::default(), 314, 0);
        let lines = p.summary_lines(Some(4.5));
        assert_eq!(lines[0], "procs    314 processes (taskstats), none lost");
        assert_eq!(lines[1], "top      cc1plus ×313: 71.6% of the step's CPU, largest 1.3 GiB (pid 8841)");
        assert_eq!(lines[2], "top      ld ×1: 22.2% of the step's CPU, largest 50.0 MiB (pid 7)");
    }

    #[test]
    fn losses_and_ticks_and_unavailability_are_said() {
        let mut p = process("a", 1, 1.0, 1);
        p.cpu_time = Some(CpuTime::TickSampled);
        let lines = Processes::build(vec![p], Keep::default(), 1, 412).summary_lines(None);
        assert_eq!(
            lines[0],
            "procs    1 processes (taskstats), up to 412 process records lost: totals are partial, CPU sampled at timer ticks"
        );
        assert_eq!(
            Processes::unavailable("taskstats listener refused: needs root (CAP_NET_ADMIN)").summary_lines(None),
            ["procs    none per process: taskstats listener refused: needs root (CAP_NET_ADMIN)"]
        );
    }
}
