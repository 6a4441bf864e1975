//! SIGINT, SIGTERM and SIGHUP to stepmon go to the step; stepmon itself
//! keeps running so that cleanup always happens. SIGCHLD wakes the same
//! loop so that orphans of the step that exit are reaped while it runs
//! ([`crate::tree::Reaper`]), not left as zombies holding PIDs.
//!
//! The calling thread waits for the step and forwards signals in one `poll`
//! loop (a pidfd that becomes readable when the step exits, and a self-pipe
//! the signal handlers write to) instead of a forwarding thread: a thread
//! start is a noticeable part of a short step's cost on a small machine
//! (scripts/cli-bench). The PID is only signalled before this same thread
//! reaps it, so it cannot have been reused.

use std::io;
use std::os::fd::OwnedFd;
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{Pid, PidfdFlags, Signal};

use crate::tree::Reaper;

/// The signals that are forwarded.
const FORWARDED: [(i32, Signal); 3] = [
    (signal_hook::consts::SIGINT, Signal::INT),
    (signal_hook::consts::SIGTERM, Signal::TERM),
    (signal_hook::consts::SIGHUP, Signal::HUP),
];

/// Without a pidfd (Linux < 5.3), how often the loop checks whether the step exited.
const POLL_WITHOUT_PIDFD: Duration = Duration::from_millis(5);

/// The forwarded signals, caught from [`Caught::install`] until stepmon exits.
#[derive(Debug)]
pub(crate) struct Caught {
    flags: [(Signal, Arc<AtomicBool>); 3],
    /// Read end of the self-pipe (non-blocking); each caught signal writes a byte.
    wake: OwnedFd,
}

impl Caught {
    /// Takes over the signals (before the step starts, so a signal in
    /// between is kept and forwarded once the step runs, not fatal to stepmon).
    pub(crate) fn install() -> io::Result<Caught> {
        let flags = rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK;
        let (wake, write) = rustix::pipe::pipe_with(flags)?;
        let mut caught = Vec::with_capacity(FORWARDED.len());
        for (raw, signal) in FORWARDED {
            let flag = Arc::new(AtomicBool::new(false));
            signal_hook::flag::register(raw, Arc::clone(&flag))?;
            signal_hook::low_level::pipe::register(raw, write.try_clone()?)?;
            caught.push((signal, flag));
        }
        // SIGCHLD only wakes the loop (its default action is to ignore it).
        signal_hook::low_level::pipe::register(signal_hook::consts::SIGCHLD, write)?;
        let flags = caught.try_into().map_err(|_| io::Error::other("signal table"))?;
        Ok(Caught { flags, wake })
    }

    /// Sends every signal caught since the last call to `pid`.
    fn forward(&self, pid: Option<Pid>) {
        let mut drain = [0u8; 64];
        while matches!(rustix::io::read(&self.wake, &mut drain), Ok(n) if n > 0) {}
        for (signal, flag) in &self.flags {
            if flag.swap(false, Ordering::SeqCst)
                && let Some(pid) = pid
            {
                let _ = rustix::process::kill_process(pid, *signal);
            }
        }
    }

    /// Waits for the step's main process `pid` to exit and reaps it,
    /// forwarding the caught signals to it and reaping its exited orphans
    /// meanwhile.
    pub(crate) fn wait_forwarding(&self, pid: Pid, reaper: &mut Reaper) -> io::Result<ExitStatus> {
        self.wait_forwarding_with(pid, reaper, true)
    }

    /// `use_pidfd: false` is what happens before Linux 5.3 (tested here).
    fn wait_forwarding_with(&self, pid: Pid, reaper: &mut Reaper, use_pidfd: bool) -> io::Result<ExitStatus> {
        let pidfd =
            Some(pid).filter(|_| use_pidfd).and_then(|pid| rustix::process::pidfd_open(pid, PidfdFlags::empty()).ok());
        let timeout = Timespec::try_from(POLL_WITHOUT_PIDFD).ok();
        loop {
            self.forward(Some(pid));
            match &pidfd {
                Some(pidfd) => {
                    let mut fds = [PollFd::new(&self.wake, PollFlags::IN), PollFd::new(pidfd, PollFlags::IN)];
                    poll(&mut fds, None)?;
                    let [_, exited] = &fds;
                    if !exited.revents().is_empty() {
                        return reaper.wait_main();
                    }
                }
                None => {
                    poll(&mut [PollFd::new(&self.wake, PollFlags::IN)], timeout.as_ref())?;
                    if let Some(status) = reaper.try_wait_main()? {
                        return Ok(status);
                    }
                }
            }
            let _ = reaper.reap_exited();
        }
    }
}

/// `poll`, where an interruption (by one of the caught signals) is a normal return.
fn poll(fds: &mut [PollFd<'_>], timeout: Option<&Timespec>) -> io::Result<()> {
    match rustix::event::poll(fds, timeout) {
        Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn sleeper(reaper: &mut Reaper) -> Pid {
        // Reaped by the reaper's wait4, not by `Child::wait`.
        #[allow(clippy::zombie_processes)]
        let child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
        reaper.set_main(pid);
        pid
    }

    #[test]
    fn signals_to_stepmon_reach_the_step_with_and_without_a_pidfd() {
        let _children = crate::CHILDREN_OF_THE_TEST_PROCESS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let caught = Caught::install().unwrap();
        for use_pidfd in [true, false] {
            let mut reaper = Reaper::start().unwrap();
            let pid = sleeper(&mut reaper);
            // Raised at this process while the loop waits (and once before it
            // starts, which must be kept, not lost).
            signal_hook::low_level::raise(signal_hook::consts::SIGHUP).unwrap();
            let status = caught.wait_forwarding_with(pid, &mut reaper, use_pidfd).unwrap();
            assert_eq!(status.signal(), Some(signal_hook::consts::SIGHUP), "pidfd: {use_pidfd}");
            let mut reaper = Reaper::start().unwrap();
            let pid = sleeper(&mut reaper);
            let raiser = std::thread::spawn(|| {
                std::thread::sleep(Duration::from_millis(100));
                signal_hook::low_level::raise(signal_hook::consts::SIGTERM).unwrap();
            });
            let status = caught.wait_forwarding_with(pid, &mut reaper, use_pidfd).unwrap();
            raiser.join().unwrap();
            assert_eq!(status.signal(), Some(signal_hook::consts::SIGTERM), "pidfd: {use_pidfd}");
            assert_eq!(reaper.tree().processes_reaped, 1);
        }
    }
}
