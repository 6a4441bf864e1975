//! macOS and the BSDs: a step's first process reaped with its resource
//! usage, and its process group signalled — the crate's only `unsafe` code
//! there (`wait4`, `waitid` and `killpg` through libc; rustix's `waitpid`
//! drops the rusage).
//!
//! The rusage of a reaped child includes that of every descendant it waited
//! for itself (getrusage(2), `RUSAGE_CHILDREN`): without a subreaper,
//! orphans are reparented to init and their usage is lost to the step.
#![allow(unsafe_code)]
// Every unsafe block says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// What `wait4` gave of a step's first process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Rusage {
    /// `ru_utime`, µs.
    pub(crate) user_micros: u64,
    /// `ru_stime`, µs.
    pub(crate) system_micros: u64,
    /// `ru_maxrss` in bytes: the largest resident set of the process and
    /// the descendants it waited for (bytes on macOS, KiB on the BSDs).
    pub(crate) max_rss_bytes: u64,
}

/// A count of the C library's (its type differs between systems).
fn non_negative<T: TryInto<u64>>(value: T) -> u64 {
    value.try_into().unwrap_or(0)
}

fn micros(time: libc::timeval) -> u64 {
    non_negative(time.tv_sec).saturating_mul(1_000_000).saturating_add(non_negative(time.tv_usec))
}

/// `ru_maxrss`'s unit: bytes on Apple's kernels, KiB on the BSDs
/// (getrusage(2) of each).
const MAX_RSS_UNIT: u64 = if cfg!(target_vendor = "apple") { 1 } else { 1024 };

/// Blocks until the child `pid` has exited, without reaping it
/// (`waitid(WEXITED | WNOWAIT)`): its process group ID stays its own while
/// what it left behind is killed.
pub(crate) fn wait_exited(pid: u32) -> io::Result<()> {
    let id = libc::id_t::from(pid);
    loop {
        let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::zeroed();
        // SAFETY: a writable, zero-initialised siginfo_t; plain flags.
        let ret = unsafe { libc::waitid(libc::P_PID, id, info.as_mut_ptr(), libc::WEXITED | libc::WNOWAIT) };
        if ret == 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Reaps the child `pid` (blocking), with its rusage.
pub(crate) fn wait4(pid: u32) -> io::Result<(ExitStatus, Rusage)> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    loop {
        let mut status: libc::c_int = 0;
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: wait4 writes the status and a whole `struct rusage` into
        // the two valid, writable pointers; `usage` is zero-initialised.
        let ret = unsafe { libc::wait4(pid, &raw mut status, 0, usage.as_mut_ptr()) };
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
            max_rss_bytes: non_negative(usage.ru_maxrss).saturating_mul(MAX_RSS_UNIT),
        };
        return Ok((ExitStatus::from_raw(status), rusage));
    }
}

/// Sends `signal` to the process group `group`; a group that is gone is no
/// error.
pub(crate) fn killpg(group: u32, signal: libc::c_int) -> io::Result<()> {
    let group = libc::pid_t::try_from(group).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: plain values; a group ID above 0 (the step's first process's).
    if unsafe { libc::killpg(group, signal) } == 0 {
        return Ok(());
    }
    match io::Error::last_os_error() {
        e if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
        e => Err(e),
    }
}

/// The signals [`killpg`] sends.
pub(crate) use libc::{SIGCONT, SIGKILL, SIGSTOP};
