//! macOS' and the BSDs' part of the public handles ([`crate::api`]): each
//! step's first process started by std's `Command` in a process group of
//! its own (`process_group(0)`), its numbers from its `wait4` rusage (CPU
//! time, the largest resident set: lower bounds of the tree, whose orphans
//! are lost without a subreaper), and what is left of its group when it
//! has exited killed (`killpg`).
//!
//! Its end is `waitid(WNOWAIT)` then `wait4` on its PID, blocking; the
//! async calls run that on a thread of their own
//! ([`crate::portable::thread`]).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::Child;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use stepmon_model::source::{Accounting, Rung, Source, Sources};

use crate::error::{RunError, RunErrorKind};
use crate::finished::Finished;
use crate::notice::Notice;
use crate::options::StepOptions;
use crate::portable::check::Platform;
use crate::portable::finish::{Outcome, finished};
pub(crate) use crate::portable::prepare::{Prepared, Runner, prepare};
use crate::portable::thread::{joined, read_on_thread};
use crate::portable::{command, thread};
use crate::spawn;

pub(crate) use crate::portable::ends::{ChildStderr, ChildStdin, ChildStdout};

pub(crate) const PLATFORM: Platform = Platform {
    name: if cfg!(target_vendor = "apple") { "macOS" } else { "this BSD" },
    source: "its first process's wait4 rusage (CPU time, the largest resident set: lower bounds of its tree)",
    not_measured: &["IO bytes", "the number of processes", "pressure stall", "network traffic", "per-process records"],
};

/// Why each number not measured here is not (each starts with its group).
const NOT_MEASURED: [&str; 6] = [
    "io: rusage counts block operations, not bytes, on macOS and the BSDs",
    "pids: without a subreaper or cgroup the step's processes are not counted",
    "stall: no pressure stall counters off Linux",
    "throttling: a step off Linux has no CPU limit",
    "network: a step off Linux has no network namespace of its own",
    "memory events: OOM kills are counted by cgroups only",
];

impl Prepared {
    pub(crate) fn start(self) -> Result<Step, RunError> {
        let mut step = Step {
            stdin: None,
            stdout: None,
            stderr: None,
            child: None,
            not_started: None,
            start: Timestamp::now(),
            started: Instant::now(),
            placement: Duration::ZERO,
            options: self.options,
            notices: self.notices,
        };
        // As on Linux: a directory that cannot be entered is a step that
        // did not start, not an error of the runner.
        if let Some(dir) = step.options.action.current_dir.as_deref().filter(|dir| !dir.is_dir()) {
            step.not_started = Some(RunError::with_source(
                RunErrorKind::WorkingDirectory,
                format!("cannot enter the working directory {}", dir.display()),
                io::Error::from(io::ErrorKind::NotFound),
            ));
            return Ok(step);
        }
        let mut command = command::command(&step.options)?;
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn().map_err(|e| command::spawn_error(&step.options.command[0], e))?;
        step.started = Instant::now();
        step.placement = self.called.elapsed();
        step.stdin = child.stdin.take().map(ChildStdin::new);
        step.stdout = child.stdout.take().map(ChildStdout::new);
        step.stderr = child.stderr.take().map(ChildStderr::new);
        step.child = Some(child);
        Ok(step)
    }
}

#[derive(Debug)]
pub(crate) struct Step {
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: Option<ChildStdout>,
    pub(crate) stderr: Option<ChildStderr>,
    /// Its first process, until reaped.
    child: Option<Child>,
    /// Why its command did not start.
    not_started: Option<RunError>,
    start: Timestamp,
    started: Instant,
    placement: Duration,
    options: StepOptions,
    notices: Vec<Notice>,
}

impl Step {
    /// 0 for a step whose command did not start.
    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    pub(crate) fn notices(&self) -> &[Notice] {
        &self.notices
    }

    /// Its process group's ID (its first process's PID), while it is not reaped.
    fn signal(&self, signal: i32) -> io::Result<()> {
        match &self.child {
            Some(child) => spawn::killpg(child.id(), signal),
            None => Ok(()),
        }
    }

    pub(crate) fn kill(&self) -> io::Result<()> {
        self.signal(spawn::SIGKILL)
    }

    pub(crate) fn freeze(&self) -> io::Result<()> {
        self.signal(spawn::SIGSTOP)
    }

    pub(crate) fn thaw(&self) -> io::Result<()> {
        self.signal(spawn::SIGCONT)
    }

    /// Blocks until the first process has exited, kills what is left of its
    /// group, reaps it with its rusage.
    pub(crate) fn wait(mut self) -> Result<Finished, RunError> {
        // As std's `Child::wait`: a command reading its stdin sees its end.
        drop(self.stdin.take());
        let Some(child) = self.child.take() else {
            let outcome =
                Outcome { not_started: self.not_started.take(), start: Some(self.start), ..Outcome::default() };
            return Ok(finished(&self.options, outcome));
        };
        let pid = child.id();
        spawn::wait_exited(pid).map_err(|e| RunError::io("waiting for the step", e))?;
        let exited = Instant::now();
        let mut messages = Vec::new();
        // The exited leader, not reaped yet, keeps the group's ID its own.
        if let Err(e) = spawn::killpg(pid, spawn::SIGKILL) {
            messages.push(format!("warning: killing what the step left behind: {e}"));
        }
        let (status, rusage) = spawn::wait4(pid).map_err(|e| RunError::io("reaping the step", e))?;
        let covers = "the step's first process and the descendants it waited for (wait4): its orphans are missed";
        let accounting = Accounting {
            user_seconds: Some(micros(rusage.user_micros)),
            system_seconds: Some(micros(rusage.system_micros)),
            memory_peak_bytes: Some(rusage.max_rss_bytes).filter(|b| *b > 0),
            ..Accounting::default()
        };
        let mut sources = Sources::default();
        sources.cpu = Some(Source::lower_bound(Rung::ProcessRusage, covers));
        let mut not_measured = Vec::new();
        if accounting.memory_peak_bytes.is_some() {
            sources.memory = Some(Source::lower_bound(
                Rung::ProcessRusage,
                "the largest resident set of one of its processes (ru_maxrss), not of the tree at once",
            ));
        } else {
            not_measured.push("memory: wait4 gave a largest resident set of 0".to_owned());
        }
        not_measured.extend(NOT_MEASURED.iter().map(|&s| s.to_owned()));
        let outcome = Outcome {
            status: Some(status),
            not_started: None,
            start: Some(self.start),
            wall: exited.duration_since(self.started),
            placement: Some(self.placement),
            exit_to_result: Some(exited.elapsed()),
            accounting: Some(accounting),
            sources,
            not_measured,
            placement_words: format!("its own process group {pid}"),
            messages,
            kernel: String::new(),
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

impl Drop for Step {
    /// A step dropped before its end: its group is killed and its first
    /// process reaped, so nothing of it outlives its handle.
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            let _ = spawn::killpg(child.id(), spawn::SIGKILL);
            let _ = spawn::wait4(child.id());
        }
    }
}

#[allow(clippy::cast_precision_loss)] // far below 2^53 µs
fn micros(value: u64) -> f64 {
    value as f64 / 1e6
}
