//! What a finished step gives (on every platform: a builder's code that
//! reads it compiles everywhere).

use stepmon_model::RunDocument;
use stepmon_model::result::StepResult;

use crate::error::RunError;

/// A finished step.
#[derive(Debug)]
#[non_exhaustive]
pub struct Finished {
    /// The step's numbers as a small typed value (each with its source,
    /// bound and reason) and what stepmon cost for it; `Display` prints it
    /// as one line.
    pub result: StepResult,
    /// The run document: what the step's counters measured, where each
    /// number came from, and its summary. Its verdicts are
    /// `stepmon_report::compose::complete`'s to fill (what `stepmon run -o`
    /// writes is that).
    pub document: RunDocument,
    /// The status a wrapper should exit with, as shells give it: the
    /// step's code, 128 + N for a signal, 127 when its command did not
    /// start because it was not found, 126 when it did not start for
    /// another reason (not executable, its working directory, ...; see
    /// [`Finished::not_started`]).
    pub exit_code: i32,
    /// Messages for the user, in order (a command that could not run, a
    /// cgroup that could not be removed, ...).
    pub messages: Vec<String>,
    /// What the step wrote to its stdout, when it was
    /// [`crate::Stdio::piped`] and collected by
    /// [`crate::Step::wait_with_output`] or [`crate::Step::output`]; empty
    /// otherwise.
    pub stdout: Vec<u8>,
    /// What the step wrote to its stderr; as [`Finished::stdout`].
    pub stderr: Vec<u8>,
    pub(crate) not_started: Option<RunError>,
}

impl Finished {
    /// Why the step's command did not start, when it did not: its program
    /// was not found ([`RunErrorKind::NotFound`](crate::RunErrorKind),
    /// `exit_code` 127) or may not be executed
    /// ([`PermissionDenied`](crate::RunErrorKind), 126), its working
    /// directory could not be entered
    /// ([`WorkingDirectory`](crate::RunErrorKind), 126), or the step's
    /// process could not join its namespace or cgroup, or set up its
    /// streams (126). The step is still a finished one (measured, cleaned
    /// up, in the document with its exit status), as a shell would run it;
    /// a program missing from `PATH` is found before that, an `Err` of
    /// kind `NotFound` from [`crate::prepare`].
    #[must_use]
    pub fn not_started(&self) -> Option<&RunError> {
        self.not_started.as_ref()
    }
}
