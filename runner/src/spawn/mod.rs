//! Starting the step so that it is inside its cgroup (when it has one) and
//! network namespace before it executes the command's first instruction,
//! and reaping it with its resource usage. The workspace's only `unsafe`
//! code lives in this module.
//!
//! Two ways, same outcome:
//! * [`clone3`]: `clone3(CLONE_INTO_CGROUP)` (or a plain `clone3` when the
//!   step has no cgroup), `setns` in the child, `execvp` (Linux 5.7+). No
//!   cgroup migration, so no RCU grace period to wait for.
//! * [`fork`]: std's spawn with a `pre_exec` hook that joins the cgroup
//!   (a write of `0` to its `cgroup.procs`) and the namespace. Used when
//!   clone3 fails (older kernels, seccomp filters that hide clone3).
//!
//! `STEPMON_SPAWN=clone3|fork` forces one way (no fallback) and names the
//! way taken on stderr; for tests and diagnosis.

mod clone3;
mod fork;
pub mod lookup;
mod reap;
pub mod script;

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode as FileMode, OFlags};
use rustix::process::Pid;

pub use reap::{Reaped, Rusage, wait4};

/// Exit status when the command cannot be found (as in shells).
pub const NOT_FOUND: i32 = 127;
/// Exit status when the command cannot be executed (as in shells).
pub const NOT_EXECUTABLE: i32 = 126;

pub use crate::options::{MODE_VARIABLE, Mode};

/// Where the step's first process goes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Target<'a> {
    /// Its cgroup v2 directory, if it has one.
    pub cgroup: Option<&'a Path>,
    /// `tasks` files of the step's cgroup v1 hierarchies (opened for
    /// writing; the first process writes `0` to each before exec).
    pub v1_tasks: &'a [OwnedFd],
    /// A network namespace to join (an fd held by the caller).
    pub netns: Option<BorrowedFd<'a>>,
    /// The namespace's path, for messages.
    pub netns_path: Option<&'a Path>,
    /// Hold the child before it joins anything or executes the command,
    /// until [`Hold::release`] (another party, systemd, moves it meanwhile);
    /// clone3 only ([`Started::held`]).
    pub hold: Option<&'a Hold>,
}

/// A pipe the step's first process waits on before `exec`: it closes its
/// copy of the write end, then reads until a byte or end of file. So it
/// goes on when [`Hold::release`] is called or this `Hold` is dropped
/// (also when stepmon dies), never later. Both ends are close-on-exec.
#[derive(Debug)]
pub struct Hold {
    read: OwnedFd,
    write: OwnedFd,
}

impl Hold {
    /// A new pipe.
    pub fn new() -> io::Result<Hold> {
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        Ok(Hold { read, write })
    }

    /// Lets the child go on.
    pub fn release(self) {
        drop(self);
    }

    fn fds(&self) -> (RawFd, RawFd) {
        (self.read.as_raw_fd(), self.write.as_raw_fd())
    }
}

/// The step's first process, started.
#[derive(Debug)]
pub struct Started {
    /// Its PID (a child of this process, not yet waited for).
    pub pid: Pid,
    /// `None` once read, or for [`fork`] (which reports failures at once).
    report: Option<clone3::Spawned>,
    program: OsString,
    namespace: Option<PathBuf>,
    /// The way it was started, for the forced modes' message.
    pub way: &'static str,
    /// Whether it waits on [`Target::hold`] (clone3 only: with the fork
    /// fallback std's spawn returns only after `exec`, so it runs at once).
    pub held: bool,
}

/// A step whose command could not run at all (fork: std reports exec
/// errors before any process of the command exists).
#[derive(Debug)]
pub struct NotStarted {
    /// 127 (not found) or 126.
    pub code: i32,
    /// What went wrong, one line.
    pub message: String,
}

/// What [`spawn`] gives.
#[derive(Debug)]
pub enum Spawned {
    /// Running.
    Running(Started),
    /// The command could not run (its exit status is `code`).
    NotStarted(NotStarted),
}

impl Started {
    /// Once the process has exited (been reaped): what to say if it could
    /// not run the command (not found, not executable, namespace not
    /// joined).
    #[must_use]
    pub fn failure_message(&mut self) -> Option<String> {
        let failure = self.report.take().and_then(clone3::Spawned::failure)?;
        Some(match (failure.stage, &self.namespace) {
            (clone3::Stage::NetNs, Some(path)) => {
                format!("cannot join the network namespace {}: {}", path.display(), failure.error)
            }
            (clone3::Stage::JoinV1, _) => format!("cannot join the step's cgroup v1 hierarchies: {}", failure.error),
            _ => format!("cannot run {}: {}", self.program.to_string_lossy(), failure.error),
        })
    }
}

/// A failure of stepmon to start the step (not the command's own failure).
#[derive(Debug)]
pub struct SpawnError {
    /// What was tried.
    pub what: &'static str,
    /// Why it failed.
    pub error: io::Error,
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.what, self.error)
    }
}

impl std::error::Error for SpawnError {}

/// Starts `command` at `target`. A failure to run the command itself (not
/// found, not executable) is not an error: with clone3 the child exits 127
/// or 126 (see [`Started::failure_message`]), with fork it is
/// [`Spawned::NotStarted`].
pub fn spawn(target: Target<'_>, command: &[OsString], mode: Mode) -> Result<Spawned, SpawnError> {
    let program = command.first().cloned().unwrap_or_default();
    let namespace = target.netns_path.map(Path::to_path_buf);
    if mode != Mode::Fork {
        match direct(target, command) {
            Ok(spawned) => {
                return Ok(Spawned::Running(Started {
                    pid: spawned.pid,
                    report: Some(spawned),
                    program,
                    namespace,
                    way: "clone3",
                    held: target.hold.is_some(),
                }));
            }
            Err(error) if mode == Mode::Clone3 || error.kind() == io::ErrorKind::InvalidInput => {
                return Err(SpawnError { what: "cannot start the step with clone3", error });
            }
            // Fall back to fork, which needs neither clone3 nor CLONE_INTO_CGROUP.
            Err(_) => {}
        }
    }
    let procs = match target.cgroup {
        Some(dir) => Some(
            rustix::fs::open(dir.join("cgroup.procs"), OFlags::WRONLY | OFlags::CLOEXEC, FileMode::empty())
                .map_err(|e| SpawnError { what: "cannot open the step cgroup's cgroup.procs", error: e.into() })?,
        ),
        None => None,
    };
    let v1: Vec<RawFd> = target.v1_tasks.iter().map(AsRawFd::as_raw_fd).collect();
    // No hold with fork: std's spawn returns only once the child has exec'd.
    match fork::spawn(procs.as_ref().map(AsFd::as_fd), &v1, target.netns, command) {
        Ok(pid) => Ok(Spawned::Running(Started { pid, report: None, program, namespace, way: "fork", held: false })),
        Err(fork::Failure::Join(error)) => Err(SpawnError { what: "cannot move the step into its cgroup", error }),
        Err(fork::Failure::NetNs(error)) => Err(SpawnError { what: "cannot join the network namespace", error }),
        Err(fork::Failure::Exec(error)) => {
            let code = if error.kind() == io::ErrorKind::NotFound { NOT_FOUND } else { NOT_EXECUTABLE };
            Ok(Spawned::NotStarted(NotStarted {
                code,
                message: format!("cannot run {}: {error}", program.to_string_lossy()),
            }))
        }
        Err(fork::Failure::Setup(error)) => Err(SpawnError { what: "cannot start the step", error }),
    }
}

/// clone3, into the cgroup if the step has one.
fn direct(target: Target<'_>, command: &[OsString]) -> io::Result<clone3::Spawned> {
    let exec = clone3::Exec::new(command)?;
    let cgroup = match target.cgroup {
        Some(dir) => {
            Some(rustix::fs::open(dir, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, FileMode::empty())?)
        }
        None => None,
    };
    let v1: Vec<RawFd> = target.v1_tasks.iter().map(AsRawFd::as_raw_fd).collect();
    clone3::spawn(cgroup.as_ref().map(AsFd::as_fd), &v1, target.netns, target.hold.map(Hold::fds), &exec)
}

/// In the child, before anything else: closes its copy of the [`Hold`]'s
/// write end (so that the parent's close is an end of file) and waits for
/// a byte or that end of file.
///
/// # Safety
/// Only between fork/clone and exec: `close` and `read` are
/// async-signal-safe, the fds were valid in the parent.
#[allow(unsafe_code)]
unsafe fn hold_child(read: RawFd, write: RawFd) {
    let mut byte = 0u8;
    // SAFETY: plain system calls on fds inherited from the parent, into a
    // byte on this stack.
    unsafe {
        libc::close(write);
        while libc::read(read, std::ptr::from_mut(&mut byte).cast(), 1) < 0 && *libc::__errno_location() == libc::EINTR
        {
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    /// Whether the held child has not exited within `wait`.
    fn still_running(pid: Pid, wait: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < wait {
            match rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG) {
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                _ => return false,
            }
        }
        true
    }

    #[test]
    fn a_held_child_waits_until_released() {
        let command: Vec<OsString> = ["sh", "-c", "exit 3"].iter().map(OsString::from).collect();
        {
            let mode = Mode::Clone3;
            let hold = Hold::new().unwrap();
            let target = Target { hold: Some(&hold), ..Target::default() };
            let pid = match spawn(target, &command, mode).unwrap() {
                Spawned::Running(started) => started.pid,
                Spawned::NotStarted(not) => panic!("{mode:?}: {}", not.message),
            };
            assert!(still_running(pid, Duration::from_millis(300)), "{mode:?}: the child ran before its release");
            hold.release();
            let status = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty()).unwrap();
            assert_eq!(status.and_then(|(_, s)| s.exit_status()), Some(3), "{mode:?}");
        }
    }
}
