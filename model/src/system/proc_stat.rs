//! `ProcStat` (BuildKit: `executor/resources/types/systypes.go`).

use serde::{Deserialize, Serialize};

/// BuildKit's `ProcStat`: three `/proc/stat` counters as plain integers
/// (always present once the object exists). Spec of the source:
/// <https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>.
///
/// `procs_blocked` is not part of BuildKit's model (our
/// [`SysSampleExt::procs_blocked`](super::SysSampleExt::procs_blocked) has it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcStat {
    /// `ctxt`: context switches since boot.
    pub context_switches: u64,
    /// `processes`: forks since boot.
    pub process_created: u64,
    /// `procs_running`: runnable threads now.
    pub processes_running: u64,
}
