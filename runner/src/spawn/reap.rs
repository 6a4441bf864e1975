//! A child reaped with its resource usage, as the subreaper reports it
//! (its `wait4(2)`, `sys::wait4`). The rusage of a reaped child includes
//! that of every descendant it waited for itself
//! (<https://man7.org/linux/man-pages/man2/getrusage.2.html>,
//! `RUSAGE_CHILDREN`), which is what GNU time reports.

use std::process::ExitStatus;

use rustix::process::Pid;

/// The fields of `struct rusage` stepmon reports (getrusage(2)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Rusage {
    /// User CPU time, µs.
    pub(crate) user_micros: u64,
    /// System CPU time, µs.
    pub(crate) system_micros: u64,
    /// Peak resident set of the largest process, KiB (`ru_maxrss`).
    pub(crate) max_rss_kib: u64,
    /// Blocks read (512 bytes each; `ru_inblock`).
    pub(crate) in_blocks: u64,
    /// Blocks written (`ru_oublock`).
    pub(crate) out_blocks: u64,
    /// Voluntary context switches.
    pub(crate) voluntary_switches: u64,
    /// Involuntary context switches.
    pub(crate) involuntary_switches: u64,
    /// Minor faults.
    pub(crate) minor_faults: u64,
    /// Major faults.
    pub(crate) major_faults: u64,
}

/// A reaped child.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reaped {
    /// Who.
    pub(crate) pid: Pid,
    /// How it ended.
    pub(crate) status: ExitStatus,
    /// What it (and the descendants it waited for) used.
    pub(crate) rusage: Rusage,
}
