//! Where taskstats is unavailable (no privilege, a container, a kernel
//! without `CONFIG_TASKSTATS`): the step's processes read from
//! `/proc/PID/{stat,status,io}` (<https://docs.kernel.org/filesystems/proc.html#process-specific-subdirectories>)
//! on the step sampler's schedule ([`Policy::step`]: fast at first, then
//! every `min_interval`), on the thread every step shares
//! ([`crate::ticker`]), and once more before the kill. Each process is kept
//! by (pid, start time) with its last values, since pids are reused. A
//! process that lived between two readings is missing: the document says so.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use stepmon_model::processes::{CpuTime, Keep, ProcessRecord, Processes};
use stepmon_sampler::Policy;
use stepmon_sysusage::parse::{ProcIo, ProcStat, ProcStatus};

use crate::ticker::{Job, Ticker, Ticking};
use crate::tree::children;

/// Processes seen, by (pid, start in clock ticks after boot).
pub(super) type Seen = BTreeMap<(u32, u64), ProcessRecord>;

/// The readings of one step.
#[derive(Debug)]
pub(crate) struct Sampling {
    seen: Arc<Mutex<Seen>>,
    /// Its readings on the shared thread (`None`: it could not start).
    ticking: Option<Ticking>,
    /// The step's own subreaper, whose descendants are the step's (0 until
    /// it is spawned).
    subreaper: Arc<AtomicI32>,
    why_not_taskstats: String,
    keep: Keep,
}

/// The clock (`CLOCK_BOOTTIME`, which `/proc/PID/stat`'s start time counts
/// from) and the wall clock now, s.
fn clocks() -> (f64, f64) {
    let boot = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
    #[allow(clippy::cast_precision_loss)]
    let since_boot = boot.tv_sec as f64 + boot.tv_nsec as f64 / 1e9;
    let unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
    (since_boot, unix)
}

/// One process's reading, or `None` when it is gone (or unreadable).
fn read(pid: i32, hz: f64, (since_boot, unix): (f64, f64)) -> Option<((u32, u64), ProcessRecord)> {
    let stat_bytes = stepmon_fdread::read_path(format!("/proc/{pid}/stat")).ok()?;
    let stat = ProcStat::parse(&stat_bytes).ok()?;
    // A zombie has no VmHWM any more and an unreadable io (another user's
    // process, ptrace access mode): those stay absent, not 0.
    let status = stepmon_fdread::read_path(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|b| ProcStatus::parse(&b).ok())
        .unwrap_or_default();
    let io = stepmon_fdread::read_path(format!("/proc/{pid}/io")).ok().and_then(|b| ProcIo::parse(&b).ok());
    #[allow(clippy::cast_precision_loss)] // tick counts far below 2^53
    let ticks = |t: u64| t as f64 / hz;
    let started = ticks(stat.start_ticks);
    let mut r = ProcessRecord::default();
    r.command = String::from_utf8_lossy(stat.comm).into_owned();
    r.pid = u32::try_from(stat.pid).ok()?;
    r.ppid = u32::try_from(stat.ppid).unwrap_or(0);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    {
        r.start_unix_seconds = (unix - (since_boot - started)).max(0.0) as u64;
    }
    r.elapsed_seconds = (since_boot - started).max(0.0);
    // Sub-second: the start in clock ticks (10 ms at USER_HZ 100), the end
    // this reading (the last that saw it, once it is gone).
    #[allow(clippy::cast_possible_truncation)] // ns since the epoch fit an i128
    let at = |unix: f64| jiff::Timestamp::from_nanosecond((unix * 1e9) as i128).ok();
    (r.start, r.end) = (at(unix - r.elapsed_seconds), at(unix));
    r.lifetime = r.start.and(r.end).map(|_| stepmon_model::processes::Lifetime::ProcStat);
    r.threads = u32::try_from(stat.threads).unwrap_or(u32::MAX).max(1);
    r.user_seconds = ticks(stat.utime);
    r.system_seconds = ticks(stat.stime);
    r.cpu_seconds = r.user_seconds + r.system_seconds;
    r.cpu_time = Some(CpuTime::TickSampled);
    r.peak_rss_bytes = status.vm_hwm_kib.map(|k| k.saturating_mul(1024));
    r.read_bytes = io.and_then(|io| io.read_bytes);
    r.write_bytes = io.and_then(|io| io.write_bytes);
    r.minor_faults = stat.minflt;
    r.major_faults = stat.majflt;
    r.args = super::args::of(r.pid).unwrap_or_default();
    Some(((r.pid, stat.start_ticks), r))
}

/// Folds a newer reading of a process into what was kept: the counters only
/// grow, the peak is the larger, and what the newer reading lacks (a zombie's
/// memory and arguments) keeps its last value; arguments only while the
/// command is the same (an exec changes both).
fn update(kept: &mut ProcessRecord, mut newer: ProcessRecord) {
    let peak = kept.peak_rss_bytes.max(newer.peak_rss_bytes);
    let (read, write) = (newer.read_bytes.or(kept.read_bytes), newer.write_bytes.or(kept.write_bytes));
    if newer.args.is_empty() && newer.command == kept.command {
        newer.args = std::mem::take(&mut kept.args);
    }
    *kept = newer;
    kept.peak_rss_bytes = peak;
    kept.read_bytes = read;
    kept.write_bytes = write;
}

/// Reads every process of the step now: the children of the step's own
/// subreaper (the step's root and the orphans reparented to it) and their
/// descendants; nothing before the subreaper is known (`subreaper` 0).
fn sample(subreaper: i32, seen: &Mutex<Seen>, running_at_end: bool) {
    if subreaper <= 0 {
        return;
    }
    let hz = rustix::param::clock_ticks_per_second() as f64;
    let now = clocks();
    let pids: Vec<i32> = children::of(subreaper).into_iter().flat_map(children::tree_of).collect();
    let mut seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
    for pid in pids {
        let Some((key, mut record)) = read(pid, hz, now) else { continue };
        record.running_at_end = running_at_end;
        match seen.get_mut(&key) {
            Some(kept) => update(kept, record),
            None => {
                seen.insert(key, record);
            }
        }
    }
}

impl Sampling {
    /// Starts reading on `ticker`'s thread (before the step is spawned).
    pub(crate) fn start(keep: Keep, why_not_taskstats: String, ticker: &Ticker) -> Sampling {
        let subreaper = Arc::new(AtomicI32::new(0));
        let seen = Arc::new(Mutex::new(Seen::new()));
        let policy = Policy::step();
        let interval = move |started: Instant| {
            let fast = policy.fast_start.filter(|f| started.elapsed() < f.duration);
            fast.map_or(policy.min_interval, |f| f.interval)
        };
        let started = Instant::now();
        let job: Job = {
            let (subreaper, seen) = (Arc::clone(&subreaper), Arc::clone(&seen));
            Arc::new(move || {
                sample(subreaper.load(Ordering::Acquire), &seen, false);
                interval(started)
            })
        };
        let ticking = ticker.add(interval(started), job);
        Sampling { seen, ticking, subreaper, why_not_taskstats, keep }
    }

    /// The step's subreaper was spawned with this PID (as this process's
    /// pid namespace numbers it; /proc may number it otherwise).
    pub(crate) fn set_subreaper(&self, pid: i32) {
        self.subreaper.store(children::in_procfs(pid).unwrap_or(0), Ordering::Release);
    }

    /// Where the watch finds the processes' CPU times.
    pub(crate) fn seen(&self) -> Arc<Mutex<Seen>> {
        Arc::clone(&self.seen)
    }

    /// The last reading, before what is left is killed.
    pub(crate) fn query_running(&mut self) {
        sample(self.subreaper.load(Ordering::Acquire), &self.seen, true);
    }

    /// Stops reading and builds the document.
    pub(crate) fn finish(mut self) -> Processes {
        let started = self.ticking.take().is_some();
        let seen = std::mem::take(&mut *self.seen.lock().unwrap_or_else(PoisonError::into_inner));
        let mut doc = Processes::sampled(seen.into_values().collect(), self.keep, self.why_not_taskstats);
        if !started && doc.processes == 0 {
            doc.missing.push("the sampling thread could not start".to_owned());
        }
        doc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_read_with_its_peak_and_kept_by_pid_and_start() {
        let _children = crate::CHILDREN_OF_THE_TEST_PROCESS.lock().unwrap_or_else(PoisonError::into_inner);
        let me = i32::try_from(std::process::id()).unwrap();
        let spawned = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        // Its exec done to the end: its arguments are in place.
        assert!(super::super::args::tests::until_read(child.id(), "sleep").is_some());
        let seen = Mutex::new(Seen::new());
        // This process stands in for the step's subreaper.
        sample(me, &seen, false);
        sample(me, &seen, true);
        child.kill().unwrap();
        child.wait().unwrap();
        let seen = seen.into_inner().unwrap();
        let pid = child.id();
        let sleep: Vec<_> = seen.iter().filter(|((p, _), _)| *p == pid).map(|(_, r)| r).collect();
        assert_eq!(sleep.len(), 1, "two readings, one process: {seen:?}");
        assert_eq!(sleep[0].command, "sleep");
        assert_eq!(sleep[0].args, ["sleep", "5"]);
        assert!(sleep[0].peak_rss_bytes.is_some_and(|b| b > 0), "{:?}", sleep[0]);
        assert!(sleep[0].running_at_end);
        // Its start to the clock tick, its end the last reading.
        let (start, end, lifetime) = sleep[0].interval();
        assert_eq!(lifetime, stepmon_model::processes::Lifetime::ProcStat);
        assert!((start - spawned).abs() < 0.05, "started {start}, spawned {spawned}: to the tick");
        assert!(end >= start && end - start < 5.0, "{start} {end}");
    }

    #[test]
    fn a_zombie_keeps_its_last_peak_and_args() {
        let mut kept = ProcessRecord::default();
        (kept.peak_rss_bytes, kept.read_bytes) = (Some(4096), Some(1));
        (kept.command, kept.args) = ("cc1".to_owned(), vec!["cc1".to_owned(), "a.c".to_owned()]);
        let mut zombie = ProcessRecord::default();
        zombie.cpu_seconds = 2.0;
        zombie.command = "cc1".to_owned();
        update(&mut kept, zombie);
        assert_eq!((kept.peak_rss_bytes, kept.read_bytes, kept.cpu_seconds), (Some(4096), Some(1), 2.0));
        assert_eq!(kept.args, ["cc1", "a.c"]);
    }

    #[test]
    fn an_exec_replaces_the_args() {
        let mut kept = ProcessRecord::default();
        (kept.command, kept.args) = ("sh".to_owned(), vec!["sh".to_owned(), "-c".to_owned()]);
        let mut execed = ProcessRecord::default();
        execed.command = "cc1".to_owned();
        update(&mut kept, execed.clone());
        assert!(kept.args.is_empty(), "not sh's args for cc1: {kept:?}");
        execed.args = vec!["cc1".to_owned()];
        update(&mut kept, execed);
        assert_eq!(kept.args, ["cc1"]);
    }
}
