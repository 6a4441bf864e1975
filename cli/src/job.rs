//! `stepmon run --job FILE`: the step's lines appended to the job's record
//! as the step runs. The lines are `stepmon_report::job::line`'s, appended
//! whole by `stepmon_outfile::Appender` (whose docs say what concurrent
//! steps of one job rely on); the reader is `stepmon_report::job::read`. A
//! builder that runs steps through the libraries writes the same record
//! the same way. The step's end is also `fdatasync`ed: a finished step
//! survives the machine going away, its live samples may not.

use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::thread::JoinHandle;

use serde::{Deserialize, Serialize};
use stepmon_outfile::Appender;
use stepmon_report::job::{self, Record, SampleRecord, StepCollected, StepEnd, StepStart};
use stepmon_runner::LiveSample;

use crate::error::CliError;

/// The job record of one step: its start is written when opened.
#[derive(Debug)]
pub struct JobWriter {
    file: Appender,
    step: String,
    /// Why appending stopped (a full disk, a short write): the step goes on,
    /// unrecorded from then on.
    stopped: Option<String>,
    /// Where this stepmon said which job record its step is in, for `stepmon
    /// gc` should it be killed ([`mark_collected`]); removed at the end.
    marker: Option<PathBuf>,
}

impl JobWriter {
    /// Opens (creating) `path` for appending and writes `start`.
    pub fn open(path: &Path, start: StepStart) -> Result<JobWriter, CliError> {
        let file = Appender::open(path)
            .map_err(|e| CliError::output(&format!("cannot open the job record {}", path.display()), &e))?;
        let step = start.step.clone();
        let mut writer = JobWriter { file, step: step.clone(), stopped: None, marker: None };
        writer.append(&Record::StepStart(start));
        writer.marker = write_marker(path, &step);
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
        let result = match job::line(record) {
            Ok(line) => self.file.append(&line).map_err(|e| e.to_string()),
            Err(e) => Err(format!("JSON: {e}")),
        };
        if let Err(why) = result {
            self.stop(why);
        }
    }

    fn stop(&mut self, why: String) {
        let why = format!(
            "cannot append to the job record {}: {why}; the step goes on, its record ends here",
            self.file.path().display()
        );
        eprintln!("stepmon: warning: {why}");
        self.stopped = Some(why);
    }

    /// Appends each sample of `samples` as it arrives, on a thread of its
    /// own, until every sender is gone; the thread returns the writer.
    pub fn follow(mut self, samples: Receiver<LiveSample>) -> std::io::Result<JoinHandle<JobWriter>> {
        std::thread::Builder::new().name("stepmon-job".into()).spawn(move || {
            for live in samples {
                let record = SampleRecord::new(self.step.clone(), live.of, live.sample);
                self.append(&Record::Sample(Box::new(record)));
            }
            self
        })
    }

    /// Appends the step's end and syncs the file; returns why the record
    /// stopped short (a short write on a full disk, …), if it did, for the
    /// run document's warnings: the record itself cannot say it then.
    pub fn end(
        mut self,
        exit_code: i32,
        error: Option<String>,
        document: Option<stepmon_report::RunDocument>,
    ) -> Option<String> {
        let at = document.as_ref().and_then(|d| d.stepmon.as_ref()).and_then(|r| r.end);
        let mut end = StepEnd::new(self.step.clone(), at.unwrap_or_else(jiff::Timestamp::now), exit_code);
        end.error = error;
        end.document = document.map(Box::new);
        self.append(&Record::StepEnd(end));
        if let Some(marker) = self.marker.take() {
            let _ = std::fs::remove_file(marker);
        }
        if self.stopped.is_none()
            && let Err(e) = self.file.sync()
        {
            eprintln!("stepmon: warning: cannot sync the job record {}: {e}", self.file.path().display());
        }
        self.stopped
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

/// What a marker says: the job record and the step in it.
#[derive(Debug, Serialize, Deserialize)]
struct Marker {
    job: PathBuf,
    step: String,
}

/// Where markers go: `$STEPMON_STATE_DIR`, else `/run/stepmon/jobs`, else
/// `$XDG_RUNTIME_DIR/stepmon/jobs`, else the temporary directory's
/// `stepmon-jobs` — the first this stepmon can create. `stepmon gc` looks
/// in all of them.
fn marker_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(dir) = std::env::var_os("STEPMON_STATE_DIR") {
        dirs.push(PathBuf::from(dir).join("jobs"));
    }
    dirs.push(PathBuf::from("/run/stepmon/jobs"));
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR") {
        dirs.push(PathBuf::from(dir).join("stepmon/jobs"));
    }
    dirs.push(std::env::temp_dir().join("stepmon-jobs"));
    dirs
}

/// A marker's name: the owner of this process's run directories (pid and
/// start time, as [`stepmon_runner::cgroup::placement::owner_of`] reads
/// them off a run directory's name).
fn marker_name(pid: u32, start: u64) -> String {
    format!("{pid}.{start}.json")
}

/// Says, in a marker named after this stepmon, that its step is `step` of
/// the job record `job`: when stepmon is killed, `stepmon gc` finds the run
/// directory it left, and by its name the marker, and marks the step in the
/// record as collected. Best effort: without a marker the step is still
/// reported as interrupted, only not as collected.
fn write_marker(job: &Path, step: &str) -> Option<PathBuf> {
    let pid = std::process::id();
    let start = stepmon_runner::cgroup::placement::start_time(pid)?;
    let job = std::fs::canonicalize(job).ok()?;
    let text = serde_json::to_vec(&Marker { job, step: step.to_owned() }).ok()?;
    marker_dirs().into_iter().find_map(|dir| {
        std::fs::create_dir_all(&dir).ok()?;
        let path = dir.join(marker_name(pid, start));
        // Whole or not at all: `stepmon gc` reads it when this stepmon is gone.
        stepmon_outfile::write(&path, &text).ok()?;
        Some(path)
    })
}

/// For each marker whose stepmon is gone (killed: it never reached its
/// step's end), once its run directories are collected: appends a
/// `stepCollected` line for its step to its job record and removes the
/// marker. Returns what it did, for the user.
pub fn mark_orphans() -> Vec<Result<String, String>> {
    let mut out = Vec::new();
    for dir in marker_dirs() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name();
            let Some((pid, start)) = name.to_str().and_then(|n| {
                let (pid, start) = n.strip_suffix(".json")?.split_once('.')?;
                Some((pid.parse::<u32>().ok()?, start.parse::<u64>().ok()?))
            }) else {
                continue;
            };
            // Its stepmon still runs (the same pid with the same start time).
            if stepmon_runner::cgroup::placement::start_time(pid) == Some(start) {
                continue;
            }
            out.push(mark_collected(&entry.path()));
        }
    }
    out
}

/// Appends the `stepCollected` line of `marker`'s step and removes it.
fn mark_collected(marker: &Path) -> Result<String, String> {
    let result = (|| {
        let text = std::fs::read(marker).map_err(|e| format!("cannot read {}: {e}", marker.display()))?;
        let Marker { job: path, step } =
            serde_json::from_slice(&text).map_err(|e| format!("{}: not a marker: {e}", marker.display()))?;
        let record =
            Record::StepCollected(StepCollected::new(step.clone(), jiff::Timestamp::now(), "stepmon gc".into()));
        let line = job::line(&record).map_err(|e| format!("JSON: {e}"))?;
        let mut file = Appender::open_existing(&path)
            .map_err(|e| format!("cannot open the job record {}: {e}", path.display()))?;
        file.append(&line).map_err(|e| format!("cannot append to {}: {e}", path.display()))?;
        Ok(format!("marked step {step} of {} as collected", path.display()))
    })();
    let _ = std::fs::remove_file(marker);
    result
}
