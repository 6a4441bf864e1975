//! Memory: OOM kills, limit hits, peak against the limit, what the peak was made of.

use serde::{Deserialize, Serialize};

/// What happened to the step's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum MemoryOutcome {
    /// The OOM killer killed at least one of its processes.
    OomKilled,
    /// It reached `memory.max` (reclaim was forced) or was throttled at `memory.high`.
    HitLimit,
    /// Its peak came within the threshold share of `memory.max`.
    NearLimit,
    /// None of the above.
    Ok,
    /// No memory numbers (no memory controller for the step).
    Unknown,
}

/// The step's memory (`memory.events`, `memory.peak`, `memory.max`,
/// `memory.stat`; <https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files>).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryVerdict {
    /// The class.
    pub class: MemoryOutcome,
    /// Processes killed by the OOM killer during the step (`oom_kill` delta).
    pub oom_kills: Option<u64>,
    /// Group OOM kills (`oom_group_kill` delta).
    pub oom_group_kills: Option<u64>,
    /// Times usage hit `memory.max`.
    pub max_hits: Option<u64>,
    /// Times usage went over `memory.high`.
    pub high_hits: Option<u64>,
    /// Peak memory, bytes.
    pub peak_bytes: Option<u64>,
    /// `memory.max`, bytes, when the step had one.
    pub limit_bytes: Option<u64>,
    /// Peak / limit.
    pub peak_share_of_limit: Option<f64>,
    /// Anonymous memory's share of anon + file in the sample with the most
    /// (samples may miss the moment of `peak_bytes`).
    pub anon_share: Option<f64>,
    /// Page cache's share of the largest sample.
    pub file_share: Option<f64>,
    /// The process whose own peak RSS was the largest (taskstats), when
    /// the run listed its processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_process: Option<PeakProcess>,
    /// In words.
    pub reason: String,
}

/// The process that peaked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PeakProcess {
    /// Its command name.
    pub command: String,
    /// Its pid.
    pub pid: u32,
    /// Its peak resident set, bytes.
    pub peak_rss_bytes: u64,
    /// Which run of the command it was, from its arguments (its input
    /// file, [`crate::processes::label`]), when they were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

impl PeakProcess {
    /// The process with the largest peak RSS among `processes`, when its
    /// peak was recorded.
    #[must_use]
    pub fn of(processes: &crate::processes::Processes) -> Option<PeakProcess> {
        let p = processes.peak()?;
        Some(PeakProcess {
            command: p.command.clone(),
            pid: p.pid,
            peak_rss_bytes: p.peak_rss_bytes?,
            label: p.label().map(str::to_owned),
        })
    }
}
