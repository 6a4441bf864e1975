//! The result files of `stepmon run` (`--output`, `--textfile`): each
//! opened before the step runs ([`stepmon_outfile::OutFile`]: an unwritable
//! place fails then, touching nothing), written whole or not at all after
//! it. A write that fails once the step has run is a [`Failed`] output,
//! reported beside the step's status rather than in its place.

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use stepmon_outfile::OutFile;

use crate::error::CliError;

/// A result file of the step, opened before it runs.
#[derive(Debug)]
pub struct Pending {
    /// The path as the user gave it (what messages name).
    path: PathBuf,
    file: OutFile,
}

impl Pending {
    /// Opens the result file `path` (`option` names its option in errors).
    pub fn open(path: &Path, option: &str) -> Result<Pending, CliError> {
        match OutFile::create(path) {
            Ok(file) => Ok(Pending { path: path.to_path_buf(), file }),
            // An output file's hint (its directory, its permissions), not a cgroup's.
            Err(e) => Err(CliError::output(&format!("{option} {}: cannot write there", path.display()), &e)),
        }
    }

    /// The path as the user gave it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `bytes` and puts the file in place; what survived when that
    /// fails.
    pub fn finish(mut self, bytes: &[u8]) -> Result<(), Failed> {
        let kept = if self.file.replaces() { Kept::Earlier } else { Kept::Nothing };
        match self.file.write_all(bytes).and_then(|()| self.file.commit()) {
            Ok(()) => Ok(()),
            Err(e) => Err(Failed { target: Target::File(self.path), reason: e.to_string(), kept }),
        }
    }
}

/// Where a result went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A file, as the user named it.
    File(PathBuf),
    /// Standard output (`-o -`).
    Stdout,
}

/// What is there after a failed write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// The file that was there before the run, byte for byte.
    Earlier,
    /// No file: there was none before and none was created.
    Nothing,
    /// The document written earlier in this run (a rewrite that was to add
    /// the delivery warnings failed).
    ThisRunsFirst,
    /// Whatever reached stdout before the failure.
    PartOfStdout,
}

/// A result that could not be written after the step ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    /// The output.
    pub target: Target,
    /// Why (the operating system's error).
    pub reason: String,
    /// What survived.
    pub kept: Kept,
}

impl Failed {
    /// A failed write to stdout.
    pub fn stdout(error: &CliError) -> Failed {
        Failed { target: Target::Stdout, reason: error.message.clone(), kept: Kept::PartOfStdout }
    }
}

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match &self.target {
            Target::File(path) => path.display().to_string(),
            Target::Stdout => "stdout".to_owned(),
        };
        write!(f, "cannot write {name}: {}; ", self.reason)?;
        match self.kept {
            Kept::Earlier => write!(f, "the earlier {name} is kept as it was"),
            Kept::Nothing => write!(f, "no {name} was created"),
            Kept::ThisRunsFirst => write!(f, "{name} keeps this run's document without the warnings"),
            Kept::PartOfStdout => write!(f, "stdout may hold part of the report"),
        }
    }
}

/// The error line of `failed` after a step that exited with `status`:
/// what failed, what survived, where the step's numbers are, and the exit
/// status that follows (`strict`: `--strict-output`'s).
pub fn error_line(failed: &Failed, summary_shown: bool, status: i32, strict: bool) -> String {
    let summary = if summary_shown { "; the step's numbers are in the summary above" } else { "" };
    let exit = if strict {
        format!("exit status {} (--strict-output; the step's was {status})", crate::error::INTERNAL_ERROR)
    } else {
        format!("exit status {status}, the step's own (--strict-output makes it {})", crate::error::INTERNAL_ERROR)
    };
    format!("stepmon: error: {failed}{summary}; {exit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_line_names_the_file_the_reason_and_what_survived() {
        let failed = Failed {
            target: Target::File(PathBuf::from("out/run.json")),
            reason: "No space left on device (os error 28)".to_owned(),
            kept: Kept::Earlier,
        };
        assert_eq!(
            error_line(&failed, true, 3, false),
            "stepmon: error: cannot write out/run.json: No space left on device (os error 28); the earlier \
             out/run.json is kept as it was; the step's numbers are in the summary above; exit status 3, the \
             step's own (--strict-output makes it 125)"
        );
        let none = Failed { kept: Kept::Nothing, ..failed };
        assert_eq!(
            error_line(&none, false, 0, true),
            "stepmon: error: cannot write out/run.json: No space left on device (os error 28); no out/run.json \
             was created; exit status 125 (--strict-output; the step's was 0)"
        );
    }

    #[test]
    fn a_directory_or_a_missing_one_is_refused_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let e = Pending::open(dir.path(), "--output").unwrap_err();
        assert!(e.message.starts_with("--output ") && e.message.contains("cannot write there"), "{}", e.message);
        assert!(Pending::open(&dir.path().join("missing/out.json"), "--output").is_err());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
