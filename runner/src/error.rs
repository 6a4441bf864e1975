//! Why a step could not be run as asked: one line, a hint, and the exit
//! status a command-line wrapper should end with.

use std::fmt;
use std::io;

/// Exit status of a wrapper that failed itself (not the step), as `env` and
/// container runners use.
pub const INTERNAL_ERROR: i32 = 125;

/// A failure of the runner (not of the step).
#[derive(Debug)]
#[non_exhaustive]
pub struct RunError {
    /// What went wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
    /// 127 when the command does not exist, else [`INTERNAL_ERROR`].
    pub exit_code: i32,
}

impl RunError {
    /// An error without a hint (exit status [`INTERNAL_ERROR`]).
    pub fn new(message: impl Into<String>) -> Self {
        RunError { message: message.into(), hint: None, exit_code: INTERNAL_ERROR }
    }

    /// Adds a hint.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// An I/O error on `what`, without a hint: which one fits depends on
    /// what failed ([`RunError::cgroup`], [`RunError::namespace`]).
    pub fn io(what: &str, error: &io::Error) -> Self {
        RunError::new(format!("{what}: {error}"))
    }

    /// An I/O error creating or writing a cgroup (`what` names it); when it
    /// was refused, the hint to run as root or in a delegated subtree.
    pub fn cgroup(what: &str, error: &io::Error) -> Self {
        let e = RunError::io(what, error);
        if refused(error) {
            e.hint(
                "creating cgroups needs root, or a delegated subtree: systemd-run --user --scope -p Delegate=yes \
                 stepmon run --cgroup-parent \"$(stepmon doctor --own-cgroup)\" -- CMD",
            )
        } else {
            e
        }
    }

    /// An I/O error creating or entering a network namespace (`what` names
    /// it); when it was refused, that this needs root.
    pub fn namespace(what: &str, error: &io::Error) -> Self {
        let e = RunError::io(what, error);
        if refused(error) {
            e.hint("a network namespace for the step needs root (CAP_SYS_ADMIN); without one, run with --net host")
        } else {
            e
        }
    }
}

/// EACCES, EPERM (both `PermissionDenied`) or EROFS: refused, not failed.
fn refused(error: &io::Error) -> bool {
    matches!(error.kind(), io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem)
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RunError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_hint_goes_with_its_error() {
        let denied = io::Error::from(io::ErrorKind::PermissionDenied);
        let cgroup = RunError::cgroup("cannot create a cgroup under /sys/fs/cgroup/x", &denied);
        assert!(cgroup.hint.as_deref().is_some_and(|h| h.contains("delegated subtree")), "{cgroup:?}");
        let namespace = RunError::namespace("cannot create a network namespace", &denied);
        assert!(namespace.hint.as_deref().is_some_and(|h| h.contains("--net host")), "{namespace:?}");
        // Anything else (a signal handler, the subreaper, waiting): no hint,
        // rather than the cgroup one.
        assert_eq!(RunError::io("cannot become the step's child subreaper", &denied).hint, None);
        // A cgroup that failed for another reason than a refusal: no hint.
        let busy = io::Error::from(io::ErrorKind::ResourceBusy);
        assert_eq!(RunError::cgroup("cannot set memory.max to 1", &busy).hint, None);
        let read_only = io::Error::from(io::ErrorKind::ReadOnlyFilesystem);
        assert!(RunError::cgroup("cannot create a cgroup under /x", &read_only).hint.is_some());
    }
}
