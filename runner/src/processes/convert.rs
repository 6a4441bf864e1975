//! A taskstats record as the document's [`ProcessRecord`].

use stepmon_model::processes::{CpuTime, Delays, ProcessRecord};
use stepmon_taskstats_parse::taskstats::TaskStats;

/// One task's record, with what identifies it.
#[derive(Debug, Clone)]
pub(super) struct Task {
    /// `ac_pid` (a thread id for a thread).
    pub(super) pid: u32,
    /// `ac_tgid` (the process); `ac_pid` on kernels before taskstats v12.
    pub(super) tgid: u32,
    /// `ac_ppid`.
    pub(super) ppid: u32,
    /// The record as a one-thread process.
    pub(super) record: ProcessRecord,
}

const NS: f64 = 1e-9;
const US: f64 = 1e-6;

/// Converts a record. `exited`: an exit record (else a query of a running
/// task); `delay_accounting`: whether `kernel.task_delayacct` was on, without
/// which the block IO, swap-in and reclaim delays were not counted.
pub(super) fn task(s: &TaskStats<'_>, exited: bool, delay_accounting: bool) -> Task {
    let pid = s.pid().unwrap_or(0);
    let user = s.utime_us().unwrap_or(0) as f64 * US;
    let system = s.stime_us().unwrap_or(0) as f64 * US;
    // The scheduler's run time (sum_exec_runtime, kernel/delayacct.c). With
    // delay accounting on the kernel fills it for every task, so a 0 is the
    // task's run time as the scheduler's clock saw it (a `seq` under a slow
    // clock in the VM tier: that one record made the step's CPU "tick
    // sampled"); with it off, a 0 may mean not filled.
    let exact = s.cpu_run_virtual_total_ns().filter(|&ns| ns > 0 || delay_accounting);
    let delay = |ns: Option<u64>| if delay_accounting { ns.map(|n| n as f64 * NS) } else { None };
    let mut record = ProcessRecord::default();
    record.command = String::from_utf8_lossy(s.comm()).into_owned();
    record.pid = s.tgid().unwrap_or(pid);
    record.ppid = s.ppid().unwrap_or(0);
    record.start_unix_seconds = s.start_seconds().unwrap_or(0);
    record.elapsed_seconds = s.elapsed_us().unwrap_or(0) as f64 * US;
    record.threads = 1;
    record.user_seconds = user;
    record.system_seconds = system;
    record.cpu_seconds = exact.map_or(user + system, |ns| ns as f64 * NS);
    record.cpu_time = Some(if exact.is_some() { CpuTime::Exact } else { CpuTime::TickSampled });
    record.peak_rss_bytes = s.hiwater_rss_kib().map(|k| k.saturating_mul(1024));
    record.read_bytes = s.read_bytes();
    record.write_bytes = s.write_bytes();
    record.minor_faults = s.minor_faults().unwrap_or(0);
    record.major_faults = s.major_faults().unwrap_or(0);
    record.voluntary_switches = s.voluntary_switches().unwrap_or(0);
    record.involuntary_switches = s.involuntary_switches().unwrap_or(0);
    record.exit_status = if exited { s.exit_code() } else { None };
    record.running_at_end = !exited;
    record.delays = Delays {
        // The run-queue wait comes from the scheduler's sched_info, kept
        // with or without delay accounting (as `cpu_run_virtual_total`).
        cpu_seconds: s.cpu_delay_total_ns().map(|n| n as f64 * NS),
        blkio_seconds: delay(s.blkio_delay_total_ns()),
        swapin_seconds: delay(s.swapin_delay_total_ns()),
        reclaim_seconds: delay(s.freepages_delay_total_ns()),
    };
    Task { pid, tgid: record.pid, ppid: record.ppid, record }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stepmon_taskstats_parse::netlink::Messages;
    use stepmon_taskstats_parse::taskstats::TaskstatsReply;

    #[test]
    fn the_dd_capture() {
        let datagram = include_bytes!("../../tests/data/exit-dd-fsync.bin");
        let m = Messages::new(datagram).next().unwrap().unwrap();
        let (_, s) = TaskstatsReply::parse(m.payload).unwrap().pid.unwrap();
        let t = task(&s, true, false);
        assert_eq!((t.record.command.as_str(), t.pid, t.tgid), ("dd", 32761, 32761));
        assert_eq!(t.record.peak_rss_bytes, Some(2708 * 1024));
        assert_eq!(t.record.write_bytes, Some((4 << 20) + 8192));
        assert_eq!(t.record.cpu_time, Some(CpuTime::Exact));
        assert!((t.record.cpu_seconds - 0.003_791_668).abs() < 1e-12);
        assert_eq!(t.record.delays.blkio_seconds, None, "delay accounting off: absent, not 0");
        assert!(t.record.delays.cpu_seconds.is_some());
        assert_eq!(task(&s, true, true).record.delays.blkio_seconds, Some(0.0));
    }

    #[test]
    fn a_zero_run_time_is_exact_only_with_delay_accounting() {
        let datagram = include_bytes!("../../tests/data/exit-dd-fsync.bin");
        let m = Messages::new(datagram).next().unwrap().unwrap();
        let (_, s) = TaskstatsReply::parse(m.payload).unwrap().pid.unwrap();
        // cpu_run_virtual_total is the u64 at offset 72 of struct taskstats
        // (include/uapi/linux/taskstats.h).
        let at = s.as_bytes().as_ptr() as usize - datagram.as_ptr() as usize + 72;
        let mut zeroed = datagram.to_vec();
        zeroed[at..at + 8].fill(0);
        let m = Messages::new(&zeroed).next().unwrap().unwrap();
        let (_, s) = TaskstatsReply::parse(m.payload).unwrap().pid.unwrap();
        assert_eq!(s.cpu_run_virtual_total_ns(), Some(0));
        assert_eq!(task(&s, true, false).record.cpu_time, Some(CpuTime::TickSampled), "off: maybe not filled");
        let on = task(&s, true, true).record;
        assert_eq!((on.cpu_time, on.cpu_seconds), (Some(CpuTime::Exact), 0.0), "on: the scheduler's 0");
    }
}
