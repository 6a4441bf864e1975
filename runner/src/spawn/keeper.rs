//! A process that does nothing but exist, so that a cgroup it sits in stays
//! populated for as long as stepmon needs it: systemd stops a transient
//! scope (and removes its cgroup) as soon as the scope holds no process
//! (systemd.scope(5)), which would otherwise happen the moment the step's
//! last process exits, before stepmon's final sample. The keeper lives in
//! a sub-cgroup of the scope beside the step's leaf
//! ([`crate::cgroup::systemd`]), so it is never counted as the step's.
//!
//! It is no descendant of the step and lives outside the step's subreaper
//! ([`crate::spawn::subreaper`]), so neither the process tree nor the
//! taskstats session counts it.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use rustix::process::{Pid, WaitOptions};

/// The keeper: its PID and the write end of the pipe it waits on. It exits
/// when that end is closed ([`Keeper::release`], dropping it, or stepmon's
/// own death), on SIGTERM (systemd stopping the scope) or SIGKILL.
#[derive(Debug)]
pub(crate) struct Keeper {
    pid: Pid,
    write: Option<OwnedFd>,
}

impl Keeper {
    /// Forks the keeper.
    pub(crate) fn start() -> io::Result<Keeper> {
        // CLOEXEC: the step (spawned later) must not inherit the write end,
        // or the keeper would outlive a release while the step runs on.
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let (read_fd, write_fd) = (read.as_raw_fd(), write.as_raw_fd());
        // SAFETY: the child of a multi-threaded process may only make
        // async-signal-safe calls (signal-safety(7)) until it exits: it calls
        // `signal`, `close`, `read` and `_exit` only, on fds valid in the
        // parent, into a byte on its own stack; it never returns into Rust.
        #[allow(unsafe_code)]
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            #[allow(unsafe_code)]
            // SAFETY: see above; this never returns.
            unsafe {
                wait_for_release(read_fd, write_fd)
            }
        }
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        drop(read);
        let pid = Pid::from_raw(pid).ok_or_else(|| io::Error::other("fork returned PID 0 in the parent"))?;
        Ok(Keeper { pid, write: Some(write) })
    }

    /// The keeper's PID.
    #[must_use]
    pub(crate) fn pid(&self) -> u32 {
        self.pid.as_raw_nonzero().get().unsigned_abs()
    }

    /// Lets the keeper exit and reaps it. Idempotent: a second call does
    /// nothing.
    pub(crate) fn release(&mut self) {
        if self.write.take().is_some() {
            // ECHILD: already reaped; nothing else can fail here.
            while let Err(rustix::io::Errno::INTR) = rustix::process::waitpid(Some(self.pid), WaitOptions::empty()) {}
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.release();
    }
}

/// The keeper's whole life: closes its copy of the write end (so that the
/// parent's close is an end of file), waits for that end of file, exits.
///
/// # Safety
/// Only in the child right after `fork`.
#[allow(unsafe_code)]
unsafe fn wait_for_release(read: RawFd, write: RawFd) -> ! {
    let mut byte = 0u8;
    // SAFETY: async-signal-safe system calls only (see `Keeper::start`).
    unsafe {
        // Inherited from stepmon: its handlers (signal-hook) would forward
        // a signal to a step this process is not. SIGTERM and SIGHUP end it
        // (systemd stops a scope with SIGTERM); Ctrl-C's SIGINT to the
        // terminal's process group does not, so that the scope stays until
        // stepmon has taken its final sample.
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
        libc::signal(libc::SIGHUP, libc::SIG_DFL);
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::close(write);
        while libc::read(read, std::ptr::from_mut(&mut byte).cast(), 1) < 0 && *libc::__errno_location() == libc::EINTR
        {
        }
        libc::_exit(0)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    fn exited(pid: Pid) -> bool {
        matches!(rustix::process::waitpid(Some(pid), WaitOptions::NOHANG), Ok(Some(_)) | Err(_))
    }

    #[test]
    fn the_keeper_lives_until_released_and_is_reaped() {
        let mut keeper = Keeper::start().unwrap();
        let pid = keeper.pid;
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(300) {
            assert!(!exited(pid), "the keeper exited before its release");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(std::path::Path::new(&format!("/proc/{}", keeper.pid())).exists());
        keeper.release();
        // Reaped by release: no such child any more.
        assert!(matches!(rustix::process::waitpid(Some(pid), WaitOptions::NOHANG), Err(rustix::io::Errno::CHILD)));
        keeper.release();
    }
}
