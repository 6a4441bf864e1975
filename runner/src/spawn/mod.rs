//! Starting the step so that it is inside its cgroup (when it has one) and
//! network namespace before it executes the command's first instruction,
//! and reaping it with its resource usage. The workspace's only `unsafe`
//! code lives in this module.
//!
//! Two ways, same outcome:
//! * `clone3` (module): `clone3(CLONE_INTO_CGROUP)` (or a plain `clone3` when the
//!   step has no cgroup), `setns` in the child, `execvp` (Linux 5.7+). No
//!   cgroup migration, so no RCU grace period to wait for.
//! * `fork` (module): std's spawn with a `pre_exec` hook that joins the cgroup
//!   (a write of `0` to its `cgroup.procs`) and the namespace. Used when
//!   clone3 fails (older kernels, seccomp filters that hide clone3).
//!
//! [`keeper`] forks the process that keeps a systemd scope populated
//! until the step's final sample is taken ([`crate::cgroup::systemd`]).
//!
//! `STEPMON_SPAWN=clone3|fork` forces one way (no fallback) and names the
//! way taken on stderr; for tests and diagnosis.

mod clone3;
mod fork;
pub mod keeper;
pub mod lookup;
mod reap;
pub mod script;
pub mod subreaper;
mod sys;

use std::ffi::{OsStr, OsString};
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
}

/// Why a command did not start, from the stage its child failed at, as the
/// runner reports it.
fn not_started(stage: clone3::Stage, error: io::Error, program: &OsStr, namespace: Option<&Path>) -> crate::RunError {
    use crate::RunErrorKind as Kind;
    let (kind, message) = match (stage, namespace) {
        (clone3::Stage::NetNs, Some(path)) => {
            (Kind::Namespace, format!("cannot join the network namespace {}", path.display()))
        }
        (clone3::Stage::NetNs, None) => (Kind::Namespace, "cannot join the network namespace".to_owned()),
        (clone3::Stage::JoinV1, _) => (Kind::Placement, "cannot join the step's cgroup v1 hierarchies".to_owned()),
        (clone3::Stage::JoinCgroup, _) => (Kind::Placement, "cannot move the step into its cgroup".to_owned()),
        (clone3::Stage::Exec, _) => {
            let kind = match error.kind() {
                io::ErrorKind::NotFound => Kind::NotFound,
                io::ErrorKind::PermissionDenied => Kind::PermissionDenied,
                _ => Kind::Spawn,
            };
            (kind, format!("cannot run {}", program.to_string_lossy()))
        }
    };
    crate::RunError::with_source(kind, message, error)
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
        Some(not_started(failure.stage, failure.error, &self.program, self.namespace.as_deref()).line())
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
    match fork::spawn(procs.as_ref().map(AsFd::as_fd), &v1, target.netns, command) {
        Ok(pid) => Ok(Spawned::Running(Started { pid, report: None, program, namespace, way: "fork" })),
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
    let mut exec = clone3::Exec::new(command)?;
    let cgroup = match target.cgroup {
        Some(dir) => {
            Some(rustix::fs::open(dir, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, FileMode::empty())?)
        }
        None => None,
    };
    let v1: Vec<RawFd> = target.v1_tasks.iter().map(AsRawFd::as_raw_fd).collect();
    clone3::spawn(cgroup.as_ref().map(AsFd::as_fd), &v1, target.netns, &mut exec)
}
