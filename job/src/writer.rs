//! One step's lines in a job record: its start, its samples as they are
//! taken, its end.

use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use jiff::Timestamp;
use stepmon_model::RunDocument;
use stepmon_model::brief::StepBrief;
use stepmon_model::job::{LiveSample, Record, SampleRecord, StepEnd, StepStart};
use stepmon_outfile::Appender;

use crate::durability::Durability;
use crate::error::JobError;
use crate::marker::MarkerDirs;
use crate::stop::{Appended, Shared, lock};

/// The record of one step in a job record: its start is appended when it
/// is opened, its samples as they come, its end — the step in brief
/// ([`StepBrief`]) — when [`JobWriter::end`] is called, synced to disk as
/// its [`Durability`] says.
///
/// Appending never stops the step: the first line that cannot be appended
/// whole stops this step's record (nothing more is appended, so at most
/// that line is torn), the writer keeps why ([`JobWriter::stopped`]), and
/// every later append is skipped.
#[derive(Debug)]
pub struct JobWriter {
    file: Appender,
    step: String,
    /// Why appending stopped (a full disk, a short write).
    stopped: Option<JobError>,
    /// This writer's gc marker, removed at the step's end.
    marker: Option<PathBuf>,
    /// What it shares with its [`crate::EventAppender`]s: the record stops
    /// for all of them at the first line one could not append.
    shared: Arc<Mutex<Shared>>,
    /// When its end is synced.
    durability: Durability,
    /// When it was opened: how long the step ran, for [`Durability`].
    opened: Instant,
    /// The step's first sample, held by [`JobWriter::follow`] until a second
    /// comes (then both are appended) or the step ends (then its end holds it).
    held: Option<LiveSample>,
}

/// What [`JobWriter::end`] did, for the caller to say: the record itself
/// cannot.
#[derive(Debug)]
#[non_exhaustive]
#[must_use = "a record that stopped short should be said where it can be read (the run document's warnings)"]
pub struct EndReport {
    /// What became of the end line.
    pub end: Appended,
    /// Why the record stopped short, when it did (the end line's append or
    /// an earlier one): the step has no end in the record, and a report of
    /// it shows it interrupted.
    pub stopped: Option<JobError>,
    /// The end was appended but could not be flushed to disk.
    pub sync: Option<JobError>,
    /// Whether the record was synced to disk (`fdatasync(2)`) after the
    /// end was appended, as the writer's [`Durability`] asked.
    pub synced: bool,
}

impl JobWriter {
    /// Opens (creates) the job record `path` for appending, appends
    /// `start` (see [`crate::start()`]), and leaves a gc marker where
    /// [`MarkerDirs::from_env`] says (where `stepmon gc` looks). Its end is
    /// synced as [`Durability::from_env`] says (`STEPMON_JOB_SYNC`; unset:
    /// [`Durability::LongSteps`]).
    ///
    /// # Errors
    /// [`JobError::Durability`] when `STEPMON_JOB_SYNC` names no
    /// durability; [`JobError::Open`] when the file cannot be opened for
    /// appending; [`JobError::Append`] (or [`JobError::Encode`]) when the
    /// start line cannot be appended whole.
    pub fn open(path: impl AsRef<Path>, start: StepStart) -> Result<JobWriter, JobError> {
        let durability = Durability::from_env()?;
        Ok(JobWriter::open_marked(path, start, &MarkerDirs::from_env())?.with_durability(durability))
    }

    /// [`JobWriter::open`] with the gc marker in the first of `markers`
    /// that takes it (none: [`MarkerDirs::new`] of no directory), its end
    /// synced as [`Durability::default`] says (see
    /// [`JobWriter::with_durability`]).
    ///
    /// # Errors
    /// Those of [`JobWriter::open`] but [`JobError::Durability`].
    pub fn open_marked(path: impl AsRef<Path>, start: StepStart, markers: &MarkerDirs) -> Result<JobWriter, JobError> {
        let path = path.as_ref();
        let file = Appender::open(path).map_err(|source| JobError::Open { path: path.to_owned(), source })?;
        let mut writer = JobWriter {
            file,
            step: start.step.clone(),
            stopped: None,
            marker: None,
            shared: Arc::default(),
            durability: Durability::default(),
            opened: Instant::now(),
            held: None,
        };
        // An action goes by what it builds (`serde 1.0.219 (lib)`), as every
        // view names it, not by its program (`rustc`): `stepmon top` shows it so.
        let name = start.action.as_ref().map_or_else(|| start.name.clone(), ToString::to_string);
        writer.write_line(&Record::StepStart(start))?;
        writer.marker = markers.write(path, &writer.step, &name);
        Ok(writer)
    }

    /// The writer with its end synced as `durability` says.
    #[must_use]
    pub fn with_durability(mut self, durability: Durability) -> JobWriter {
        self.durability = durability;
        self
    }

    /// When its end is synced.
    #[must_use]
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// The step's id in the record ([`StepStart::step`]).
    #[must_use]
    pub fn step(&self) -> &str {
        &self.step
    }

    /// The job record's path, as given.
    #[must_use]
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Why the record stopped (the first line that could not be appended
    /// whole), if it did.
    #[must_use]
    pub fn stopped(&self) -> Option<&JobError> {
        self.stopped.as_ref()
    }

    /// Appends `live` as a sample line of this step, in one `write(2)`.
    pub fn append_sample(&mut self, live: LiveSample) -> Appended {
        let record = SampleRecord::new(self.step.clone(), live.of, live.sample);
        self.append(&Record::Sample(Box::new(record)))
    }

    /// Appends each sample of `samples` as it arrives, on a thread of its
    /// own, until every sender is gone (the runner drops its sender of
    /// `StepOptions::live` when the step's recording ends); the thread
    /// returns the writer, for [`JobWriter::end`]. `on_stop` is called once,
    /// on that thread, with why, when an append stops the record.
    ///
    /// The first sample (the runner's baseline, taken as the step starts)
    /// is held until a second comes, then both are appended: a step that
    /// ends before its second sample — a compiler action of a few
    /// milliseconds — has no sample line, its end holds both. A step
    /// whose stepmon is killed before its second sample keeps its start
    /// line only: one sample, from its first instant, gives no rate.
    ///
    /// # Errors
    /// [`JobError::Thread`] when the thread cannot start; the writer is
    /// dropped then, its step's record ending with its start.
    pub fn follow(
        mut self,
        samples: Receiver<LiveSample>,
        on_stop: impl FnOnce(&JobError) + Send + 'static,
    ) -> Result<JoinHandle<JobWriter>, JobError> {
        let mut on_stop = Some(on_stop);
        let appending = move || {
            let mut samples = samples.into_iter();
            // The first waits for the second.
            let mut held = samples.next();
            for live in samples {
                for live in held.take().into_iter().chain([live]) {
                    if self.append_sample(live) == Appended::Stopped
                        && let (Some(say), Some(why)) = (on_stop.take(), self.stopped.as_ref())
                    {
                        say(why);
                    }
                }
            }
            self.held = held;
            self
        };
        std::thread::Builder::new()
            .name("stepmon-job".into())
            .spawn(appending)
            .map_err(|source| JobError::Thread { source })
    }

    /// Appends the step's end — `exit_code` (the status the step's caller
    /// exits with for it), `error` (why it did not run, when it did not),
    /// the step in brief when it ran ([`StepBrief::of`] its run `document`;
    /// its end time is the end line's) — syncs the file to disk when the
    /// writer's [`Durability`] says so (`fdatasync(2)`: a finished step
    /// survives the machine going away) and removes the gc marker.
    ///
    /// The brief is what the views of a job read of a step, a few KB; the
    /// whole document is the step's own output (`stepmon run --output`).
    /// A document that is no run's (no start or end of its run) is kept
    /// whole. A sample [`JobWriter::follow`] held is appended first when
    /// there is no document to hold it.
    pub fn end(mut self, exit_code: i32, error: Option<String>, document: Option<RunDocument>) -> EndReport {
        // Without a document, nothing else holds it.
        let held = self.held.take().filter(|_| document.is_none());
        let held_stopped = held.is_some_and(|held| self.append_sample(held) == Appended::Stopped);
        let at = document.as_ref().and_then(|d| d.stepmon.as_ref()).and_then(|r| r.end);
        let mut end = StepEnd::new(self.step.clone(), at.unwrap_or_else(Timestamp::now), exit_code);
        end.error = error;
        match document.as_ref().and_then(StepBrief::of) {
            Some(brief) => end.brief = Some(Box::new(brief)),
            None => end.document = document.map(Box::new),
        }
        let appended = match self.append(&Record::StepEnd(end)) {
            // The held sample's append stopped the record: this end's to say.
            Appended::AlreadyStopped if held_stopped => Appended::Stopped,
            appended => appended,
        };
        if let Some(marker) = self.marker.take() {
            let _ = std::fs::remove_file(marker);
        }
        let syncs = appended == Appended::Written && self.durability.syncs(self.opened.elapsed());
        let sync = syncs
            .then(|| self.file.sync().err().map(|source| JobError::Sync { path: self.file.path().to_owned(), source }))
            .flatten();
        EndReport { end: appended, stopped: self.stopped, synced: syncs && sync.is_none(), sync }
    }

    /// Appends the step's events as they happen, from any thread, beside
    /// this writer's lines (see [`crate::EventAppender`]); `on_stop` is
    /// called once, with why, when an event's append stops the record.
    ///
    /// # Errors
    /// [`JobError::OpenExisting`] when the record cannot be opened again.
    pub fn events(&self, on_stop: impl FnOnce(&JobError) + Send + 'static) -> Result<crate::EventAppender, JobError> {
        let path = self.file.path();
        let file =
            Appender::open_existing(path).map_err(|source| JobError::OpenExisting { path: path.to_owned(), source })?;
        Ok(crate::EventAppender::new(file, self.step.clone(), Arc::clone(&self.shared), Box::new(on_stop)))
    }

    /// Appends `record` as one line in one `write(2)`, unless the record
    /// has stopped (here or in an event appender); the first failure stops it.
    fn append(&mut self, record: &Record) -> Appended {
        if self.stopped.is_some() {
            return Appended::AlreadyStopped;
        }
        let shared = Arc::clone(&self.shared);
        let mut shared = lock(&shared);
        if shared.stopped {
            // An event appender stopped it, and said so.
            self.stopped = shared.why.take();
            return Appended::AlreadyStopped;
        }
        match self.write_line(record) {
            Ok(()) => Appended::Written,
            Err(why) => {
                shared.stopped = true;
                self.stopped = Some(why);
                Appended::Stopped
            }
        }
    }

    /// `record` as one line, appended in one `write(2)`.
    fn write_line(&mut self, record: &Record) -> Result<(), JobError> {
        let line =
            crate::line(record).map_err(|source| JobError::Encode { path: self.file.path().to_owned(), source })?;
        self.file.append(&line).map_err(|source| JobError::Append { path: self.file.path().to_owned(), source })
    }
}
