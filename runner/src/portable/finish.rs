//! The run document of a step measured by what the OS accounted (a job
//! object, a `wait4` rusage): the same document, summary and typed result
//! as on Linux, each number with its source, and a reason for each one
//! absent.

use std::process::ExitStatus;
use std::time::Duration;

use jiff::Timestamp;
use stepmon_model::result::{Cost, StepResult};
use stepmon_model::sample::StepUsage;
use stepmon_model::source::{Accounting, Sources};
use stepmon_model::{RunDocument, RunInfo};

use crate::error::{RunError, RunErrorKind};
use crate::finished::Finished;
use crate::options::StepOptions;

/// What a step's end gave.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// How its first process ended (`None`: it never started).
    pub(crate) status: Option<ExitStatus>,
    /// Why it did not start.
    pub(crate) not_started: Option<RunError>,
    /// When it started.
    pub(crate) start: Option<Timestamp>,
    /// From its start to its first process's exit.
    pub(crate) wall: Duration,
    /// From the start call to the process running.
    pub(crate) placement: Option<Duration>,
    /// From its first process's exit to now (leftovers killed, counters read).
    pub(crate) exit_to_result: Option<Duration>,
    pub(crate) accounting: Option<Accounting>,
    pub(crate) sources: Sources,
    /// Why each number not measured is not, in words (`pids: ...`).
    pub(crate) not_measured: Vec<String>,
    /// How the step was placed, one line.
    pub(crate) placement_words: String,
    pub(crate) messages: Vec<String>,
    /// `uname -r`, or the Windows build.
    pub(crate) kernel: String,
}

/// The exit status a shell gives, and the signal if one ended it.
fn exit_of(status: ExitStatus) -> (i32, Option<i32>) {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return (128 + signal, Some(signal));
    }
    (status.code().unwrap_or(1), None)
}

/// The finished step of `options` from `outcome`.
pub(crate) fn finished(options: &StepOptions, outcome: Outcome) -> Finished {
    let mut messages = outcome.messages;
    let (exit_code, signal, code) = match (&outcome.status, &outcome.not_started) {
        (Some(status), _) => {
            let (code, signal) = exit_of(*status);
            (signal.is_none().then_some(code), signal, code)
        }
        (None, Some(error)) => {
            messages.push(error.line());
            let code = if error.kind() == RunErrorKind::NotFound { 127 } else { 126 };
            (Some(code), None, code)
        }
        (None, None) => (None, None, 1),
    };
    let mut info = RunInfo::default();
    info.command = options.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    info.name = Some(options.name.clone().unwrap_or_else(|| stepmon_model::labels::default_name(&info.command)));
    info.labels.clone_from(&options.labels);
    info.exit_code = exit_code;
    info.signal = signal;
    info.start = outcome.start;
    info.end = outcome.start.and_then(|start| start.checked_add(outcome.wall).ok());
    info.host.kernel = outcome.kernel;
    info.not_measured = outcome.not_measured;
    info.placement = outcome.placement_words;
    info.sources = outcome.sources;
    info.accounting = outcome.accounting;
    let wall = outcome.status.is_some().then_some(outcome.wall.as_secs_f64());
    let usage = StepUsage::default();
    info.summary = stepmon_model::summary::summary_of(&usage, Some(&info), wall);
    let document = RunDocument::new(usage, info);
    let mut cost = Cost::default();
    cost.placement_seconds = outcome.placement.map(|d| d.as_secs_f64());
    cost.exit_to_result_seconds = outcome.exit_to_result.map(|d| d.as_secs_f64());
    let result = StepResult::of(&document, cost);
    Finished {
        result,
        document,
        exit_code: code,
        messages,
        stdout: Vec::new(),
        stderr: Vec::new(),
        not_started: outcome.not_started,
    }
}
