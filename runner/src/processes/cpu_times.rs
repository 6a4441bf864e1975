//! The CPU time each of the step's processes has used so far, for the
//! busiest command of a progress line (`crate::watch`): what the step's
//! per-process accounting already holds, and, where that knows only the
//! processes that ended (taskstats), one read of `/proc/PID/stat` per
//! process still running.
//!
//! * Sampled from procfs ([`super::sampled`]): the last reading of every
//!   process seen, as the sampler keeps it. No read of its own.
//! * Taskstats: the exit records of the processes that ended since the
//!   last ask (a round trip to the listener's thread, which owns them), and
//!   for each process that is still alive its `utime + stime` from
//!   `/proc/PID/stat` (<https://docs.kernel.org/filesystems/proc.html#id10>:
//!   the whole thread group's, the threads that ended included). An exit
//!   record counts the scheduler's run time where delay accounting fills
//!   it (`convert::task`), `/proc/PID/stat` clock ticks: a process seen
//!   running at one line and ended at the next is differenced across the
//!   two clocks (a few ticks at most).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jiff::Timestamp;
use stepmon_sysusage::parse::ProcStat;

use super::Hub;
use super::cpu_answer::{Answer, ProcessCpu};
use super::sampled::Seen;

/// How long a progress line waits for the listener's thread to answer
/// (it answers at its next round: at once when idle, after a storm's pause
/// at most): the line goes without its busiest command after that, rather
/// than hold up the other jobs of the thread it runs on.
const ANSWER_WAIT: Duration = Duration::from_millis(200);

/// Where a step's processes' CPU times are (cheap to clone).
#[derive(Debug, Clone)]
pub(crate) enum CpuTimes {
    /// The taskstats listener's step `step`.
    Listening {
        /// The listener.
        hub: Hub,
        /// The step's id on it.
        step: u64,
    },
    /// The processes the procfs sampler has seen.
    Sampled(Arc<Mutex<Seen>>),
}

/// The clock (`CLOCK_BOOTTIME`, which `/proc/PID/stat`'s start counts
/// from) and the wall clock now, s.
fn clocks() -> (f64, f64) {
    let boot = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
    #[allow(clippy::cast_precision_loss)]
    let since_boot = boot.tv_sec as f64 + boot.tv_nsec as f64 / 1e9;
    let unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
    (since_boot, unix)
}

/// A running process's CPU time from `/proc/PID/stat`; `None` when it is
/// gone (its exit record tells).
fn running(pid: u32, hz: f64, (since_boot, unix): (f64, f64)) -> Option<ProcessCpu> {
    let bytes = stepmon_fdread::read_path(format!("/proc/{pid}/stat")).ok()?;
    let stat = ProcStat::parse(&bytes).ok()?;
    #[allow(clippy::cast_precision_loss)] // tick counts far below 2^53
    let ticks = |t: u64| t as f64 / hz;
    Some(ProcessCpu {
        pid,
        start: unix - (since_boot - ticks(stat.start_ticks)),
        command: String::from_utf8_lossy(stat.comm).into_owned(),
        cpu_seconds: ticks(stat.utime.saturating_add(stat.stime)),
    })
}

/// The step's processes' CPU times, as of when they were read.
#[derive(Debug)]
pub(crate) struct Reading {
    /// When: now, or the sampler's last reading.
    pub(crate) at: Timestamp,
    /// Each process's CPU time then.
    pub(crate) processes: Vec<ProcessCpu>,
}

impl CpuTimes {
    /// The step's processes' CPU times now: every process seen (sampled:
    /// as of the sampler's last reading), or those alive now and those that
    /// ended since `ended_from` (a place in the listener's list, moved on).
    /// `None` when the listener did not answer in time.
    pub(crate) fn read(&self, ended_from: &mut usize) -> Option<Reading> {
        match self {
            CpuTimes::Sampled(seen) => {
                let seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
                // Each record's end is the last reading that saw it.
                let at = seen.values().filter_map(|r| r.end).max().unwrap_or_else(Timestamp::now);
                Some(Reading { at, processes: seen.values().map(ProcessCpu::of_record).collect() })
            }
            CpuTimes::Listening { hub, step } => {
                let Answer { mut ended, next, live } = hub.cpu_times(*step, *ended_from, ANSWER_WAIT)?;
                *ended_from = next;
                #[allow(clippy::cast_precision_loss)]
                let hz = rustix::param::clock_ticks_per_second() as f64;
                let now = clocks();
                ended.extend(live.into_iter().filter_map(|pid| running(pid, hz, now)));
                Some(Reading { at: Timestamp::now(), processes: ended })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `utime + stime` of this process, clock ticks, as `/proc/self/stat` says.
    fn own_ticks() -> u64 {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        // After the command: state (field 3), ... utime (14), stime (15).
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    }

    #[test]
    fn this_process_reads_with_its_command_start_and_cpu() {
        #[allow(clippy::cast_precision_loss)]
        let hz = rustix::param::clock_ticks_per_second() as f64;
        let before = own_ticks();
        let me = running(std::process::id(), hz, clocks()).unwrap();
        let after = own_ticks();
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        let comm = &stat[stat.find('(').unwrap() + 1..stat.rfind(')').unwrap()];
        assert_eq!(me.command, comm);
        let now = clocks().1;
        assert!(me.start <= now && me.start > now - 3600.0, "started {} s ago", now - me.start);
        #[allow(clippy::cast_precision_loss)]
        let (low, high) = (before as f64 / hz, after as f64 / hz);
        assert!((low..=high).contains(&me.cpu_seconds), "{} s, between {low} and {high}", me.cpu_seconds);
        assert!(running(u32::MAX, hz, clocks()).is_none(), "no such process");
    }
}
