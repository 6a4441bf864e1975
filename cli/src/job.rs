//! `stepmon run --job FILE`: the step's lines appended to the job's record
//! as the step runs, by `stepmon-job`'s writer; what it reports is said
//! here, as stepmon says warnings.

use std::path::Path;
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;

use stepmon_job::{Appended, EventAppender, JobError, JobWriter};
use stepmon_model::job::LiveSample;

use crate::error::CliError;

/// The warning (and the run document's warning) of a record that stopped:
/// the step is not stopped with it.
fn stopped(why: &JobError) -> String {
    format!("{why}; the step goes on, its record ends here")
}

/// A step's lines in its job record: the thread that appends its samples
/// (it returns the writer once every sender is gone), the sender of the
/// runner's samples, and the appender of its events.
pub struct Started {
    /// Appends the samples; returns the writer.
    pub thread: JoinHandle<JobWriter>,
    /// For `StepOptions::live`.
    pub samples: Sender<LiveSample>,
    /// The events' (`None`: the record could not be opened again for them,
    /// which was said).
    pub events: Option<EventAppender>,
}

/// Opens the job record `path`, appends the start of the step `command`
/// (named `name`, with `labels`), and appends each sample sent on the
/// returned sender (the runner's `StepOptions::live`) as it comes, on a
/// thread that returns the writer once every sender is gone; the step's
/// events go through the returned appender (`None`: the record could not
/// be opened again for them, which is said).
pub fn start(
    path: &Path,
    name: Option<&str>,
    labels: &[stepmon_model::labels::Label],
    command: &[String],
) -> Result<Started, CliError> {
    open(path, stepmon_job::start(name, labels, command), warn)
}

/// How a record's warnings are said: [`warn`] (on stderr), or not at all
/// where stderr is not stepmon's to write (`stepmon wrap`: the action's).
pub type Say = fn(&str);

/// Says `line` as stepmon's warning on stderr.
pub fn warn(line: &str) {
    eprintln!("stepmon: warning: {line}");
}

/// [`start`] of the step `start` (its start line), its warnings said by `say`.
pub fn open(path: &Path, start: stepmon_model::job::StepStart, say: Say) -> Result<Started, CliError> {
    let writer = JobWriter::open(path, start)?;
    let events = writer
        .events(move |why| say(&stopped(why)))
        .map_err(|why| say(&format!("{why}; the step's events are not in its record")))
        .ok();
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = writer.follow(rx, move |why| say(&stopped(why)))?;
    Ok(Started { thread, samples: tx, events })
}

/// Appends the step's end to its job record once its samples are all in
/// (the thread ends when the runner drops its sender), and syncs it.
///
/// Returns why the record stopped short (e.g. a full disk), if it did, for
/// the run document's warnings: the record itself cannot say it then.
pub fn end(
    job: Option<JoinHandle<JobWriter>>,
    exit_code: i32,
    error: Option<String>,
    document: Option<stepmon_model::document::RunDocument>,
) -> Option<String> {
    end_saying(job, exit_code, error, document, warn)
}

/// [`end`], its warnings said by `say`.
pub fn end_saying(
    job: Option<JoinHandle<JobWriter>>,
    exit_code: i32,
    error: Option<String>,
    document: Option<stepmon_model::document::RunDocument>,
    say: Say,
) -> Option<String> {
    let writer = job?.join().ok()?;
    let ended = writer.end(exit_code, error, document);
    // An earlier stop was said when it happened, by the thread.
    if ended.end == Appended::Stopped
        && let Some(why) = &ended.stopped
    {
        say(&stopped(why));
    }
    if let Some(why) = &ended.sync {
        say(&why.to_string());
    }
    ended.stopped.as_ref().map(stopped)
}

/// `watch` with the step's events appended to its record by `events` (a
/// launcher's or a build's: never said on stderr); as it is without.
pub fn recording_events(
    watch: stepmon_runner::watch::Watch,
    events: Option<EventAppender>,
) -> stepmon_runner::watch::Watch {
    let Some(events) = events.map(std::sync::Mutex::new) else { return watch };
    watch.with_events(stepmon_runner::watch::Callback::new(move |event: &stepmon_model::event::StepEvent| {
        let mut events = events.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = events.append(event.clone());
    }))
}

/// How a step run by [`run_recorded`] went.
pub enum Ran {
    /// It ran: the runner's result (its record is the caller's to end).
    Finished(Box<stepmon_runner::Finished>),
    /// It could not run (not found, not executable): the status to exit
    /// with, as a shell's, said in one `stepmon: error:` line; its record
    /// is ended.
    Exit(i32),
}

/// Prepares and runs `options`, the step `job` records, and says the
/// runner's notices when `say_notices` (its messages after the step are
/// the caller's to say). A step that cannot be
/// prepared or run ends its record (`job` is taken) with its status and
/// why, its warnings said by `say`; stepmon's own failure is the error.
///
/// # Errors
/// What stepmon itself could not do (not a command that could not run).
pub fn run_recorded(
    options: stepmon_runner::StepOptions,
    job: &mut Option<JoinHandle<JobWriter>>,
    say_notices: bool,
    say: Say,
) -> Result<Ran, CliError> {
    let prepared = match stepmon_runner::prepare(options) {
        Ok(prepared) => prepared,
        Err(e) => {
            // A command that cannot run ends as a shell's would: its
            // status, one line, no hint.
            let code = crate::error::exit_code_of(&e);
            let error = CliError::from(e);
            end_saying(job.take(), code, Some(error.message.clone()), None, say);
            if code != crate::error::INTERNAL_ERROR {
                eprintln!("stepmon: error: {}", error.message);
                return Ok(Ran::Exit(code));
            }
            return Err(error);
        }
    };
    if say_notices {
        for notice in prepared.notices() {
            eprintln!("stepmon: {notice}");
        }
    }
    let finished = match prepared.run() {
        Ok(finished) => finished,
        Err(e) => {
            let error = CliError::from(e);
            end_saying(job.take(), crate::error::INTERNAL_ERROR, Some(error.message.clone()), None, say);
            return Err(error);
        }
    };
    Ok(Ran::Finished(Box::new(finished)))
}
