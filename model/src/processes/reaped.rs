//! What stepmon's own `wait4` says about the processes it reaped — the
//! step's main process and every orphan reparented to it, stepmon being the
//! child subreaper — where taskstats is unavailable and the per-process
//! records are sampled ([`super::ProcessSource::Sampled`]).
//!
//! wait4 rusage: the process and the descendants it waited for,
//! `RUSAGE_CHILDREN` semantics (getrusage(2),
//! <https://man7.org/linux/man-pages/man2/getrusage.2.html>). So the main
//! process's CPU holds that of every process it waited for, however short
//! (what the samples miss), and its max RSS is the largest of any one of
//! them, as GNU time reports it. These numbers are not added to the
//! sampled records: a record's CPU would then count its children's too.

use serde::{Deserialize, Serialize};

/// One process stepmon reaped, with its `wait4` rusage.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReapedProcess {
    /// The process id.
    pub pid: u32,
    /// Its command name (`comm`), read from `/proc/PID/stat` while it was a
    /// zombie, just before it was reaped; absent when that read failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Whether it is the step's main process (the others are orphans).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub main: bool,
    /// User CPU, s (`ru_utime`), with the descendants it waited for.
    pub user_seconds: f64,
    /// System CPU, s (`ru_stime`), with the same.
    pub system_seconds: f64,
    /// User + system, s.
    pub cpu_seconds: f64,
    /// The largest peak resident set of it and the descendants it waited
    /// for, bytes (`ru_maxrss`): of one process, not a sum.
    pub max_rss_bytes: u64,
    /// Bytes read from storage (`ru_inblock` × 512).
    pub block_read_bytes: u64,
    /// Bytes written to storage (`ru_oublock` × 512).
    pub block_write_bytes: u64,
    /// Minor page faults (`ru_minflt`).
    pub minor_faults: u64,
    /// Major page faults (`ru_majflt`).
    pub major_faults: u64,
    /// Voluntary context switches (`ru_nvcsw`).
    pub voluntary_switches: u64,
    /// Involuntary context switches (`ru_nivcsw`).
    pub involuntary_switches: u64,
    /// Its wait status (as `wait4` returns it: exit code << 8, or the signal).
    pub exit_status: u32,
}

/// The processes stepmon reaped, bounded like the records: how many, their
/// CPU, and the top ones by CPU and by max RSS.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Reaped {
    /// What the numbers cover, in words (for a reader of the JSON alone).
    pub rusage: String,
    /// Processes reaped.
    pub count: u64,
    /// Of those, reaped after stepmon had kept the most it keeps
    /// (`count` has them, nothing else here does).
    #[serde(skip_serializing_if = "is_zero")]
    pub not_kept: u64,
    /// The kept ones' CPU summed, s: the step's whole process tree where
    /// every process was waited for by its parent or by stepmon.
    pub cpu_seconds: f64,
    /// The top reaped processes by CPU.
    pub top_by_cpu: Vec<ReapedProcess>,
    /// The top reaped processes by max RSS.
    pub top_by_max_rss: Vec<ReapedProcess>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What [`Reaped::rusage`] says.
pub const RUSAGE: &str =
    "wait4 rusage: the process and the descendants it waited for, RUSAGE_CHILDREN semantics, getrusage(2)";

impl Reaped {
    /// The bounded list of `reaped` (`not_kept` more were reaped and not
    /// kept), `n` per top list.
    #[must_use]
    pub fn build(reaped: &[ReapedProcess], not_kept: u64, n: usize) -> Reaped {
        let top = |key: fn(&ReapedProcess) -> f64| -> Vec<ReapedProcess> {
            let mut sorted: Vec<&ReapedProcess> = reaped.iter().collect();
            sorted.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.pid.cmp(&b.pid)));
            sorted.into_iter().take(n).cloned().collect()
        };
        Reaped {
            rusage: RUSAGE.to_owned(),
            count: (reaped.len() as u64).saturating_add(not_kept),
            not_kept,
            cpu_seconds: reaped.iter().map(|r| r.cpu_seconds).sum(),
            top_by_cpu: top(|r| r.cpu_seconds),
            top_by_max_rss: top(|r| r.max_rss_bytes as f64), // only for ranking
        }
    }

    /// The reaped process with the largest max RSS.
    #[must_use]
    pub fn largest(&self) -> Option<&ReapedProcess> {
        self.top_by_max_rss.first().filter(|r| r.max_rss_bytes > 0)
    }
}
