//! What happened while a step ran, as it happened: `stepmon.events` of the
//! run document and the `stepEvent` lines of a job record
//! ([`crate::job::StepEventRecord`]). One kind so far: the step's memory
//! passed 90% of what bounds it, said before the kernel's OOM killer acts
//! (<https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files>:
//! at `memory.max` the cgroup's OOM killer runs when reclaim fails).
//!
//! ```
//! use stepmon_model::event::{EventKind, MemoryBound, StepEvent};
//!
//! let json = r#"{"at": "2026-12-04T10:00:09Z", "elapsedSeconds": 9.0, "kind": "memoryNearLimit",
//!   "memory": {"bound": "ownLimit", "file": "/sys/fs/cgroup/memory/stepmon-run.1.2/memory.limit_in_bytes",
//!     "limitBytes": 209715200, "usageBytes": 190000000, "share": 0.906, "threshold": 0.9,
//!     "trendBytesPerSecond": 20971520.0, "secondsToLimit": 0.94}}"#;
//! let event: StepEvent = serde_json::from_str(json)?;
//! assert_eq!(event.kind, EventKind::MemoryNearLimit);
//! let memory = event.memory.unwrap();
//! assert_eq!(memory.bound, MemoryBound::OwnLimit);
//! assert!(memory.share > memory.threshold);
//! // A kind a newer stepmon writes reads as `Other`, not as an error.
//! let newer: StepEvent = serde_json::from_str(r#"{"at": "2026-12-04T10:00:09Z", "kind": "diskFull"}"#)?;
//! assert_eq!(newer.kind, EventKind::Other);
//! # Ok::<(), serde_json::Error>(())
//! ```

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// One event of a running step.
///
/// The time comes first and the kind is a plain field (not a tag): a job
/// record's reader finds a record glued to a torn line by a `{"kind":"`
/// inside it, which an event nested in a line must not contain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StepEvent {
    /// When it was seen.
    pub at: Timestamp,
    /// Seconds from the step's start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_seconds: Option<f64>,
    /// What happened.
    pub kind: EventKind,
    /// The numbers of a [`EventKind::MemoryNearLimit`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryNearLimit>,
}

impl StepEvent {
    /// A [`EventKind::MemoryNearLimit`] event at `at`, `elapsed_seconds`
    /// into the step.
    #[must_use]
    pub fn memory_near_limit(at: Timestamp, elapsed_seconds: f64, memory: MemoryNearLimit) -> StepEvent {
        StepEvent { at, elapsed_seconds: Some(elapsed_seconds), kind: EventKind::MemoryNearLimit, memory: Some(memory) }
    }
}

/// The kind of a [`StepEvent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum EventKind {
    /// The step's memory passed the threshold share of its tightest bound
    /// ([`MemoryNearLimit`]).
    MemoryNearLimit,
    /// A kind this version does not know (a newer writer's).
    #[serde(other)]
    Other,
}

/// The step's memory near what bounds it: once per crossing of
/// [`MemoryNearLimit::threshold`] (re-armed when it falls back below a
/// lower share).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MemoryNearLimit {
    /// Which bound: the tightest of those that apply.
    pub bound: MemoryBound,
    /// Where the bound was read (the limit file, or `/proc/meminfo`).
    pub file: String,
    /// The bound, bytes: the step's usage can grow this far. For
    /// [`MemoryBound::EnclosingLimit`] the step's usage plus the enclosing
    /// cgroup's headroom; for [`MemoryBound::Machine`] the step's usage
    /// plus `MemAvailable`.
    pub limit_bytes: u64,
    /// The step's memory then (`memory.current`, or
    /// `memory.usage_in_bytes` of its cgroup v1), bytes.
    pub usage_bytes: u64,
    /// `usage_bytes / limit_bytes`.
    pub share: f64,
    /// The share that makes the event (0.9).
    pub threshold: f64,
    /// How fast the usage grew over the last readings, bytes a second
    /// (negative: it shrank); absent after a single reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trend_bytes_per_second: Option<f64>,
    /// When the trend is growth: seconds until the usage reaches the bound
    /// at that rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_to_limit: Option<f64>,
    /// The step's largest processes by resident memory then, largest
    /// first (absent when they could not be read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub largest: Vec<ProcessMemory>,
}

/// What bounds a step's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum MemoryBound {
    /// The step's own cgroup's limit (`memory.max`, or cgroup v1's
    /// `memory.limit_in_bytes`; `stepmon run --memory-max`).
    OwnLimit,
    /// The limit of a cgroup that encloses the step's (a container's, a
    /// CI job's), less what the rest of it uses.
    EnclosingLimit,
    /// The machine: what the step uses plus `MemAvailable` of
    /// `/proc/meminfo` (<https://docs.kernel.org/filesystems/proc.html#meminfo>).
    Machine,
    /// A bound this version does not know.
    #[serde(other)]
    Other,
}

impl MemoryBound {
    /// In words, for a line a person reads.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            MemoryBound::OwnLimit => "its memory limit",
            MemoryBound::EnclosingLimit => "the enclosing cgroup's memory limit",
            MemoryBound::Machine => "the machine's available memory",
            MemoryBound::Other => "a bound",
        }
    }
}

/// One process of the step and its resident memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ProcessMemory {
    /// Its PID.
    pub pid: u32,
    /// Its command (`/proc/PID/comm`).
    pub command: String,
    /// Its resident set, bytes (`/proc/PID/statm`).
    pub rss_bytes: u64,
}

impl ProcessMemory {
    /// The process `pid` running `command` with `rss_bytes` resident.
    #[must_use]
    pub fn new(pid: u32, command: String, rss_bytes: u64) -> ProcessMemory {
        ProcessMemory { pid, command, rss_bytes }
    }
}

impl MemoryNearLimit {
    /// `usage_bytes` of a bound of `limit_bytes` read from `file`, judged
    /// against `threshold`; no trend and no processes yet.
    #[must_use]
    pub fn new(bound: MemoryBound, file: String, limit_bytes: u64, usage_bytes: u64, threshold: f64) -> Self {
        MemoryNearLimit {
            bound,
            file,
            limit_bytes,
            usage_bytes,
            share: share(usage_bytes, limit_bytes),
            threshold,
            trend_bytes_per_second: None,
            seconds_to_limit: None,
            largest: Vec::new(),
        }
    }
}

/// `part / whole`, 0 of a zero bound.
#[allow(clippy::cast_precision_loss)] // byte counts far below 2^52
fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 / whole as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_round_trips_with_its_time_first_and_no_nested_tag() {
        let mut memory = MemoryNearLimit::new(MemoryBound::Machine, "/proc/meminfo".into(), 1000, 950, 0.9);
        memory.largest.push(ProcessMemory::new(7, "cc1plus".into(), 900));
        let event = StepEvent::memory_near_limit("2026-12-04T10:00:00Z".parse().unwrap(), 1.5, memory);
        let json = serde_json::to_string(&event).unwrap();
        assert!(json.starts_with(r#"{"at":"#), "{json}");
        assert!(!json.contains(r#"{"kind":""#), "{json}");
        assert!(json.contains(r#""share":0.95"#), "{json}");
        let back: StepEvent = serde_json::from_str(&json).unwrap();
        assert_eq!(back, event);
    }

    #[test]
    fn a_zero_bound_is_no_division_by_zero() {
        assert!(MemoryNearLimit::new(MemoryBound::OwnLimit, String::new(), 0, 5, 0.9).share.abs() < f64::EPSILON);
    }
}
