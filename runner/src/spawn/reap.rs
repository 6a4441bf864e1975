//! Reaping a child with its resource usage: `wait4(2)`, which rustix does
//! not wrap (its `waitpid`/`waitid` drop the rusage). The rusage of a reaped
//! child includes that of every descendant it waited for itself
//! (<https://man7.org/linux/man-pages/man2/getrusage.2.html>,
//! `RUSAGE_CHILDREN`), which is what GNU time reports.
#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use rustix::process::Pid;

/// The fields of `struct rusage` stepmon reports (getrusage(2)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rusage {
    /// User CPU time, µs.
    pub user_micros: u64,
    /// System CPU time, µs.
    pub system_micros: u64,
    /// Peak resident set of the largest process, KiB (`ru_maxrss`).
    pub max_rss_kib: u64,
    /// Blocks read (512 bytes each; `ru_inblock`).
    pub in_blocks: u64,
    /// Blocks written (`ru_oublock`).
    pub out_blocks: u64,
    /// Voluntary context switches.
    pub voluntary_switches: u64,
    /// Involuntary context switches.
    pub involuntary_switches: u64,
    /// Minor faults.
    pub minor_faults: u64,
    /// Major faults.
    pub major_faults: u64,
}

/// A reaped child.
#[derive(Debug, Clone, Copy)]
pub struct Reaped {
    /// Who.
    pub pid: Pid,
    /// How it ended.
    pub status: ExitStatus,
    /// What it (and the descendants it waited for) used.
    pub rusage: Rusage,
}

fn non_negative(value: libc::c_long) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

fn micros(time: libc::timeval) -> u64 {
    non_negative(time.tv_sec).saturating_mul(1_000_000).saturating_add(non_negative(time.tv_usec))
}

/// Reaps the child `pid` (blocking unless `nohang`); `Ok(None)` when
/// `nohang` and it still runs. `EINTR` is retried.
pub fn wait4(pid: Pid, nohang: bool) -> io::Result<Option<Reaped>> {
    let options = if nohang { libc::WNOHANG } else { 0 };
    loop {
        let mut status: libc::c_int = 0;
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: wait4 writes the status and a full `struct rusage` into the
        // two valid, writable pointers; `usage` is zero-initialised, so it is
        // initialised whatever the kernel writes.
        let ret = unsafe { libc::wait4(pid.as_raw_nonzero().get(), &raw mut status, options, usage.as_mut_ptr()) };
        if ret == 0 {
            return Ok(None);
        }
        if ret < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        // SAFETY: zero-initialised above and filled by a successful wait4.
        let usage = unsafe { usage.assume_init() };
        let rusage = Rusage {
            user_micros: micros(usage.ru_utime),
            system_micros: micros(usage.ru_stime),
            max_rss_kib: non_negative(usage.ru_maxrss),
            in_blocks: non_negative(usage.ru_inblock),
            out_blocks: non_negative(usage.ru_oublock),
            voluntary_switches: non_negative(usage.ru_nvcsw),
            involuntary_switches: non_negative(usage.ru_nivcsw),
            minor_faults: non_negative(usage.ru_minflt),
            major_faults: non_negative(usage.ru_majflt),
        };
        return Ok(Some(Reaped { pid, status: ExitStatus::from_raw(status), rusage }));
    }
}
