//! The busiest command of a progress line: the CPU time each of the step's
//! processes used since the previous line ([`crate::processes::CpuTimes`]),
//! summed by command, the largest sum. A process that ran across a line is
//! differenced against what it had used then (a pid and a start, to tell
//! a reused pid apart); one that started since counts whole.

use std::collections::HashMap;

use jiff::Timestamp;
use stepmon_model::progress::BusiestCommand;

use crate::processes::{CpuTimes, ProcessCpu, Reading};

/// Starts further apart than this are two processes of one pid: a start
/// read from `/proc/PID/stat` (clock ticks) and one from an exit record
/// (its fork event, or whole seconds, up to a second early: kernel/tsacct.c)
/// of the same process differ by less.
const SAME_START: f64 = 1.5;

/// What a process had used at the previous line: its start and CPU time, s.
type Used = HashMap<u32, (f64, f64)>;

/// The busiest command over `seconds`, from each process's CPU time now
/// (`processes`) and at the previous line (`previous`); and what each has
/// used now, for the next line. `None` when no process used CPU time.
fn busiest(previous: &Used, processes: &[ProcessCpu], seconds: f64) -> (Option<BusiestCommand>, Used) {
    let mut by_command: HashMap<&str, (f64, u32)> = HashMap::new();
    let mut now = Used::with_capacity(processes.len());
    for p in processes {
        let before =
            previous.get(&p.pid).filter(|(start, _)| (start - p.start).abs() < SAME_START).map_or(0.0, |(_, cpu)| *cpu);
        let used = (p.cpu_seconds - before).max(0.0);
        if used > 0.0 {
            let entry = by_command.entry(p.command.as_str()).or_default();
            entry.0 += used;
            entry.1 += 1;
        }
        // A pid's later process (an ended one and its reuse in one answer).
        match now.get(&p.pid) {
            Some((start, _)) if *start > p.start => {}
            _ => {
                now.insert(p.pid, (p.start, p.cpu_seconds));
            }
        }
    }
    let top = by_command.into_iter().max_by(|a, b| a.1.0.total_cmp(&b.1.0).then_with(|| b.0.cmp(a.0)));
    let busiest = top.map(|(command, (cpu, count))| BusiestCommand::new(command.to_owned(), cpu, seconds, count));
    (busiest, now)
}

/// The step's busiest command line after line.
#[derive(Debug)]
pub(super) struct Busiest {
    source: CpuTimes,
    /// The place in the listener's list of ended processes.
    ended_from: usize,
    previous: Used,
    /// As of when the previous line's processes were read (the step's
    /// start at first).
    at: Timestamp,
}

impl Busiest {
    /// From `source`, the step started at `start`.
    pub(super) fn new(source: CpuTimes, start: Timestamp) -> Busiest {
        Busiest { source, ended_from: 0, previous: Used::new(), at: start }
    }

    /// The busiest command since the previous call (since the start at
    /// first); `None` when none used CPU time, the processes could not be
    /// read, or (sampled) no reading was taken since.
    pub(super) fn next(&mut self) -> Option<BusiestCommand> {
        let Reading { at, processes } = self.source.read(&mut self.ended_from)?;
        let seconds = at.duration_since(self.at).as_secs_f64();
        if seconds <= 0.0 {
            return None;
        }
        self.at = at;
        let (busiest, used) = busiest(&self.previous, &processes, seconds);
        self.previous = used;
        busiest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(pid: u32, start: f64, command: &str, cpu_seconds: f64) -> ProcessCpu {
        ProcessCpu { pid, start, command: command.to_owned(), cpu_seconds }
    }

    #[test]
    fn cpu_since_the_previous_line_summed_by_command() {
        // At the first line: a make and two compilers.
        let first = [process(10, 100.0, "make", 0.2), process(11, 101.0, "cc1", 1.0), process(12, 101.5, "cc1", 0.8)];
        let (top, used) = busiest(&Used::new(), &first, 2.0);
        assert_eq!(top, Some(BusiestCommand::new("cc1".into(), 1.8, 2.0, 2)));
        // At the second, 4 s later: cc1 11 ended (its exit record, start in
        // whole seconds), 12 runs on, 13 started since; the linker ran long.
        let second = [
            process(10, 100.0, "make", 0.3),
            process(11, 101.0 - 0.9, "cc1", 1.5),
            process(12, 101.5, "cc1", 2.8),
            process(13, 103.0, "cc1", 0.2),
            process(14, 102.0, "ld", 2.6),
        ];
        let (top, _) = busiest(&used, &second, 4.0);
        let top = top.unwrap();
        assert_eq!((top.command.as_str(), top.processes), ("cc1", 3));
        assert!((top.cpu_seconds - 2.7).abs() < 1e-9, "0.5 + 2.0 + 0.2: {top:?}");
        assert!((top.cpu_cores - 0.675).abs() < 1e-9, "{top:?}");
    }

    #[test]
    fn a_reused_pid_is_another_process_and_an_idle_step_has_no_busiest() {
        let (_, used) = busiest(&Used::new(), &[process(20, 100.0, "sh", 5.0)], 1.0);
        // Pid 20 again, started 10 s later: all its 0.4 s count, not 0.4 − 5.
        let (top, used) = busiest(&used, &[process(20, 110.0, "gzip", 0.4)], 1.0);
        assert_eq!(top.map(|t| (t.command, t.cpu_seconds)), Some(("gzip".to_owned(), 0.4)));
        // Nothing used since: no busiest command, rather than one of 0 cores.
        assert_eq!(busiest(&used, &[process(20, 110.0, "gzip", 0.4)], 1.0).0, None);
        // A counter read lower (two clocks) is no negative use.
        assert_eq!(busiest(&used, &[process(20, 110.2, "gzip", 0.39)], 1.0).0, None);
    }

    #[test]
    fn an_ended_process_and_its_reused_pid_in_one_answer_keep_the_later() {
        let both = [process(30, 100.0, "a", 1.0), process(30, 105.0, "b", 2.0)];
        let (top, used) = busiest(&Used::new(), &both, 1.0);
        assert_eq!(top.map(|t| t.command), Some("b".to_owned()));
        assert_eq!(used.get(&30), Some(&(105.0, 2.0)));
    }
}
