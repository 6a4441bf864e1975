//! Windows' part of the public handles ([`crate::api`]): each step's
//! processes in a job object of its own, its first process created
//! suspended and assigned to the job before it runs (so every process it
//! starts is in the job too), its numbers from the job's accounting
//! ([`crate::job_account`]), what is left when its first process has exited killed
//! with the job (`TerminateJobObject`, and `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`
//! when the handle goes: a step dropped before its end leaves nothing).
//!
//! Its end is the process handle's (std's `Child::wait`); the async calls
//! run that wait on a thread of their own ([`crate::portable::thread`]).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::Child;
use std::time::{Duration, Instant};

use jiff::Timestamp;

use crate::error::{RunError, RunErrorKind};
use crate::finished::Finished;
use crate::job_account;
use crate::notice::Notice;
use crate::options::StepOptions;
use crate::portable::check::Platform;
use crate::portable::finish::{Outcome, finished};
pub(crate) use crate::portable::prepare::{Prepared, Runner, prepare};
use crate::portable::thread::{joined, read_on_thread};
use crate::portable::{command, thread};
use crate::spawn::{self, Job};

pub(crate) use crate::portable::ends::{ChildStderr, ChildStdin, ChildStdout};

pub(crate) const PLATFORM: Platform = Platform {
    name: "Windows",
    source: "its own job object (CPU time, memory peak, I/O bytes, processes)",
    not_measured: &["pressure stall", "network traffic", "the most processes at once", "per-process records"],
};

/// How long the processes a step left behind get to end once killed.
const KILL_TIMEOUT: Duration = Duration::from_secs(10);

/// The exit status of a process ended by [`crate::Step::kill`] or as a
/// leftover (std's `Child::kill` uses the same).
const KILLED: u32 = 1;

impl Prepared {
    pub(crate) fn start(self) -> Result<Step, RunError> {
        let start = Timestamp::now();
        let mut step = Step {
            stdin: None,
            stdout: None,
            stderr: None,
            state: State::NotStarted(None),
            start,
            started: Instant::now(),
            placement: Duration::ZERO,
            options: self.options,
            notices: self.notices,
        };
        // As on Linux: a directory that cannot be entered is a step that
        // did not start, not an error of the runner.
        if let Some(dir) = step.options.action.current_dir.as_deref().filter(|dir| !dir.is_dir()) {
            let error = RunError::with_source(
                RunErrorKind::WorkingDirectory,
                format!("cannot enter the working directory {}", dir.display()),
                io::Error::from(io::ErrorKind::NotFound),
            );
            step.state = State::NotStarted(Some(error));
            return Ok(step);
        }
        let job =
            Job::new().map_err(|e| RunError::with_source(RunErrorKind::Spawn, "cannot create a job object", e))?;
        let mut command = command::command(&step.options)?;
        std::os::windows::process::CommandExt::creation_flags(&mut command, spawn::CREATE_SUSPENDED);
        let mut child = command.spawn().map_err(|e| command::spawn_error(&step.options.command[0], e))?;
        // Before its first instruction: in the job, then running.
        let placed = job
            .assign(&child)
            .map_err(|e| RunError::with_source(RunErrorKind::Spawn, "cannot put the step in its job object", e))
            .and_then(|()| {
                spawn::resume_first_thread(child.id())
                    .map_err(|e| RunError::with_source(RunErrorKind::Spawn, "cannot resume the step's first thread", e))
            });
        if let Err(e) = placed {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
        step.started = Instant::now();
        step.placement = self.called.elapsed();
        step.stdin = child.stdin.take().map(ChildStdin::new);
        step.stdout = child.stdout.take().map(ChildStdout::new);
        step.stderr = child.stderr.take().map(ChildStderr::new);
        step.state = State::Running { child, job };
        Ok(step)
    }
}

#[derive(Debug)]
enum State {
    Running {
        child: Child,
        job: Job,
    },
    /// Its command did not start (why), or its end was taken.
    NotStarted(Option<RunError>),
}

#[derive(Debug)]
pub(crate) struct Step {
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: Option<ChildStdout>,
    pub(crate) stderr: Option<ChildStderr>,
    state: State,
    start: Timestamp,
    started: Instant,
    placement: Duration,
    options: StepOptions,
    notices: Vec<Notice>,
}

fn unsupported(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, format!("{what}: Windows has no public call that suspends a process"))
}

impl Step {
    /// 0 for a step whose command did not start.
    pub(crate) fn pid(&self) -> u32 {
        match &self.state {
            State::Running { child, .. } => child.id(),
            State::NotStarted(_) => 0,
        }
    }

    pub(crate) fn notices(&self) -> &[Notice] {
        &self.notices
    }

    pub(crate) fn kill(&self) -> io::Result<()> {
        match &self.state {
            State::Running { job, .. } => job.terminate(KILLED),
            State::NotStarted(_) => Ok(()),
        }
    }

    #[allow(clippy::unused_self)] // the same call on every platform
    pub(crate) fn freeze(&self) -> io::Result<()> {
        Err(unsupported("freezing a step"))
    }

    #[allow(clippy::unused_self)] // the same call on every platform
    pub(crate) fn thaw(&self) -> io::Result<()> {
        Err(unsupported("thawing a step"))
    }

    /// Blocks until the first process has exited, kills what is left of
    /// the job, reads its accounting.
    pub(crate) fn wait(mut self) -> Result<Finished, RunError> {
        // As std's `Child::wait`: a command reading its stdin sees its end.
        drop(self.stdin.take());
        let (mut child, job) = match std::mem::replace(&mut self.state, State::NotStarted(None)) {
            State::Running { child, job } => (child, job),
            State::NotStarted(not_started) => {
                let outcome = Outcome { not_started, start: Some(self.start), ..Outcome::default() };
                return Ok(finished(&self.options, outcome));
            }
        };
        let status = child.wait().map_err(|e| RunError::io("waiting for the step", e))?;
        let exited = Instant::now();
        let own = spawn::process_counters(&child);
        let mut messages = Vec::new();
        let leftovers = match job.counters() {
            Ok(counters) => Some(u64::from(counters.active_processes)),
            Err(e) => {
                messages.push(format!("warning: cannot count what the step left behind: {e}"));
                None
            }
        };
        if leftovers.is_some_and(|n| n > 0)
            && let Err(e) = end_leftovers(&job)
        {
            messages.push(format!("warning: killing what the step left behind: {e}"));
        }
        let wine = spawn::wine_version();
        let accounted = job_account::account(&job_account::Readings {
            counters: job.counters().map_err(|e| e.to_string()),
            io: job.io().map_err(|e| e.to_string()),
            peaks: job.memory_peaks().map_err(|e| e.to_string()),
            own: own.map_err(|e| e.to_string()),
            leftovers,
            wine: wine.as_deref(),
        });
        drop(job);
        let kernel = match &wine {
            Some(version) => format!("Windows (Wine {version})"),
            None => "Windows".to_owned(),
        };
        let outcome = Outcome {
            status: Some(status),
            not_started: None,
            start: Some(self.start),
            wall: exited.duration_since(self.started),
            placement: Some(self.placement),
            exit_to_result: Some(exited.elapsed()),
            accounting: Some(accounted.accounting),
            sources: accounted.sources,
            not_measured: accounted.not_measured,
            placement_words: "its own job object".to_owned(),
            messages,
            kernel,
        };
        Ok(finished(&self.options, outcome))
    }

    /// [`Step::wait`] while a thread each reads the piped stdout and stderr.
    pub(crate) fn wait_with_output(mut self) -> Result<Finished, RunError> {
        let stdout = self.stdout.take().map(read_on_thread);
        let stderr = self.stderr.take().map(read_on_thread);
        let mut finished = self.wait()?;
        finished.stdout = joined(stdout, "stdout")?;
        finished.stderr = joined(stderr, "stderr")?;
        Ok(finished)
    }

    pub(crate) fn output(self) -> impl Future<Output = Result<Finished, RunError>> + Send + 'static {
        thread::on_thread(move || self.wait_with_output())
    }

    pub(crate) fn into_future(self) -> Pin<Box<dyn Future<Output = Result<Finished, RunError>> + Send>> {
        thread::on_thread(move || self.wait())
    }
}

/// Kills the job's processes and waits (at most [`KILL_TIMEOUT`]) until
/// the job has none: their last CPU time and I/O are then in its accounting.
fn end_leftovers(job: &Job) -> io::Result<()> {
    job.terminate(KILLED)?;
    let deadline = Instant::now() + KILL_TIMEOUT;
    let mut pause = Duration::from_millis(1);
    while job.counters()?.active_processes > 0 {
        if Instant::now() > deadline {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "processes of the step's job still run"));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
    Ok(())
}
