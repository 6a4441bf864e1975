//! `stepmon run --job FILE`: the step's lines appended to the job's record
//! as the step runs ([`stepmon_report::job`] has the format and the reader).
//!
//! What the record relies on: the file is opened with `O_APPEND` and each
//! line is written whole with one `write(2)`. On Linux local filesystems
//! (ext4, xfs, btrfs, tmpfs) a write to a regular file holds the inode's
//! lock while it moves the offset to the end and copies the bytes, so lines
//! of concurrent writers (the steps of one job running at once) never
//! interleave, whatever their length — PIPE_BUF is a limit of pipes, not of
//! regular files. NFS and other network filesystems make no such promise.
//! A write reaches the page cache before `write(2)` returns, so a SIGKILL of
//! stepmon loses nothing written; a line is torn only when the disk fills
//! (or the host dies) mid-write, and the reader names that line as lost.
//! The step's end is also `fdatasync`ed: a finished step survives the
//! machine going away, its live samples may not.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::thread::JoinHandle;

use stepmon_report::job::{Record, SampleOf, SampleRecord, StepEnd, StepStart};
use stepmon_runner::LiveSample;

use crate::error::CliError;

/// The job record of one step: its start is written when opened.
#[derive(Debug)]
pub struct JobWriter {
    file: File,
    path: PathBuf,
    step: String,
    /// Why appending stopped (a full disk, a short write): the step goes on,
    /// unrecorded from then on.
    stopped: Option<String>,
}

impl JobWriter {
    /// Opens (creating) `path` for appending and writes `start`.
    pub fn open(path: &Path, start: StepStart) -> Result<JobWriter, CliError> {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| CliError::io(&format!("cannot open the job record {}", path.display()), &e))?;
        let mut writer = JobWriter { file, path: path.to_path_buf(), step: start.step.clone(), stopped: None };
        writer.append(&Record::StepStart(start));
        match writer.stopped.take() {
            Some(why) => Err(CliError::new(why)),
            None => Ok(writer),
        }
    }

    /// Appends `record` as one line in one `write(2)`; a failure stops the
    /// record (said once on stderr), never the step.
    fn append(&mut self, record: &Record) {
        if self.stopped.is_some() {
            return;
        }
        let mut line = match serde_json::to_vec(record) {
            Ok(line) => line,
            Err(e) => return self.stop(format!("JSON: {e}")),
        };
        line.push(b'\n');
        // One call, never a retry of the rest: a second write could land
        // after another step's line.
        match self.file.write(&line) {
            Ok(n) if n == line.len() => {}
            Ok(n) => self.stop(format!("short write ({n} of {} bytes; is the disk full?)", line.len())),
            Err(e) => self.stop(e.to_string()),
        }
    }

    fn stop(&mut self, why: String) {
        let why = format!(
            "cannot append to the job record {}: {why}; the step goes on, its record ends here",
            self.path.display()
        );
        eprintln!("stepmon: warning: {why}");
        self.stopped = Some(why);
    }

    /// Appends each sample of `samples` as it arrives, on a thread of its
    /// own, until every sender is gone; the thread returns the writer.
    pub fn follow(mut self, samples: Receiver<LiveSample>) -> std::io::Result<JoinHandle<JobWriter>> {
        std::thread::Builder::new().name("stepmon-job".into()).spawn(move || {
            for live in samples {
                let of = match live.of {
                    stepmon_runner::SampleOf::Enclosing => SampleOf::Enclosing,
                    _ => SampleOf::Step,
                };
                let record = SampleRecord::new(self.step.clone(), of, live.sample);
                self.append(&Record::Sample(Box::new(record)));
            }
            self
        })
    }

    /// Appends the step's end and syncs the file.
    pub fn end(mut self, exit_code: i32, error: Option<String>, document: Option<stepmon_report::RunDocument>) {
        let at = document.as_ref().and_then(|d| d.stepmon.as_ref()).and_then(|r| r.end);
        let mut end = StepEnd::new(self.step.clone(), at.unwrap_or_else(jiff::Timestamp::now), exit_code);
        end.error = error;
        end.document = document.map(Box::new);
        self.append(&Record::StepEnd(end));
        if self.stopped.is_none()
            && let Err(e) = self.file.sync_data()
        {
            eprintln!("stepmon: warning: cannot sync the job record {}: {e}", self.path.display());
        }
    }
}

/// The start line of the step `command` named `name`.
pub fn start(name: Option<&str>, labels: &[stepmon_report::Label], command: &[String]) -> StepStart {
    let name = name.map_or_else(|| stepmon_report::labels::default_name(command), str::to_owned);
    let mut start = StepStart::new(std::process::id(), jiff::Timestamp::now(), name, command.to_vec());
    start.labels = labels.to_vec();
    // The host's name as the kernel has it (uname's nodename).
    start.host = std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_owned()).unwrap_or_default();
    start
}
