//! The markers that let `stepmon gc` close the record of a step whose
//! writer was killed.
//!
//! While a step runs, its writer keeps a small file, named after the
//! writer's process (PID and start time), saying which job record its step
//! is in. A writer that reaches its step's end removes it. One killed
//! (SIGKILL, the machine's OOM killer, a CI runner's timeout) cannot: its
//! step stays without an end, and its run directories are left for `stepmon
//! gc`. Once the process is gone, [`mark_orphans`] appends a
//! `stepCollected` line for the step to the record, so that the report says
//! who cleaned up after it, and removes the marker. Best effort: without a
//! marker the step is still reported as interrupted, only not as collected.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use stepmon_model::job::{Record, StepCollected};
use stepmon_outfile::Appender;

use crate::error::JobError;
#[cfg(target_os = "linux")]
use stepmon_sysusage::probe::start_ticks as start_time;

/// Off Linux no process's start time is known: no markers.
#[cfg(not(target_os = "linux"))]
fn start_time(_pid: u32) -> Option<u64> {
    None
}

/// Writes `bytes` as the file `path`, whole or not at all for its readers:
/// into a file of its own beside it (`.NAME.tmp`, which no reader takes for
/// a marker), renamed over it. Not synced to disk: a marker tells of a
/// process that runs now, which a machine going away ends too (and where
/// `/run` is a tmpfs, as it mostly is, a sync writes nothing), and what it
/// must outlive, its writer's kill, leaves every finished `write(2)` in
/// place. Syncing the file and its directory, as a result file is, cost a
/// step 20 to 40 ms where `/run` is on the disk a build was writing to.
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let name = path.file_name().map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
    let temporary = path.with_file_name(format!(".{name}.tmp"));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options
        .open(&temporary)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// What a marker says: the job record and the step in it, and the step's
/// name (absent in an older stepmon's markers).
#[derive(Debug, Serialize, Deserialize)]
struct Marker {
    job: PathBuf,
    step: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
}

/// The marker of a step whose writer still runs ([`MarkerDirs::running`]):
/// which job record a running step is in, for `stepmon top`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunningMarker {
    /// The writer's PID ...
    pub pid: u32,
    /// ... and start time (clock ticks since boot): the owner of the run
    /// directories of its step, as `stepmon-runner` names them
    /// (`stepmon-run.<pid>.<start>[.<n>]`).
    pub start: u64,
    /// The number of the writer in its process (0 for the first), as the
    /// `.<n>` of a run directory numbers the steps of one process.
    pub n: u64,
    /// The job record (its canonical path).
    pub job: PathBuf,
    /// The step's id in it.
    pub step: String,
    /// The step's name, where the marker has it.
    pub name: Option<String>,
}

/// The directories markers go in, first choice first: a writer keeps its
/// marker in the first it can create, [`MarkerDirs::mark_orphans`] looks
/// in all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkerDirs {
    dirs: Vec<PathBuf>,
}

impl MarkerDirs {
    /// Where `stepmon run` keeps its markers and `stepmon gc` looks for
    /// them: `$STEPMON_STATE_DIR/jobs`, `/run/stepmon/jobs`,
    /// `$XDG_RUNTIME_DIR/stepmon/jobs`, the temporary directory's
    /// `stepmon-jobs` — whichever this user can create first (root: `/run`,
    /// a tmpfs emptied at boot, when no markers can be left over).
    #[must_use]
    pub fn from_env() -> MarkerDirs {
        let mut dirs = Vec::new();
        if let Some(dir) = std::env::var_os("STEPMON_STATE_DIR") {
            dirs.push(PathBuf::from(dir).join("jobs"));
        }
        dirs.push(PathBuf::from("/run/stepmon/jobs"));
        if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR") {
            dirs.push(PathBuf::from(dir).join("stepmon/jobs"));
        }
        dirs.push(std::env::temp_dir().join("stepmon-jobs"));
        MarkerDirs { dirs }
    }

    /// These directories, first choice first. Markers kept elsewhere than
    /// [`MarkerDirs::from_env`]'s are found only by a caller that looks
    /// there too (`stepmon gc` looks where `STEPMON_STATE_DIR` says).
    #[must_use]
    pub fn new(dirs: Vec<PathBuf>) -> MarkerDirs {
        MarkerDirs { dirs }
    }

    /// The directories, first choice first.
    #[must_use]
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Says, in a new marker named after this process, that its step
    /// `step` (named `name`) is in the job record `job`; its path, or
    /// `None` when no directory would take it (best effort, see the
    /// module's docs).
    pub(crate) fn write(&self, job: &Path, step: &str, name: &str) -> Option<PathBuf> {
        let pid = std::process::id();
        let file = marker_name(pid, start_time(pid)?);
        let job = std::fs::canonicalize(job).ok()?;
        let text = serde_json::to_vec(&Marker { job, step: step.to_owned(), name: Some(name.to_owned()) }).ok()?;
        self.dirs.iter().find_map(|dir| {
            std::fs::create_dir_all(dir).ok()?;
            let path = dir.join(&file);
            // Whole or not at all: it is read when this process is gone.
            write_whole(&path, &text).ok()?;
            Some(path)
        })
    }

    /// The markers of writers that still run: the steps of job records
    /// running now, each with its writer's identity. Unreadable markers
    /// are left out (and left alone).
    #[must_use]
    pub fn running(&self) -> Vec<RunningMarker> {
        let mut out = Vec::new();
        for dir in &self.dirs {
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            for entry in entries.filter_map(Result::ok) {
                let file = entry.file_name();
                let Some((pid, start, n)) = file.to_str().and_then(writer_of) else { continue };
                if start_time(pid) != Some(start) {
                    continue;
                }
                let Ok(text) = std::fs::read(entry.path()) else { continue };
                let Ok(Marker { job, step, name }) = serde_json::from_slice(&text) else { continue };
                out.push(RunningMarker { pid, start, n, job, step, name });
            }
        }
        out
    }

    /// For each marker whose writer is gone (killed: it never reached its
    /// step's end), appends a `stepCollected` line for its step to its job
    /// record and removes the marker ([`mark_collected`]). Markers of
    /// writers that still run are left alone, as is every file not named
    /// as a marker.
    #[must_use]
    pub fn mark_orphans(&self) -> Vec<Result<Collected, JobError>> {
        let mut out = Vec::new();
        for dir in &self.dirs {
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            for entry in entries.filter_map(Result::ok) {
                let Some((pid, start)) = entry.file_name().to_str().and_then(owner_of) else { continue };
                // Its writer still runs (the same PID with the same start).
                if start_time(pid) == Some(start) {
                    continue;
                }
                out.push(mark_collected(&entry.path()));
            }
        }
        out
    }
}

/// [`MarkerDirs::mark_orphans`] where [`MarkerDirs::from_env`] says: what
/// `stepmon gc` does once it has removed the run directories of dead runs.
#[must_use]
pub fn mark_orphans() -> Vec<Result<Collected, JobError>> {
    MarkerDirs::from_env().mark_orphans()
}

/// A step marked as collected in its job record.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Collected {
    /// The job record.
    pub job: PathBuf,
    /// The step's id in it.
    pub step: String,
}

impl fmt::Display for Collected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "marked step {} of {} as collected", self.step, self.job.display())
    }
}

/// Appends the `stepCollected` line of `marker`'s step to the job record it
/// names (`by` "stepmon gc", at now), and removes the marker — also when
/// that fails, as the marker cannot be used again.
///
/// # Errors
/// The marker cannot be read or is none ([`JobError::ReadMarker`],
/// [`JobError::NotAMarker`]); its job record cannot be opened
/// ([`JobError::OpenExisting`]: it is never created anew) or appended to.
pub fn mark_collected(marker: &Path) -> Result<Collected, JobError> {
    let result = collect(marker);
    let _ = std::fs::remove_file(marker);
    result
}

fn collect(marker: &Path) -> Result<Collected, JobError> {
    let text = std::fs::read(marker).map_err(|source| JobError::ReadMarker { marker: marker.to_owned(), source })?;
    let Marker { job, step, .. } =
        serde_json::from_slice(&text).map_err(|source| JobError::NotAMarker { marker: marker.to_owned(), source })?;
    let record =
        Record::StepCollected(StepCollected::new(step.clone(), jiff::Timestamp::now(), "stepmon gc".to_owned()));
    let line = crate::line(&record).map_err(|source| JobError::Encode { path: job.clone(), source })?;
    let mut file =
        Appender::open_existing(&job).map_err(|source| JobError::OpenExisting { path: job.clone(), source })?;
    file.append(&line).map_err(|source| JobError::Append { path: job.clone(), source })?;
    Ok(Collected { job, step })
}

/// The writers this process has had markers for: the n-th after the first
/// gets a name of its own, as steps a builder runs at once each have one.
static MARKERS: AtomicU64 = AtomicU64::new(0);

/// A new marker's name: the owner of this process's run directories, as
/// stepmon-runner names them (`stepmon-run.<pid>.<start>[.<n>]`):
/// `<pid>.<start>.json` for the first, `<pid>.<start>.<n>.json` after it.
fn marker_name(pid: u32, start: u64) -> String {
    match MARKERS.fetch_add(1, Ordering::Relaxed) {
        0 => format!("{pid}.{start}.json"),
        n => format!("{pid}.{start}.{n}.json"),
    }
}

/// The writer (PID, start time) a marker's file name names; `None` for
/// any other name.
fn owner_of(name: &str) -> Option<(u32, u64)> {
    writer_of(name).map(|(pid, start, _)| (pid, start))
}

/// The writer (PID, start time, its number in its process) a marker's file
/// name names; `None` for any other name.
fn writer_of(name: &str) -> Option<(u32, u64, u64)> {
    let mut fields = name.strip_suffix(".json")?.split('.');
    let (pid, start) = (fields.next()?, fields.next()?);
    let n = match fields.next() {
        Some(n) => n.parse().ok()?,
        None => 0,
    };
    if fields.next().is_some() {
        return None;
    }
    Some((pid.parse().ok()?, start.parse().ok()?, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_names_name_their_writer() {
        assert_eq!(owner_of("41.1234.json"), Some((41, 1234)));
        assert_eq!(owner_of("41.1234.3.json"), Some((41, 1234)));
        for other in ["41.1234", "41.json", "41.x.json", "41.1234.x.json", "41.1234.3.4.json", ".json", "a.b.json"] {
            assert_eq!(owner_of(other), None, "{other}");
        }
        let pid = std::process::id();
        let (first, second) = (marker_name(pid, 7), marker_name(pid, 7));
        assert_ne!(first, second, "two writers of one process, two markers");
        assert_eq!((owner_of(&first), owner_of(&second)), (Some((pid, 7)), Some((pid, 7))));
    }

    /// A job record holding the start of `step`, in `dir`.
    #[cfg(target_os = "linux")]
    fn record_with_start(dir: &Path, step: u32) -> (PathBuf, String) {
        let path = dir.join("job.jsonl");
        let start = stepmon_model::job::StepStart::new(step, jiff::Timestamp::now(), "s".into(), vec!["s".into()]);
        let mut file = Appender::open(&path).unwrap();
        file.append(&crate::line(&Record::StepStart(start.clone())).unwrap()).unwrap();
        (path, start.step)
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_live_writers_marker_is_left_a_dead_ones_marked_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let markers = MarkerDirs::new(vec![dir.path().join("none/yet"), dir.path().join("markers")]);
        let (job, step) = record_with_start(dir.path(), 1);
        // The first directory is taken: it is created.
        let live = markers.write(&job, &step, "s").unwrap();
        let running = markers.running();
        let [one] = running.as_slice() else { panic!("{running:?}") };
        assert_eq!((one.pid, one.step.as_str(), one.name.as_deref()), (std::process::id(), step.as_str(), Some("s")));
        assert_eq!(one.job, job.canonicalize().unwrap());
        assert!(live.starts_with(dir.path().join("none/yet")), "{}", live.display());
        // A dead writer's marker: this PID with another start time (its
        // PID reused since).
        let pid = std::process::id();
        let own = start_time(pid).unwrap();
        let dead = dir.path().join("none/yet").join(format!("{pid}.{}.json", own + 1));
        std::fs::copy(&live, &dead).unwrap();
        let other = dir.path().join("none/yet/notes.txt");
        std::fs::write(&other, "not a marker's name").unwrap();

        let done = markers.mark_orphans();
        assert_eq!(done.len(), 1, "{done:?}");
        let collected = done.into_iter().next().unwrap().unwrap();
        assert_eq!(
            (collected.step.as_str(), collected.job.as_path()),
            (step.as_str(), job.canonicalize().unwrap().as_path())
        );
        assert_eq!(collected.to_string(), format!("marked step {step} of {} as collected", collected.job.display()));
        assert!(!dead.exists() && live.exists() && other.exists());
        let text = std::fs::read_to_string(&job).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        let Record::StepCollected(line) = serde_json::from_str(lines[1]).unwrap() else { panic!("{}", lines[1]) };
        assert_eq!((line.step.as_str(), line.by.as_str()), (step.as_str(), "stepmon gc"));
        // Nothing more to do.
        assert!(markers.mark_orphans().is_empty());
    }

    #[test]
    fn a_marker_that_cannot_be_used_is_said_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("1.2.json");
        std::fs::write(&junk, "{\"job\":").unwrap();
        let e = mark_collected(&junk).unwrap_err();
        assert!(matches!(e, JobError::NotAMarker { .. }), "{e}");
        assert!(!junk.exists());

        let gone = dir.path().join("3.4.json");
        let text = serde_json::to_vec(&Marker { job: dir.path().join("moved.jsonl"), step: "9.9".into(), name: None })
            .unwrap();
        std::fs::write(&gone, text).unwrap();
        let e = mark_collected(&gone).unwrap_err();
        assert!(matches!(&e, JobError::OpenExisting { .. }), "{e}");
        assert_eq!(e.io_error().map(std::io::Error::kind), Some(std::io::ErrorKind::NotFound));
        assert!(!dir.path().join("moved.jsonl").exists(), "a job record is never created by gc");
        assert!(!gone.exists());

        let e = mark_collected(&dir.path().join("5.6.json")).unwrap_err();
        assert!(matches!(e, JobError::ReadMarker { .. }), "{e}");
    }
}
