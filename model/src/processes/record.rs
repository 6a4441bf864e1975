//! One process of the step, as its taskstats record(s) describe it.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::label::label;

/// Where a process's sub-second [`ProcessRecord::start`] and
/// [`ProcessRecord::end`] came from, and so how close they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Lifetime {
    /// The start is the proc connector's fork event (`timestamp_ns`, the
    /// monotonic clock in ns, drivers/connector/cn_proc.c); the end is that
    /// start plus taskstats' `ac_etime` (µs, kernel/tsacct.c), both measured
    /// from the task's `start_time`: exact to well under a millisecond.
    ForkEvent,
    /// The start is `/proc/PID/stat`'s `starttime` (clock ticks after boot,
    /// 10 ms at the usual `USER_HZ` of 100, proc(5)); the end is the last
    /// sample that saw the process alive: a lower bound, late by up to a
    /// sampling interval.
    ProcStat,
    /// Only the whole-second start (`ac_btime`) and the elapsed time are
    /// known (no fork event was read for it, or a document of an older
    /// version): lifetimes may look overlapping or apart by up to a second.
    WholeSeconds,
}

/// What `cpuSeconds` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CpuTime {
    /// The scheduler's run time (`cpu_run_virtual_total`, ns): exact.
    Exact,
    /// `ac_utime + ac_stime`, sampled at timer ticks: a process shorter than
    /// a tick may show 0, one that ran across ticks may show more than it used.
    TickSampled,
}

/// Time the process waited, s (delay accounting,
/// <https://docs.kernel.org/accounting/delay-accounting.html>). Each is absent
/// when it was not counted.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Delays {
    /// Runnable, waiting for a CPU (the scheduler's `run_delay`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_seconds: Option<f64>,
    /// Waiting for synchronous block IO.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blkio_seconds: Option<f64>,
    /// Waiting for swap-in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swapin_seconds: Option<f64>,
    /// In memory reclaim (`freepages`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reclaim_seconds: Option<f64>,
}

impl Delays {
    /// Adds `other`'s delays; a delay absent in either stays absent.
    pub fn add(&mut self, other: &Delays) {
        fn add(a: &mut Option<f64>, b: Option<f64>) {
            *a = a.zip(b).map(|(a, b)| a + b);
        }
        add(&mut self.cpu_seconds, other.cpu_seconds);
        add(&mut self.blkio_seconds, other.blkio_seconds);
        add(&mut self.swapin_seconds, other.swapin_seconds);
        add(&mut self.reclaim_seconds, other.reclaim_seconds);
    }
}

/// One process (all its threads).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProcessRecord {
    /// `ac_comm`: the command name the kernel keeps (15 bytes at most).
    pub command: String,
    /// argv as read from `/proc/PID/cmdline` while it ran: at most 8 args
    /// of 80 bytes (argv\[0\], the next two and the last five of a longer
    /// list); empty when not read (a process shorter than the listener's
    /// pause or the sampling interval, arguments read before its exec, no
    /// access). Secrets are hidden as `***` when read: values of options
    /// and variables named like a password, token, secret or credential,
    /// `Authorization:` and `Cookie:` headers, a URL's password.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// The process id (tgid).
    pub pid: u32,
    /// Its parent at exit (`ac_ppid`; the subreaper for an orphan).
    pub ppid: u32,
    /// Start, seconds since the epoch (`ac_btime`).
    pub start_unix_seconds: u64,
    /// Lifetime, s (`ac_etime`; up to the query for one still running).
    pub elapsed_seconds: f64,
    /// When it started, to the resolution [`ProcessRecord::lifetime`] says
    /// (absent in documents of older versions and where no sub-second start
    /// was read: then only [`ProcessRecord::start_unix_seconds`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<Timestamp>,
    /// When it ended (for one still running at the end: when it was queried).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<Timestamp>,
    /// Where `start` and `end` came from (absent with them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifetime: Option<Lifetime>,
    /// Threads whose records were summed.
    pub threads: u32,
    /// User CPU, s, tick-sampled (`ac_utime`).
    pub user_seconds: f64,
    /// System CPU, s, tick-sampled (`ac_stime`).
    pub system_seconds: f64,
    /// CPU, s: exact where the record has the run time, else user + system.
    pub cpu_seconds: f64,
    /// Which of the two `cpu_seconds` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_time: Option<CpuTime>,
    /// Peak resident set, bytes (`hiwater_rss`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<u64>,
    /// Bytes it caused to be read from storage (`read_bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_bytes: Option<u64>,
    /// Bytes it caused to be written to storage (`write_bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_bytes: Option<u64>,
    /// Minor page faults.
    pub minor_faults: u64,
    /// Major page faults.
    pub major_faults: u64,
    /// Voluntary context switches.
    pub voluntary_switches: u64,
    /// Involuntary context switches.
    pub involuntary_switches: u64,
    /// Exit status (wait status), absent for a process still running.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<u32>,
    /// Still running when the step ended (read by a query, then killed).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub running_at_end: bool,
    /// Delays.
    pub delays: Delays,
}

impl ProcessRecord {
    /// The argument that tells this run of its command from the others
    /// (`foo.cpp` for `cc1plus ... src/foo.cpp -o x.s`), see [`label`].
    #[must_use]
    pub fn label(&self) -> Option<&str> {
        label(&self.args)
    }

    /// Its lifetime as seconds since the epoch, `[start, end)`, and how it
    /// is known: the sub-second [`ProcessRecord::start`] and
    /// [`ProcessRecord::end`] when recorded, else the whole-second start and
    /// the elapsed time ([`Lifetime::WholeSeconds`]).
    ///
    /// ```
    /// use stepmon_model::processes::{Lifetime, ProcessRecord};
    /// let mut p = ProcessRecord::default();
    /// (p.start_unix_seconds, p.elapsed_seconds) = (1_000, 0.5);
    /// assert_eq!(p.interval(), (1_000.0, 1_000.5, Lifetime::WholeSeconds));
    /// p.start = Some(jiff::Timestamp::new(1_000, 250_000_000).unwrap());
    /// p.end = Some(jiff::Timestamp::new(1_000, 750_000_000).unwrap());
    /// p.lifetime = Some(Lifetime::ForkEvent);
    /// assert_eq!(p.interval(), (1_000.25, 1_000.75, Lifetime::ForkEvent));
    /// ```
    #[must_use]
    #[allow(clippy::cast_precision_loss)] // seconds since the epoch, far below 2^52
    pub fn interval(&self) -> (f64, f64, Lifetime) {
        let seconds = |t: Timestamp| t.as_second() as f64 + f64::from(t.subsec_nanosecond()) * 1e-9;
        match (self.start, self.end, self.lifetime) {
            (Some(start), Some(end), Some(lifetime)) if lifetime != Lifetime::WholeSeconds => {
                let start = seconds(start);
                (start, seconds(end).max(start), lifetime)
            }
            _ => {
                let start = self.start_unix_seconds as f64;
                (start, start + self.elapsed_seconds.max(0.0), Lifetime::WholeSeconds)
            }
        }
    }

    /// Read + written bytes (absent counts as 0 here: only for ranking).
    #[must_use]
    pub fn io_bytes(&self) -> u64 {
        self.read_bytes.unwrap_or(0).saturating_add(self.write_bytes.unwrap_or(0))
    }

    /// Folds another thread's record of the same process into this one:
    /// CPU, IO, faults, switches and delays add up; the memory map is
    /// shared, so the peak RSS is the larger.
    pub fn add_thread(&mut self, other: &ProcessRecord) {
        self.threads = self.threads.saturating_add(other.threads.max(1));
        self.user_seconds += other.user_seconds;
        self.system_seconds += other.system_seconds;
        self.cpu_seconds += other.cpu_seconds;
        if other.cpu_time == Some(CpuTime::TickSampled) {
            self.cpu_time = other.cpu_time;
        }
        self.peak_rss_bytes = self.peak_rss_bytes.max(other.peak_rss_bytes);
        let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.saturating_add(b)),
            (a, b) => a.or(b),
        };
        self.read_bytes = add(self.read_bytes, other.read_bytes);
        self.write_bytes = add(self.write_bytes, other.write_bytes);
        self.minor_faults = self.minor_faults.saturating_add(other.minor_faults);
        self.major_faults = self.major_faults.saturating_add(other.major_faults);
        self.voluntary_switches = self.voluntary_switches.saturating_add(other.voluntary_switches);
        self.involuntary_switches = self.involuntary_switches.saturating_add(other.involuntary_switches);
        self.delays.add(&other.delays);
    }
}
