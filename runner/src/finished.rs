//! What a finished step gives (on every platform: a builder's code that
//! reads it compiles everywhere).

use stepmon_model::RunDocument;
use stepmon_model::result::StepResult;

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
    /// The status a wrapper should exit with: the step's code, 128 + N for
    /// a signal, 127 not found, 126 not executable.
    pub exit_code: i32,
    /// Messages for the user, in order (a command that could not run, a
    /// cgroup that could not be removed, ...).
    pub messages: Vec<String>,
}
