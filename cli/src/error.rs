//! One-line errors with a hint; never a backtrace.

use std::fmt;

/// A failure of stepmon itself (not of the step).
#[derive(Debug)]
pub struct CliError {
    /// What went wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl CliError {
    /// An error without a hint.
    pub fn new(message: impl Into<String>) -> Self {
        CliError { message: message.into(), hint: None }
    }

    /// Adds a hint.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// An I/O error on `what`, with a hint for permission problems.
    pub fn io(what: &str, error: &std::io::Error) -> Self {
        let e = CliError::new(format!("{what}: {error}"));
        if error.kind() == std::io::ErrorKind::PermissionDenied {
            e.hint(
                "creating cgroups needs root, or a delegated subtree: \
                 systemd-run --user --scope -p Delegate=yes stepmon run --cgroup-parent \"$(stepmon doctor --own-cgroup)\" -- CMD",
            )
        } else {
            e
        }
    }
}

impl From<stepmon_runner::RunError> for CliError {
    fn from(error: stepmon_runner::RunError) -> Self {
        CliError { message: error.message, hint: error.hint }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stepmon: error: {}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}
