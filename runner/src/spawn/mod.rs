//! Starting the step so that it is inside its cgroup (when it has one) and
//! network namespace before it executes the command's first instruction,
//! and reaping it with its resource usage. The workspace's only `unsafe`
//! code lives in this module.
//!
//! Every step starts under a subreaper of its own ([`subreaper`]), which
//! starts the command one of two ways, same outcome:
//! * `clone3(CLONE_INTO_CGROUP)` (or a plain `clone3` when the step has no
//!   cgroup), `setns` in the child, `execvp` (Linux 5.7+; `clone3` module).
//!   No cgroup migration, so no RCU grace period to wait for.
//! * fork, then a write of `0` to the cgroup's `cgroup.procs` and the
//!   namespace joined in the child. Used when clone3 fails (older kernels,
//!   seccomp filters that hide clone3).
//!
//! [`keeper`] forks the process that keeps a systemd scope populated
//! until the step's final sample is taken ([`crate::cgroup::systemd`]).
//!
//! `STEPMON_SPAWN=clone3|fork` forces one way (no fallback) and names the
//! way taken on stderr; for tests and diagnosis.

mod clone3;
pub(crate) mod keeper;
pub(crate) mod lookup;
mod reap;
pub(crate) mod script;
pub(crate) mod subreaper;
mod sys;

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;

pub(crate) use reap::Reaped;
#[cfg(test)]
pub(crate) use reap::Rusage;

/// Exit status when the command cannot be found (as in shells).
pub(crate) const NOT_FOUND: i32 = 127;
/// Exit status when the command cannot be executed (as in shells).
pub(crate) const NOT_EXECUTABLE: i32 = 126;

pub(crate) use crate::options::Mode;

/// Where the step's first process goes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Target<'a> {
    /// Its cgroup v2 directory, if it has one.
    pub(crate) cgroup: Option<&'a Path>,
    /// `tasks` files of the step's cgroup v1 hierarchies (opened for
    /// writing; the first process writes `0` to each before exec).
    pub(crate) v1_tasks: &'a [OwnedFd],
    /// A network namespace to join (an fd held by the caller).
    pub(crate) netns: Option<BorrowedFd<'a>>,
    /// The namespace's path, for messages.
    pub(crate) netns_path: Option<&'a Path>,
}

/// What the command gets besides its arguments and its placement: what
/// `std::process::Command` calls its environment, current directory and
/// stdio (the step's `StepOptions` set them).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Launch<'a> {
    /// Its whole environment as `NAME`, `VALUE` pairs (`None`: this
    /// process's, read at the spawn).
    pub(crate) env: Option<&'a [(OsString, OsString)]>,
    /// The directory it runs in (`None`: this process's).
    pub(crate) dir: Option<&'a Path>,
    /// What its fds 0, 1 and 2 become (`None`: inherited); open until the
    /// spawn returns. Ideally close-on-exec (as every fd std opens is): the
    /// child's copies on 0–2 lose the flag, and others go at its exec.
    pub(crate) stdio: [Option<BorrowedFd<'a>>; 3],
    /// The ids and umask it takes before its exec (`None`: this process's).
    pub(crate) credentials: Option<&'a crate::action::Credentials>,
}

impl Launch<'_> {
    /// `PATH` for the program's lookup: the command's own when its
    /// environment is given (none there: the default path), else this
    /// process's.
    #[must_use]
    pub(crate) fn path(&self) -> Option<OsString> {
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
        (clone3::Stage::Credentials, ..) => (Kind::Spawn, "cannot give the command its user and group ids".to_owned()),
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

/// A failure of stepmon to start the step (not the command's own failure).
#[derive(Debug)]
pub(crate) struct SpawnError {
    /// What was tried.
    pub(crate) what: &'static str,
    /// Why it failed.
    pub(crate) error: io::Error,
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.what, self.error)
    }
}

impl std::error::Error for SpawnError {}

/// Whether `signal` is ignored (`SIG_IGN`) in this process now: inherited
/// from whoever started it (`nohup`), so not to be caught and forwarded.
pub(crate) fn is_ignored(signal: i32) -> bool {
    sys::is_ignored(signal)
}

/// Sets `signal` back to its default action in this process if it is
/// ignored: for tests that raise a signal at themselves and may have been
/// started with it ignored (`nohup`, a background job), which stepmon would
/// leave alone. A caught one keeps its handler (another test's step may
/// have installed it).
#[cfg(test)]
pub(crate) fn unignore(signal: i32) {
    if sys::is_ignored(signal) {
        sys::default_action(signal);
    }
}
