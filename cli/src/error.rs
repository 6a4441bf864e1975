//! One-line errors with a hint; never a backtrace.
//!
//! A hint is chosen by what failed ([`Hint`]), not by the error's words:
//! an output file that cannot be written gets an output file's hint, a
//! cgroup that cannot be created a cgroup's. It is put in words only when
//! the error is printed. A runner's error is matched by its kind
//! ([`stepmon_runner::RunErrorKind`]): the library names no flag, so the
//! hints and exit statuses that do are chosen here.

use std::error::Error as _;
use std::fmt;
use std::io::ErrorKind;

use stepmon_runner::{RunError, RunErrorKind};

/// Exit status of stepmon when it fails itself (not the step), as `env` and
/// container runners use.
pub const INTERNAL_ERROR: i32 = 125;

/// The exit status for a runner's error before the step ran, as shells give
/// it for a command that cannot run: 127 not found, 126 not executable,
/// else [`INTERNAL_ERROR`].
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub fn exit_code_of(error: &RunError) -> i32 {
    match error.kind() {
        RunErrorKind::NotFound => 127,
        RunErrorKind::PermissionDenied => 126,
        _ => INTERNAL_ERROR,
    }
}

/// What the user can do about an error, by what failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hint {
    /// Creating or writing a cgroup was refused: root, or a delegated subtree.
    // Cgroups are Linux's: elsewhere nothing makes this hint.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    CgroupAccess,
    /// A cgroup of the step's own was required (`--require-cgroup`) and
    /// none could be made.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    CgroupRequired,
    /// Creating or joining a network namespace was refused.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    NamespaceAccess,
    /// A file stepmon writes (`--output`, `--job`, ...) could not be
    /// created or written, for this reason.
    OutputFile(FileProblem),
    /// A file stepmon reads could not be read, for this reason.
    InputFile(FileProblem),
    /// A hint already in words (from the runner, or for one command).
    Text(String),
}

/// Why a file could not be opened, as far as it changes what to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileProblem {
    /// EACCES / EPERM: this user may not.
    Permission,
    /// ENOENT: a directory on the way is missing (for a file to create).
    NoDirectory,
    /// EROFS: the file system is read-only.
    ReadOnly,
    /// EISDIR: the path names a directory.
    Directory,
}

impl FileProblem {
    /// The problem of `error`, when it is one a hint can help with.
    fn of(error: &std::io::Error) -> Option<FileProblem> {
        match error.kind() {
            ErrorKind::PermissionDenied => Some(FileProblem::Permission),
            ErrorKind::NotFound => Some(FileProblem::NoDirectory),
            ErrorKind::ReadOnlyFilesystem => Some(FileProblem::ReadOnly),
            ErrorKind::IsADirectory => Some(FileProblem::Directory),
            _ => None,
        }
    }
}

impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Hint::CgroupAccess => {
                write!(f, "creating cgroups needs root, or a delegated subtree: {}", stepmon_runner::DELEGATED_RUN)
            }
            Hint::CgroupRequired => {
                f.write_str("a cgroup of the step's own needs root or a delegated subtree, and a writable cgroupfs")
            }
            Hint::NamespaceAccess => f.write_str(
                "a network namespace for the step needs root (CAP_SYS_ADMIN); without one, run with --net host",
            ),
            Hint::OutputFile(FileProblem::Permission) => f.write_str(
                "stepmon's user may not write there: give a path in a directory it can write, or `-` for stdout",
            ),
            Hint::OutputFile(FileProblem::NoDirectory) => {
                f.write_str("its directory does not exist: create it first (stepmon does not create directories)")
            }
            Hint::OutputFile(FileProblem::ReadOnly) | Hint::InputFile(FileProblem::ReadOnly) => {
                f.write_str("that file system is mounted read-only: give a path on a writable one, or `-` for stdout")
            }
            Hint::OutputFile(FileProblem::Directory) | Hint::InputFile(FileProblem::Directory) => {
                f.write_str("that is a directory: give a file name in it")
            }
            Hint::InputFile(FileProblem::Permission) => {
                f.write_str("stepmon's user may not read it: check its permissions, or copy it somewhere readable")
            }
            Hint::InputFile(FileProblem::NoDirectory) => f.write_str("check the path"),
            Hint::Text(text) => f.write_str(text),
        }
    }
}

/// A failure of stepmon itself (not of the step).
#[derive(Debug)]
pub struct CliError {
    /// What went wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<Hint>,
}

impl CliError {
    /// An error without a hint.
    pub fn new(message: impl Into<String>) -> Self {
        CliError { message: message.into(), hint: None }
    }

    /// Adds a hint in words.
    #[must_use]
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(Hint::Text(hint.into()));
        self
    }

    /// An I/O error on `what` (a stream, a thread, a directory listing):
    /// no hint, since none fits every such error.
    pub fn io(what: &str, error: &std::io::Error) -> Self {
        CliError::new(format!("{what}: {error}"))
    }

    /// An error creating or writing an output file (`what` names it), with
    /// an output file's hint when one helps.
    pub fn output(what: &str, error: &std::io::Error) -> Self {
        CliError { message: format!("{what}: {error}"), hint: FileProblem::of(error).map(Hint::OutputFile) }
    }

    /// An error reading an input file (`what` names it), with an input
    /// file's hint when one helps (a missing file needs none).
    pub fn input(what: &str, error: &std::io::Error) -> Self {
        let hint = FileProblem::of(error).filter(|p| *p != FileProblem::NoDirectory).map(Hint::InputFile);
        CliError { message: format!("{what}: {error}"), hint }
    }

    /// An error creating, writing or removing a cgroup (`what` names it),
    /// with the delegation hint when it was refused.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub fn cgroup(what: &str, error: &std::io::Error) -> Self {
        let refused = matches!(error.kind(), ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem);
        CliError { message: format!("{what}: {error}"), hint: refused.then_some(Hint::CgroupAccess) }
    }
}

impl From<RunError> for CliError {
    /// What failed and why on one line, and the hint for its kind: the
    /// delegation hint for a refused cgroup, root for a refused namespace.
    fn from(error: RunError) -> Self {
        let refused = error
            .io_error()
            .is_some_and(|e| matches!(e.kind(), ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem));
        let message = match (error.kind(), error.source()) {
            // Why no cgroup could be made, and the flag that required one.
            (RunErrorKind::NoCgroup, Some(why)) => format!("{why} (--require-cgroup)"),
            (_, Some(why)) => format!("{error}: {why}"),
            (_, None) => error.to_string(),
        };
        let hint = match error.kind() {
            RunErrorKind::Placement if refused => Some(Hint::CgroupAccess),
            RunErrorKind::Namespace if refused => Some(Hint::NamespaceAccess),
            RunErrorKind::NoCgroup => Some(Hint::CgroupRequired),
            _ => None,
        };
        CliError { message, hint }
    }
}

impl From<stepmon_job::JobError> for CliError {
    /// A job record that cannot be opened or written is an output file: its
    /// hint, when one helps.
    fn from(error: stepmon_job::JobError) -> Self {
        let hint = match &error {
            stepmon_job::JobError::Thread { .. } => None,
            _ => error.io_error().and_then(FileProblem::of).map(Hint::OutputFile),
        };
        CliError { message: error.to_string(), hint }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stepmon: error: {}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    fn error(kind: ErrorKind) -> std::io::Error {
        std::io::Error::from(kind)
    }

    fn shown(e: &CliError) -> String {
        e.hint.as_ref().map(ToString::to_string).unwrap_or_default()
    }

    #[test]
    fn an_output_file_gets_an_output_files_hint() {
        let denied = CliError::output("cannot create /not/writable/x.json", &error(ErrorKind::PermissionDenied));
        assert_eq!(denied.hint, Some(Hint::OutputFile(FileProblem::Permission)));
        assert!(!shown(&denied).contains("cgroup"), "{}", shown(&denied));
        assert!(shown(&denied).contains("may not write there"), "{}", shown(&denied));
        let missing = CliError::output("cannot create /nowhere/x.json", &error(ErrorKind::NotFound));
        assert!(shown(&missing).contains("directory does not exist"), "{}", shown(&missing));
        let read_only = CliError::output("cannot write /x", &error(ErrorKind::ReadOnlyFilesystem));
        assert!(shown(&read_only).contains("read-only"));
        // Nothing a hint helps with: none.
        assert_eq!(CliError::output("cannot write /x", &error(ErrorKind::StorageFull)).hint, None);
    }

    #[test]
    fn an_input_file_gets_an_input_files_hint_a_missing_one_none() {
        let denied = CliError::input("cannot read /root/run.json", &error(ErrorKind::PermissionDenied));
        assert!(shown(&denied).contains("may not read it"), "{}", shown(&denied));
        assert!(!shown(&denied).contains("cgroup"));
        assert_eq!(CliError::input("cannot read x.json", &error(ErrorKind::NotFound)).hint, None);
    }

    #[test]
    fn only_a_refused_cgroup_gets_the_delegation_hint() {
        let refused = CliError::cgroup("cannot open /sys/fs/cgroup/x", &error(ErrorKind::PermissionDenied));
        assert_eq!(refused.hint, Some(Hint::CgroupAccess));
        assert!(shown(&refused).contains("delegated subtree"));
        assert!(shown(&refused).ends_with(stepmon_runner::DELEGATED_RUN), "{}", shown(&refused));
        assert_eq!(CliError::cgroup("cannot open x", &error(ErrorKind::NotFound)).hint, None);
    }

    #[test]
    fn streams_and_threads_get_no_hint() {
        // Before, every EACCES got the cgroup hint, whatever failed.
        assert_eq!(CliError::io("cannot write to stdout", &error(ErrorKind::PermissionDenied)).hint, None);
        assert_eq!(CliError::io("cannot read stdin", &error(ErrorKind::PermissionDenied)).hint, None);
    }

    #[test]
    fn a_job_record_gets_an_output_files_hint_its_thread_none() {
        let open =
            stepmon_job::JobError::Open { path: "/ci/job.jsonl".into(), source: error(ErrorKind::PermissionDenied) };
        let e = CliError::from(open);
        assert!(e.message.starts_with("cannot open the job record /ci/job.jsonl: "), "{}", e.message);
        assert_eq!(e.hint, Some(Hint::OutputFile(FileProblem::Permission)));
        let full =
            stepmon_job::JobError::Append { path: "/ci/job.jsonl".into(), source: error(ErrorKind::StorageFull) };
        assert_eq!(CliError::from(full).hint, None);
        let thread = stepmon_job::JobError::Thread { source: error(ErrorKind::PermissionDenied) };
        assert_eq!(CliError::from(thread).hint, None);
    }

    #[test]
    fn a_runners_error_gets_the_hint_and_status_of_its_kind() {
        let run_error = |kind, what: &str, source: Option<ErrorKind>| match source {
            Some(source) => RunError::with_source(kind, what, error(source)),
            None => RunError::new(kind, what),
        };
        let cases = [
            // A refused cgroup (the parent given, a limit): the delegation hint.
            (RunErrorKind::Placement, Some(ErrorKind::PermissionDenied), Some(Hint::CgroupAccess), 125),
            (RunErrorKind::Placement, Some(ErrorKind::ReadOnlyFilesystem), Some(Hint::CgroupAccess), 125),
            // Failed for another reason: no hint.
            (RunErrorKind::Placement, Some(ErrorKind::ResourceBusy), None, 125),
            (RunErrorKind::Namespace, Some(ErrorKind::PermissionDenied), Some(Hint::NamespaceAccess), 125),
            (RunErrorKind::Namespace, Some(ErrorKind::NotFound), None, 125),
            (RunErrorKind::NoCgroup, Some(ErrorKind::Other), Some(Hint::CgroupRequired), 125),
            // Signal handlers, the subreaper, waiting: none, rather than the cgroup's.
            (RunErrorKind::Io, Some(ErrorKind::PermissionDenied), None, 125),
            (RunErrorKind::Spawn, Some(ErrorKind::PermissionDenied), None, 125),
            (RunErrorKind::NotFound, None, None, 127),
            (RunErrorKind::PermissionDenied, None, None, 126),
        ];
        for (kind, source, hint, code) in cases {
            let e = run_error(kind, "cannot do it", source);
            assert_eq!(exit_code_of(&e), code, "{kind:?}");
            assert_eq!(CliError::from(e).hint, hint, "{kind:?} {source:?}");
        }
        // The words: what failed, then why; a required cgroup names its flag.
        let denied = io::Error::from_raw_os_error(13);
        let placement = CliError::from(RunError::with_source(RunErrorKind::Placement, "cannot create X", denied));
        assert_eq!(placement.message, "cannot create X: Permission denied (os error 13)");
        let why = io::Error::other("cannot create a cgroup under /x: Permission denied (os error 13)");
        let required = CliError::from(RunError::with_source(RunErrorKind::NoCgroup, "required", why));
        assert_eq!(
            required.message,
            "cannot create a cgroup under /x: Permission denied (os error 13) (--require-cgroup)"
        );
        assert!(shown(&required).contains("a cgroup of the step's own needs root or a delegated subtree"));
        assert!(shown(&placement).contains("delegated subtree"));
    }

    #[test]
    fn the_hint_is_printed_on_its_own_line() {
        let e = CliError::output("cannot create /x/y", &error(ErrorKind::NotFound));
        let text = e.to_string();
        assert!(text.starts_with("stepmon: error: cannot create /x/y: "), "{text}");
        assert!(text.contains("\n  hint: its directory does not exist"), "{text}");
    }
}
