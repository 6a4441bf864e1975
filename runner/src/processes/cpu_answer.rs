//! What a step's process CPU times are made of, shared by the listener's
//! thread that answers for them (`super::hub`) and the progress line's
//! reader that asks (`super::cpu_times`).

use stepmon_model::processes::ProcessRecord;

/// One process's CPU time so far.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProcessCpu {
    /// Its pid (tgid).
    pub(crate) pid: u32,
    /// When it started, s since the epoch (to tell a reused pid apart).
    pub(crate) start: f64,
    /// Its command (`comm`).
    pub(crate) command: String,
    /// Its user + system CPU time so far, s.
    pub(crate) cpu_seconds: f64,
}

impl ProcessCpu {
    /// What a process record says (an exit record, or a procfs reading).
    pub(super) fn of_record(record: &ProcessRecord) -> ProcessCpu {
        #[allow(clippy::cast_precision_loss)] // seconds since the epoch far below 2^52
        let start = record.start.map_or(record.start_unix_seconds as f64, |t| t.as_millisecond() as f64 / 1e3);
        ProcessCpu { pid: record.pid, start, command: record.command.clone(), cpu_seconds: record.cpu_seconds }
    }
}

/// What the listener's thread answers: the step's processes that ended
/// from a place in its list of ended ones, the next place, and the pids
/// of those alive.
#[derive(Debug, Default)]
pub(super) struct Answer {
    pub(super) ended: Vec<ProcessCpu>,
    pub(super) next: usize,
    pub(super) live: Vec<u32>,
}
