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

/// What the command gets besides its arguments and its placement: what
/// `std::process::Command` calls its environment, current directory and
/// stdio (the step's `StepOptions` set them).
#[derive(Debug, Clone, Copy, Default)]
pub struct Launch<'a> {
    /// Its whole environment as `NAME`, `VALUE` pairs (`None`: this
    /// process's, read at the spawn).
    pub env: Option<&'a [(OsString, OsString)]>,
    /// The directory it runs in (`None`: this process's).
    pub dir: Option<&'a Path>,
    /// What its fds 0, 1 and 2 become (`None`: inherited); open until the
    /// spawn returns. Ideally close-on-exec (as every fd std opens is): the
    /// child's copies on 0–2 lose the flag, and others go at its exec.
    pub stdio: [Option<BorrowedFd<'a>>; 3],
}

impl Launch<'_> {
    /// `PATH` for the program's lookup: the command's own when its
    /// environment is given (none there: the default path), else this
    /// process's.
    #[must_use]
    pub fn path(&self) -> Option<OsString> {
        match self.env {
            Some(env) => env.iter().find(|(name, _)| name == "PATH").map(|(_, value)| value.clone()),
            None => std::env::var_os("PATH"),
        }
    }
}

/// Why a command did not start, from the stage its child failed at, as the
/// runner reports it (`dir`: the working directory it was to enter).
fn not_started(
    stage: clone3::Stage,
    error: io::Error,
    program: &OsStr,
    namespace: Option<&Path>,
    dir: Option<&Path>,
) -> crate::RunError {
    use crate::RunErrorKind as Kind;
    let (kind, message) = match (stage, namespace, dir) {
        (clone3::Stage::NetNs, Some(path), _) => {
            (Kind::Namespace, format!("cannot join the network namespace {}", path.display()))
        }
        (clone3::Stage::NetNs, None, _) => (Kind::Namespace, "cannot join the network namespace".to_owned()),
        (clone3::Stage::JoinV1, ..) => (Kind::Placement, "cannot join the step's cgroup v1 hierarchies".to_owned()),
        (clone3::Stage::JoinCgroup, ..) => (Kind::Placement, "cannot move the step into its cgroup".to_owned()),
        (clone3::Stage::Chdir, _, dir) => (
            Kind::WorkingDirectory,
            format!("cannot enter the working directory {}", dir.unwrap_or(Path::new("")).display()),
        ),
        (clone3::Stage::Stdio, ..) => (Kind::Spawn, "cannot give the command its stdin, stdout and stderr".to_owned()),
        (clone3::Stage::Exec, ..) => {
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
    dir: Option<PathBuf>,
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
    /// joined, working directory not entered).
    #[must_use]
    pub fn failure_message(&mut self) -> Option<String> {
        let failure = self.report.take().and_then(clone3::Spawned::failure)?;
        let error =
            not_started(failure.stage, failure.error, &self.program, self.namespace.as_deref(), self.dir.as_deref());
        Some(error.line())
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

/// Starts `command` at `target`, as `launch` says. A failure to run the
/// command itself (not found, not executable, its directory) is not an
/// error: with clone3 the child exits 127 or 126 (see
/// [`Started::failure_message`]), with fork it is [`Spawned::NotStarted`].
pub fn spawn(target: Target<'_>, command: &[OsString], launch: &Launch<'_>, mode: Mode) -> Result<Spawned, SpawnError> {
    let program = command.first().cloned().unwrap_or_default();
    let namespace = target.netns_path.map(Path::to_path_buf);
    let dir = launch.dir.map(Path::to_path_buf);
    if mode != Mode::Fork {
        match direct(target, command, launch) {
            Ok(spawned) => {
                return Ok(Spawned::Running(Started {
                    pid: spawned.pid,
                    report: Some(spawned),
                    program,
                    namespace,
                    dir,
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
    match fork::spawn(procs.as_ref().map(AsFd::as_fd), &v1, target.netns, command, launch) {
        Ok(pid) => Ok(Spawned::Running(Started { pid, report: None, program, namespace, dir, way: "fork" })),
        Err(fork::Failure::Join(error)) => Err(SpawnError { what: "cannot move the step into its cgroup", error }),
        Err(fork::Failure::NetNs(error)) => Err(SpawnError { what: "cannot join the network namespace", error }),
        Err(fork::Failure::Exec(error)) => {
            let code = if error.kind() == io::ErrorKind::NotFound { NOT_FOUND } else { NOT_EXECUTABLE };
            Ok(Spawned::NotStarted(NotStarted {
                code,
                message: format!("cannot run {}: {error}", program.to_string_lossy()),
            }))
        }
        Err(fork::Failure::Chdir(error)) => Ok(Spawned::NotStarted(NotStarted {
            code: NOT_EXECUTABLE,
            message: not_started(clone3::Stage::Chdir, error, &program, None, dir.as_deref()).line(),
        })),
        Err(fork::Failure::Setup(error)) => Err(SpawnError { what: "cannot start the step", error }),
    }
}

/// clone3, into the cgroup if the step has one.
fn direct(target: Target<'_>, command: &[OsString], launch: &Launch<'_>) -> io::Result<clone3::Spawned> {
    let mut exec = clone3::Exec::new(command, launch)?;
    let cgroup = match target.cgroup {
        Some(dir) => {
            Some(rustix::fs::open(dir, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, FileMode::empty())?)
        }
        None => None,
    };
    let v1: Vec<RawFd> = target.v1_tasks.iter().map(AsRawFd::as_raw_fd).collect();
    clone3::spawn(cgroup.as_ref().map(AsFd::as_fd), &v1, target.netns, &mut exec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// The spawn without a subreaper, each way: the environment, directory
    /// and stdout of `launch` are the command's.
    #[test]
    fn each_way_gives_the_command_its_environment_directory_and_stdout() {
        let _children = crate::CHILDREN_OF_THE_TEST_PROCESS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        let command: Vec<OsString> = ["sh", "-c", "echo \"$ONLY $(pwd -P)\""].iter().map(Into::into).collect();
        let env = [("ONLY".into(), "given".into()), ("PATH".into(), "/usr/bin:/bin".into())];
        for mode in [Mode::Clone3, Mode::Fork] {
            let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
            let launch = Launch { env: Some(&env), dir: Some(dir.path()), stdio: [None, Some(write.as_fd()), None] };
            let Spawned::Running(mut started) = spawn(Target::default(), &command, &launch, mode).unwrap() else {
                panic!("{mode:?}: not started");
            };
            drop(write);
            let mut said = String::new();
            std::fs::File::from(read).read_to_string(&mut said).unwrap();
            let reaped = wait4(started.pid, false).unwrap().unwrap();
            assert_eq!(reaped.status.code(), Some(0), "{mode:?}: {:?}", started.failure_message());
            assert_eq!(said, format!("given {}\n", real.display()), "{mode:?}");
            // A directory that cannot be entered: the command does not start.
            let missing = dir.path().join("missing");
            let launch = Launch { dir: Some(&missing), ..Launch::default() };
            let message = match spawn(Target::default(), &command, &launch, mode).unwrap() {
                Spawned::NotStarted(not) => {
                    assert_eq!(not.code, NOT_EXECUTABLE);
                    not.message
                }
                Spawned::Running(mut started) => {
                    assert_eq!(wait4(started.pid, false).unwrap().unwrap().status.code(), Some(NOT_EXECUTABLE));
                    started.failure_message().unwrap()
                }
            };
            assert!(
                message.starts_with("cannot enter the working directory ") && message.contains("missing"),
                "{message}"
            );
        }
    }
}
