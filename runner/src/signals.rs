//! SIGINT, SIGTERM and SIGHUP to stepmon go to the step; stepmon itself
//! keeps running so that cleanup always happens.
//!
//! The calling thread waits for the step and forwards signals in one `poll`
//! loop (the pipe of the step's subreaper, readable when it reaped a
//! process, and a self-pipe the signal handlers write to) instead of a
//! forwarding thread: a thread start is a noticeable part of a short step's
//! cost on a small machine (scripts/cli-bench). Signals go through the
//! step's pidfd, so they never reach a later process with a reused PID.

use rustix::process::Signal;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::spawn::subreaper::Kept;

/// The signals that are forwarded.
const FORWARDED: [(i32, Signal); 3] = [
    (signal_hook::consts::SIGINT, Signal::INT),
    (signal_hook::consts::SIGTERM, Signal::TERM),
    (signal_hook::consts::SIGHUP, Signal::HUP),
];

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
        // (The step's end wakes the loop through its subreaper's pipe: no
        // SIGCHLD handler.)
        for (raw, signal) in FORWARDED {
            let flag = Arc::new(AtomicBool::new(false));
            // One ignored by whoever started stepmon (`nohup stepmon run`)
            // stays ignored, by stepmon and by the step (the spawn keeps
            // it): caught, it would end a step its user meant to survive.
            if !crate::spawn::is_ignored(raw) {
                signal_hook::flag::register(raw, Arc::clone(&flag))?;
                signal_hook::low_level::pipe::register(raw, write.try_clone()?)?;
            }
            caught.push((signal, flag));
        }
        let flags = caught.try_into().map_err(|_| io::Error::other("signal table"))?;
        Ok(Caught { flags, wake })
    }

    /// Sends every signal caught since the last call to the step's first process.
    pub(crate) fn forward(&self, kept: &Kept) {
        let mut drain = [0u8; 64];
        while matches!(rustix::io::read(&self.wake, &mut drain), Ok(n) if n > 0) {}
        for (signal, flag) in &self.flags {
            if flag.swap(false, Ordering::SeqCst) {
                let _ = kept.signal_main(*signal);
            }
        }
    }

    /// The self-pipe, readable when a signal was caught.
    pub(crate) fn wake_fd(&self) -> BorrowedFd<'_> {
        self.wake.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::options::{CgroupMode, StepOptions};

    fn sleeper() -> crate::Step {
        let mut options = StepOptions::new(["sleep", "30"]);
        options.forward_signals = true;
        options.cgroup = CgroupMode::Never;
        crate::prepare(options).unwrap().start().unwrap()
    }

    #[test]
    fn signals_to_stepmon_reach_the_step() {
        // Caught only where not ignored by whoever started the tests
        // (`nohup cargo test`); set before any step installs its handlers.
        crate::spawn::unignore(signal_hook::consts::SIGHUP);
        crate::spawn::unignore(signal_hook::consts::SIGTERM);
        let step = sleeper();
        // Raised at this process before the wait starts: kept, not lost.
        signal_hook::low_level::raise(signal_hook::consts::SIGHUP).unwrap();
        let finished = step.wait().unwrap();
        let run = finished.document.stepmon.unwrap();
        assert_eq!(run.signal, Some(signal_hook::consts::SIGHUP), "{:?}", run.exit_code);
        let step = sleeper();
        let raiser = std::thread::spawn(|| {
            std::thread::sleep(Duration::from_millis(100));
            signal_hook::low_level::raise(signal_hook::consts::SIGTERM).unwrap();
        });
        let finished = step.wait().unwrap();
        raiser.join().unwrap();
        assert_eq!(finished.exit_code, 128 + signal_hook::consts::SIGTERM);
        assert_eq!(finished.document.stepmon.unwrap().process_tree.unwrap().processes_reaped, 1);
    }
}
