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

    /// An I/O error on `what`, with a hint for permission problems.
    pub fn io(what: &str, error: &io::Error) -> Self {
        let e = RunError::new(format!("{what}: {error}"));
        if error.kind() == io::ErrorKind::PermissionDenied {
            e.hint(
                "creating cgroups needs root, or a delegated subtree: systemd-run --user --scope -p Delegate=yes \
                 stepmon run --cgroup-parent \"$(stepmon doctor --own-cgroup)\" -- CMD",
            )
        } else {
            e
        }
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RunError {}
