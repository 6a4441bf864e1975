//! The step's processes one by one: what each used (CPU, peak memory, IO,
//! delays), from the kernel's taskstats exit records
//! (<https://docs.kernel.org/accounting/taskstats.html>) where stepmon may
//! listen to them, kept bounded: aggregates per command and the top N
//! processes by CPU, by peak RSS and by IO ([`Processes::build`]).
//!
//! Records can be lost under an exit storm (the kernel drops netlink
//! messages when the listener's buffer is full and counts the drops per
//! socket, for every process of the machine, not the step's alone): the
//! document says how many records arrived and at most how many were lost,
//! and marks the aggregates partial.

mod aggregate;
mod label;
mod reaped;
mod record;

pub use aggregate::CommandAggregate;
pub use label::label;
pub use reaped::{RUSAGE, Reaped, ReapedProcess};
pub use record::{CpuTime, Delays, Lifetime, ProcessRecord};

use serde::{Deserialize, Serialize};

/// How many processes of each top list the document keeps by default.
pub const DEFAULT_TOP: usize = 20;

/// The label of a [`ProcessSource::Sampled`] document, first in its `missing`.
pub const SAMPLED: &str = "sampled: processes shorter than the interval are missing";

/// Where the per-process numbers came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ProcessSource {
    /// Taskstats exit records (and queries by pid for processes still
    /// running at the end): every process, even a 1 ms one.
    Taskstats,
    /// `/proc/PID/{stat,status,io}` of the step's processes read at each
    /// sample where taskstats is unavailable: a process that lived between
    /// two samples is missing, and CPU is counted in clock ticks; plus the
    /// `wait4` rusage of the processes stepmon reaped ([`Processes::reaped`]).
    Sampled,
    /// Nothing per process (taskstats unavailable): the reason is in `missing`.
    None,
}

/// How many processes the document lists in full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Keep {
    /// The top N by CPU, by peak RSS and by IO.
    Top(usize),
    /// Every process (`--processes all`).
    All,
}

impl std::str::FromStr for Keep {
    type Err = String;

    /// `all`, or a count of processes per top list.
    fn from_str(text: &str) -> Result<Keep, String> {
        match text {
            "all" => Ok(Keep::All),
            n => n.parse().map(Keep::Top).map_err(|_| format!("`{n}`: expected a number of processes or `all`")),
        }
    }
}

impl Default for Keep {
    fn default() -> Self {
        Keep::Top(DEFAULT_TOP)
    }
}

/// The `processes` object of a run document.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Processes {
    /// Where the numbers came from (absent: nothing per process).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<ProcessSource>,
    /// Process records of the step that arrived (a multi-threaded process's
    /// threads each send one; they are summed into one process).
    pub records: u64,
    /// Distinct processes accounted, keyed by (pid, start time).
    pub processes: u64,
    /// Netlink messages the kernel dropped on stepmon's sockets while the
    /// step ran (`/proc/net/netlink` Drops, or overruns seen as `ENOBUFS`):
    /// at most this many of the step's records are lost — drops are counted
    /// for every process of the machine.
    pub lost_at_most: u64,
    /// True when records may be missing (`lost_at_most > 0`): every total
    /// below is then a lower bound.
    pub partial: bool,
    /// What a process's `cpuSeconds` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_time: Option<CpuTime>,
    /// Whether delay accounting was on (`kernel.task_delayacct`): without
    /// it the block IO, swap-in and reclaim delays are absent.
    pub delay_accounting: bool,
    /// Per-process numbers that are absent, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// How many processes are listed.
    pub keep: Keep,
    /// One entry per command name, most CPU first.
    pub commands: Vec<CommandAggregate>,
    /// The top processes by CPU.
    pub top_by_cpu: Vec<ProcessRecord>,
    /// The top processes by peak RSS.
    pub top_by_peak_rss: Vec<ProcessRecord>,
    /// The top processes by bytes read and written to storage.
    pub top_by_io: Vec<ProcessRecord>,
    /// Every process, in start order (only with [`Keep::All`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub all: Vec<ProcessRecord>,
    /// The processes stepmon reaped and their `wait4` rusage (sampled
    /// documents: what the samples miss, the rusage of a parent that
    /// waited for it counts): [`Reaped`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reaped: Option<Reaped>,
}

impl Processes {
    /// Nothing per process, and why (`not root`, `not in the initial namespaces`, ...).
    #[must_use]
    pub fn unavailable(reason: impl Into<String>) -> Processes {
        Processes { missing: vec![reason.into()], ..Processes::default() }
    }

    /// The bounded document of the step's processes. `records` is the
    /// number of exit records that arrived, `lost_at_most` the drops.
    #[must_use]
    pub fn build(mut processes: Vec<ProcessRecord>, keep: Keep, records: u64, lost_at_most: u64) -> Processes {
        let start = |p: &ProcessRecord| (p.start_unix_seconds, p.pid);
        // Sorted by reference: records are some 300 bytes each, and sorting
        // an exit storm's in place spent its time moving them about
        // (benches/README.md, "Figures behind code comments").
        let commands = {
            let mut in_start_order: Vec<&ProcessRecord> = processes.iter().collect();
            in_start_order.sort_by_key(|p| start(p));
            aggregate::by_command(in_start_order)
        };
        let top = |key: fn(&ProcessRecord) -> f64| -> Vec<ProcessRecord> {
            let n = match keep {
                Keep::Top(n) => n,
                Keep::All => processes.len(),
            };
            let order = |a: &&ProcessRecord, b: &&ProcessRecord| {
                key(b).total_cmp(&key(a)).then(a.pid.cmp(&b.pid)).then(a.start_unix_seconds.cmp(&b.start_unix_seconds))
            };
            let mut sorted: Vec<&ProcessRecord> = processes.iter().collect();
            // The top n without sorting the rest: sorting an exit storm's
            // processes three times over was most of the build
            // (benches/README.md, "Figures behind code comments").
            if n < sorted.len() {
                if n > 0 {
                    sorted.select_nth_unstable_by(n - 1, order);
                }
                sorted.truncate(n);
            }
            sorted.sort_by(order);
            sorted.into_iter().cloned().collect()
        };
        let exact = processes.iter().all(|p| p.cpu_time == Some(CpuTime::Exact));
        Processes {
            source: Some(ProcessSource::Taskstats),
            records,
            processes: processes.len() as u64,
            lost_at_most,
            partial: lost_at_most > 0,
            cpu_time: (!processes.is_empty()).then_some(if exact { CpuTime::Exact } else { CpuTime::TickSampled }),
            delay_accounting: processes.iter().any(|p| p.delays.blkio_seconds.is_some()),
            missing: Vec::new(),
            keep,
            commands,
            top_by_cpu: top(|p| p.cpu_seconds),
            top_by_peak_rss: top(|p| p.peak_rss_bytes.map_or(-1.0, |b| b as f64)),
            top_by_io: top(|p| p.io_bytes() as f64),
            all: if keep == Keep::All {
                processes.sort_by_key(start);
                processes
            } else {
                Vec::new()
            },
            reaped: None,
        }
    }

    /// Adds the processes stepmon reaped ([`Reaped`], as many per top list
    /// as [`Processes::keep`] says); `not_kept`: how many more were reaped
    /// than stepmon kept.
    pub fn add_reaped(&mut self, reaped: &[ReapedProcess], not_kept: u64) {
        let n = match self.keep {
            Keep::Top(n) => n,
            Keep::All => reaped.len(),
        };
        self.reaped = Some(Reaped::build(reaped, not_kept, n));
    }

    /// The document of processes read at each sample ([`ProcessSource::Sampled`]),
    /// with why taskstats was unavailable: partial, since a process shorter
    /// than the sampling interval is missing.
    #[must_use]
    pub fn sampled(processes: Vec<ProcessRecord>, keep: Keep, why_not_taskstats: impl Into<String>) -> Processes {
        let seen = processes.len() as u64;
        let mut doc = Processes::build(processes, keep, seen, 0);
        doc.source = Some(ProcessSource::Sampled);
        doc.partial = true;
        doc.missing = vec![SAMPLED.to_owned(), why_not_taskstats.into()];
        doc
    }

    /// What the records miss, in words: `none lost`, `up to 412 process
    /// records lost: totals are partial`, `processes shorter than the
    /// interval are missing` (sampled).
    #[must_use]
    pub fn losses(&self) -> String {
        match (self.source, self.lost_at_most, self.partial) {
            (Some(ProcessSource::Sampled), ..) => "processes shorter than the interval are missing".to_owned(),
            (_, 0, false) => "none lost".to_owned(),
            (_, 0, true) => "partial: events lost".to_owned(),
            (_, n, _) => format!("up to {n} process records lost: totals are partial"),
        }
    }

    /// Sum of every command's CPU, s.
    #[must_use]
    pub fn cpu_seconds(&self) -> f64 {
        self.commands.iter().map(|c| c.cpu_seconds).sum()
    }

    /// The process with the largest peak RSS.
    #[must_use]
    pub fn peak(&self) -> Option<&ProcessRecord> {
        self.top_by_peak_rss.first().filter(|p| p.peak_rss_bytes.is_some())
    }
}
