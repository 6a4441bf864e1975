//! Why a step could not be run as asked: a kind to match on, one line
//! saying what failed, and the underlying error as its `source()`.

use std::fmt;
use std::io;

/// What kind of failure a [`RunError`] is, to match on (as
/// `std::io::ErrorKind` is for `io::Error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RunErrorKind {
    /// The command's program was not found: not in the step's `PATH`, or
    /// (a command that did not start) its file or its `#!` interpreter is
    /// missing. A shell's 127.
    NotFound,
    /// The program exists but may not be executed (`EACCES`, `EPERM`). A
    /// shell's 126.
    PermissionDenied,
    /// The step's working directory ([`crate::StepOptions::current_dir`])
    /// could not be entered.
    WorkingDirectory,
    /// A cgroup of the step's own was required
    /// ([`crate::CgroupMode::Require`]) and none could be made; its
    /// `source()` says why.
    NoCgroup,
    /// A cgroup of the step's could not be created, written (a limit) or
    /// joined. A refusal (root or a delegated subtree needed) has a
    /// `source()` of kind `PermissionDenied` or `ReadOnlyFilesystem`.
    Placement,
    /// The step's network namespace could not be created or joined (a
    /// refusal: `source()` of kind `PermissionDenied`).
    Namespace,
    /// The step's processes or streams could not be set up: its subreaper,
    /// the clone, a pipe, `/dev/null`, a move onto fd 0–2, the ids of
    /// [`crate::StepOptions::uid`] and its kin, or an `exec` failure other
    /// than the two above (such as `ENOEXEC`).
    Spawn,
    /// Options that do not go together (a limit without a cgroup,
    /// loopback traffic without a namespace of the step's own, no
    /// command).
    InvalidOptions,
    /// The runner's own I/O: signal handlers, the sampler, reading the
    /// host, waiting for the step, its pipes.
    Io,
    /// An option this platform cannot keep (limits, a cgroup parent, a
    /// network namespace or a spawn mode off Linux).
    Unsupported,
}

/// An `io::Error`, owned or borrowed (a borrowed one is copied: its errno,
/// else its kind and words).
pub(crate) trait IntoIo {
    fn into_io(self) -> io::Error;
}

impl IntoIo for io::Error {
    fn into_io(self) -> io::Error {
        self
    }
}

impl IntoIo for &io::Error {
    fn into_io(self) -> io::Error {
        match self.raw_os_error() {
            Some(errno) => io::Error::from_raw_os_error(errno),
            None => io::Error::new(self.kind(), self.to_string()),
        }
    }
}

/// A failure of the runner (not of the step: a step that fails has its
/// exit status in [`crate::Finished::exit_code`]).
///
/// `Display` says what failed in one line; [`source`](std::error::Error::source)
/// is why, where there is an underlying error (an `io::Error` almost
/// always), so print both (`{error}: {source}`) or the whole chain.
///
/// ```
/// use stepmon_runner::{Prepared, RunErrorKind, StepOptions, prepare};
///
/// // Linux's `prepare` finds that the program is missing; elsewhere `start` does.
/// match prepare(StepOptions::new(["stepmon-no-such-program"])).and_then(Prepared::start) {
///     Err(e) if e.kind() == RunErrorKind::NotFound => eprintln!("{e}"),
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Debug)]
pub struct RunError {
    kind: RunErrorKind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

// Off Linux the cgroup and namespace errors are not made.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
impl RunError {
    /// `message` (what failed), of `kind`, without an underlying error (as
    /// `io::Error::new` makes one; for a caller's own wrappers and tests).
    pub fn new(kind: RunErrorKind, message: impl Into<String>) -> Self {
        RunError { kind, message: message.into(), source: None }
    }

    /// `message` (what failed), of `kind`, because of `source`.
    pub fn with_source(
        kind: RunErrorKind,
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        RunError { kind, message: message.into(), source: Some(source.into()) }
    }

    /// An I/O error of the runner's own while `what`.
    pub(crate) fn io(what: &str, error: impl IntoIo) -> Self {
        RunError::with_source(RunErrorKind::Io, what, error.into_io())
    }

    /// An I/O error creating, writing or joining a cgroup (`what` names it).
    pub(crate) fn cgroup(what: &str, error: impl IntoIo) -> Self {
        RunError::with_source(RunErrorKind::Placement, what, error.into_io())
    }

    /// An I/O error creating or entering a network namespace (`what`
    /// names it).
    pub(crate) fn namespace(what: &str, error: impl IntoIo) -> Self {
        RunError::with_source(RunErrorKind::Namespace, what, error.into_io())
    }

    /// What kind of failure it is.
    #[must_use]
    pub fn kind(&self) -> RunErrorKind {
        self.kind
    }

    /// The underlying I/O error, when there is one.
    #[must_use]
    pub fn io_error(&self) -> Option<&io::Error> {
        self.source.as_deref().and_then(|e| e.downcast_ref::<io::Error>())
    }

    /// `what failed: why`, one line (the messages of a finished step).
    pub(crate) fn line(&self) -> String {
        match &self.source {
            Some(source) => format!("{}: {source}", self.message),
            None => self.message.clone(),
        }
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn the_kind_and_the_io_error_are_kept_apart_from_the_words() {
        let denied = io::Error::from(io::ErrorKind::PermissionDenied);
        let cgroup = RunError::cgroup("cannot create a cgroup under /sys/fs/cgroup/x", denied);
        assert_eq!(cgroup.kind(), RunErrorKind::Placement);
        assert_eq!(cgroup.to_string(), "cannot create a cgroup under /sys/fs/cgroup/x");
        assert_eq!(cgroup.io_error().map(io::Error::kind), Some(io::ErrorKind::PermissionDenied));
        assert!(cgroup.source().is_some());
        assert_eq!(cgroup.line(), "cannot create a cgroup under /sys/fs/cgroup/x: permission denied");
        let namespace = RunError::namespace("cannot create a network namespace", io::Error::from_raw_os_error(1));
        assert_eq!(namespace.kind(), RunErrorKind::Namespace);
        assert_eq!(namespace.io_error().and_then(io::Error::raw_os_error), Some(1));
        let plain = RunError::new(RunErrorKind::InvalidOptions, "no command given");
        assert!(plain.source().is_none() && plain.io_error().is_none());
        assert_eq!(plain.line(), "no command given");
        // A library error: no command-line flag in its words.
        for e in [&cgroup, &namespace, &plain] {
            assert!(!e.line().contains("--"), "{e}");
        }
    }
}
