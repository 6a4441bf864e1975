//! A Windows step's numbers from its job object, each checked against what
//! its first process accounted for itself before it is believed: the job
//! holds that process, so its CPU time, I/O bytes and memory peak are at
//! least that process's own. A job whose numbers fall short of them, or
//! that counted no process at all, is one this Windows does not account
//! (Wine's job objects keep the processes, not all of their counters): its
//! numbers are then absent with that reason, never passed on as zeros.
//! Pure data in and out (the Win32 calls are `crate::spawn`'s), so it is
//! tested on every platform.

use stepmon_model::source::{Accounting, Rung, Source, Sources};

/// What a job accounted (`JOBOBJECT_BASIC_AND_IO_ACCOUNTING_INFORMATION`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct JobCounters {
    /// `TotalUserTime`, 100 ns units.
    pub(crate) user: u64,
    /// `TotalKernelTime`, 100 ns units.
    pub(crate) kernel: u64,
    /// `TotalProcesses`: every process ever in the job.
    pub(crate) total_processes: u32,
    /// `ActiveProcesses`: those in it now.
    pub(crate) active_processes: u32,
}

/// Bytes of I/O operations (`IO_COUNTERS`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Io {
    /// `ReadTransferCount`.
    pub(crate) read: u64,
    /// `WriteTransferCount`.
    pub(crate) write: u64,
    /// `OtherTransferCount`.
    pub(crate) other: u64,
}

/// A job's memory peaks (`JOBOBJECT_EXTENDED_LIMIT_INFORMATION`), bytes of
/// committed private memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct MemoryPeaks {
    /// `PeakJobMemoryUsed`: of all its processes at once.
    pub(crate) job: u64,
    /// `PeakProcessMemoryUsed`: of its largest process.
    pub(crate) process: u64,
}

/// What a process accounted for itself (and nothing it started), for the
/// cross-check of its job's numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ProcessCounters {
    /// User CPU time, 100 ns units.
    pub(crate) user: u64,
    /// Kernel CPU time, 100 ns units.
    pub(crate) kernel: u64,
    /// Its I/O bytes.
    pub(crate) io: Io,
    /// Its peak of committed private memory (`PeakPagefileUsage`), bytes.
    pub(crate) peak_commit: u64,
}

/// What was read at the step's end; an error in words.
#[derive(Debug, Clone)]
pub(crate) struct Readings<'a> {
    /// The job's accounting, read once its leftovers were gone.
    pub(crate) counters: Result<JobCounters, String>,
    /// The job's I/O bytes, read then too.
    pub(crate) io: Result<Io, String>,
    /// The job's memory peaks.
    pub(crate) peaks: Result<MemoryPeaks, String>,
    /// The first process's own counters.
    pub(crate) own: Result<ProcessCounters, String>,
    /// Processes of the job still running when the first had exited.
    pub(crate) leftovers: Option<u64>,
    /// The Wine version, under Wine.
    pub(crate) wine: Option<&'a str>,
}

/// The step's numbers, their sources, and why each absent one is.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Accounted {
    pub(crate) accounting: Accounting,
    pub(crate) sources: Sources,
    pub(crate) not_measured: Vec<String>,
}

/// What no Windows step has, with why.
const NEVER: [&str; 5] = [
    "pids: a job object counts the processes it ever held (accounting.processes), not the most at once",
    "stall: Windows has no pressure stall counters",
    "throttling: a step off Linux has no CPU limit",
    "network: a step off Linux has no network namespace of its own",
    "memory events: OOM kills are counted by cgroups only",
];

/// 100 ns units as seconds.
#[allow(clippy::cast_precision_loss)] // far below 2^53 units (29 years)
fn seconds(units: u64) -> f64 {
    units as f64 / 1e7
}

/// The step's numbers from `readings`.
pub(crate) fn account(readings: &Readings<'_>) -> Accounted {
    let mut out = Accounted::default();
    let by = |what: &str| match readings.wine {
        Some(version) => format!("{what} (under Wine {version}, whose job objects do not account it)"),
        None => format!("{what} (this Windows does not account it)"),
    };
    let job = match &readings.counters {
        Err(e) => Err(format!("the job object's accounting could not be read: {e}")),
        Ok(c) if c.total_processes == 0 => {
            Err(by("the job object counted no process although the step's first process ran in it"))
        }
        Ok(c) => Ok(*c),
    };
    let own = readings.own.as_ref().ok();
    let source = || Source::exact(Rung::JobObject, "the step's job object: every process the step started");
    // CPU time.
    match &job {
        Err(why) => out.not_measured.push(format!("cpu: {why}")),
        Ok(c) => {
            let (job_cpu, own_cpu) = (c.user + c.kernel, own.map_or(0, |o| o.user + o.kernel));
            if job_cpu < own_cpu {
                out.not_measured.push(format!(
                    "cpu: {}",
                    by(&format!(
                        "the job object accounted {:.3} s of CPU time, less than its first process's own {:.3} s",
                        seconds(job_cpu),
                        seconds(own_cpu)
                    ))
                ));
            } else if job_cpu == 0 && readings.wine.is_some() {
                out.not_measured.push(format!("cpu: {}", by("the job object accounted 0 s of CPU time")));
            } else {
                out.accounting.user_seconds = Some(seconds(c.user));
                out.accounting.system_seconds = Some(seconds(c.kernel));
                out.sources.cpu = Some(source());
            }
        }
    }
    // Memory: a process that ran committed some.
    match &readings.peaks {
        Err(e) => out.not_measured.push(format!("memory: the job object's memory peak could not be read: {e}")),
        Ok(peaks) if peaks.job == 0 => out
            .not_measured
            .push(format!("memory: {}", by("the job object reported a peak of 0 bytes for processes that ran"))),
        Ok(peaks) if own.is_some_and(|o| peaks.job < o.peak_commit) => out.not_measured.push(format!(
            "memory: {}",
            by(&format!(
                "the job object's peak ({} bytes) is below its first process's own ({} bytes)",
                peaks.job,
                own.map_or(0, |o| o.peak_commit)
            ))
        )),
        Ok(peaks) => {
            out.accounting.memory_peak_bytes = Some(peaks.job);
            out.accounting.process_memory_peak_bytes = Some(peaks.process).filter(|p| *p > 0);
            out.sources.memory = Some(Source::exact(
                Rung::JobObject,
                "the step's job object: the most committed private memory of all its processes at once \
                 (PeakJobMemoryUsed; not resident memory, no page cache)",
            ));
        }
    }
    // I/O bytes.
    let total = |io: &Io| io.read + io.write + io.other;
    match (&job, &readings.io) {
        (Err(why), _) => out.not_measured.push(format!("io: {why}")),
        (Ok(_), Err(e)) => out.not_measured.push(format!("io: the job object's I/O counters could not be read: {e}")),
        (Ok(_), Ok(io)) => {
            let own_io = own.map_or(0, |o| total(&o.io));
            if total(io) < own_io {
                out.not_measured.push(format!(
                    "io: {}",
                    by(&format!(
                        "the job object accounted {} bytes of I/O, less than its first process's own {own_io}",
                        total(io)
                    ))
                ));
            } else if total(io) == 0 && readings.wine.is_some() {
                out.not_measured.push(format!("io: {}", by("the job object accounted 0 bytes of I/O")));
            } else {
                out.accounting.read_bytes = Some(io.read);
                out.accounting.write_bytes = Some(io.write);
                out.accounting.other_io_bytes = Some(io.other);
                out.sources.io = Some(Source::exact(
                    Rung::JobObject,
                    "the step's job object: bytes its processes read and wrote (files, pipes, devices; cache \
                     hits included, not storage traffic)",
                ));
            }
        }
    }
    if let Ok(c) = &job {
        out.accounting.processes = Some(u64::from(c.total_processes));
    }
    out.accounting.leftovers_killed = readings.leftovers;
    out.not_measured.extend(NEVER.iter().map(|&s| s.to_owned()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows() -> Readings<'static> {
        Readings {
            counters: Ok(JobCounters { user: 12_500_000, kernel: 2_500_000, total_processes: 4, active_processes: 0 }),
            io: Ok(Io { read: 4096, write: 1 << 20, other: 100 }),
            peaks: Ok(MemoryPeaks { job: 100 << 20, process: 40 << 20 }),
            own: Ok(ProcessCounters {
                user: 1_000_000,
                kernel: 500_000,
                io: Io { read: 4096, write: 0, other: 0 },
                peak_commit: 10 << 20,
            }),
            leftovers: Some(1),
            wine: None,
        }
    }

    #[test]
    fn a_job_that_accounts_gives_every_number_with_its_source() {
        let out = account(&windows());
        let a = out.accounting;
        assert_eq!((a.user_seconds, a.system_seconds), (Some(1.25), Some(0.25)));
        assert_eq!((a.memory_peak_bytes, a.process_memory_peak_bytes), (Some(100 << 20), Some(40 << 20)));
        assert_eq!((a.read_bytes, a.write_bytes, a.other_io_bytes), (Some(4096), Some(1 << 20), Some(100)));
        assert_eq!((a.processes, a.leftovers_killed), (Some(4), Some(1)));
        for source in [&out.sources.cpu, &out.sources.memory, &out.sources.io] {
            let source = source.as_ref().unwrap();
            assert_eq!((source.rung, source.bound), (Rung::JobObject, stepmon_model::Bound::Exact));
        }
        assert!(out.not_measured.iter().all(|n| !n.starts_with("cpu") && !n.starts_with("memory:")));
    }

    #[test]
    fn numbers_a_job_does_not_account_are_absent_with_why() {
        // What Wine 8 gives: the processes counted, CPU and memory zero.
        let mut wine = windows();
        wine.wine = Some("8.0");
        wine.counters = Ok(JobCounters { total_processes: 4, ..JobCounters::default() });
        wine.io = Ok(Io::default());
        wine.peaks = Ok(MemoryPeaks::default());
        let out = account(&wine);
        let a = out.accounting;
        assert_eq!((a.user_seconds, a.memory_peak_bytes, a.read_bytes), (None, None, None));
        assert_eq!(a.processes, Some(4), "what Wine does count is kept");
        assert_eq!((&out.sources.cpu, &out.sources.memory, &out.sources.io), (&None, &None, &None));
        let reason = |group: &str| out.not_measured.iter().find(|n| n.starts_with(group)).unwrap().clone();
        assert!(reason("cpu:").contains("less than its first process's own 0.150 s"), "{}", reason("cpu:"));
        assert!(reason("cpu:").contains("under Wine 8.0"), "{}", reason("cpu:"));
        assert!(reason("memory:").contains("a peak of 0 bytes"), "{}", reason("memory:"));
        assert!(reason("io:").contains("less than its first process's own 4096"), "{}", reason("io:"));
        // Zeros of the process too: under Wine still not taken as measured.
        wine.own = Ok(ProcessCounters::default());
        let out = account(&wine);
        assert_eq!(out.accounting.user_seconds, None);
        assert!(out.not_measured[0].contains("accounted 0 s of CPU time (under Wine 8.0"), "{:?}", out.not_measured);
        // A job that counted no process: nothing of it is believed.
        let mut none = windows();
        none.counters = Ok(JobCounters::default());
        let out = account(&none);
        assert_eq!((out.accounting.user_seconds, out.accounting.processes), (None, None));
        assert!(out.not_measured[0].contains("counted no process"), "{:?}", out.not_measured);
        // Wine 8 lacks the I/O class: that reason, the rest as before.
        let mut no_io = windows();
        no_io.io = Err("Invalid function. (os error 1)".into());
        let out = account(&no_io);
        assert_eq!((out.accounting.read_bytes, out.accounting.user_seconds), (None, Some(1.25)));
        assert!(out.not_measured[0].starts_with("io: the job object's I/O counters could not be read: Invalid"));
        // An unreadable job.
        let mut failed = windows();
        failed.counters = Err("access denied".into());
        assert!(account(&failed).not_measured[0].ends_with("could not be read: access denied"));
    }
}
