//! Why a step could not be run as asked: one line, a hint, and the exit
//! status a command-line wrapper should end with.

use std::fmt;
use std::io;

/// Exit status of a wrapper that failed itself (not the step), as `env` and
/// container runners use.
pub const INTERNAL_ERROR: i32 = 125;

/// How to run a step without root, in a delegated subtree: `systemd-run`
/// creates a transient scope with `Delegate=yes`, and the shell it starts
/// there expands `$(stepmon doctor --own-cgroup)`, so `--cgroup-parent`
/// names that scope. (Expanded by the caller's shell, before `systemd-run`,
/// it would name the caller's own cgroup: the scope does not exist yet.)
/// `CMD` stands for the step's command. Every hint that suggests delegation
/// quotes this one string. Delegation:
/// <https://docs.kernel.org/admin-guide/cgroup-v2.html#delegation>,
/// <https://systemd.io/CGROUP_DELEGATION/>.
pub const DELEGATED_RUN: &str = "systemd-run --user --scope -p Delegate=yes -- \
     sh -c 'stepmon run --cgroup-parent \"$(stepmon doctor --own-cgroup)\" -- CMD'";

/// A failure of the runner (not of the step).
#[derive(Debug)]
#[non_exhaustive]
pub struct RunError {
    /// What went wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
    /// 127 when the command does not exist, else [`INTERNAL_ERROR`].
    pub exit_code: i32,
}

impl RunError {
    /// An error without a hint (exit status [`INTERNAL_ERROR`]).
    pub fn new(message: impl Into<String>) -> Self {
        RunError { message: message.into(), hint: None, exit_code: INTERNAL_ERROR }
    }

    /// Adds a hint.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// An I/O error on `what`, without a hint: which one fits depends on
    /// what failed ([`RunError::cgroup`], [`RunError::namespace`]).
    pub fn io(what: &str, error: &io::Error) -> Self {
        RunError::new(format!("{what}: {error}"))
    }

    /// An I/O error creating or writing a cgroup (`what` names it); when it
    /// was refused, the hint to run as root or in a delegated subtree.
    pub fn cgroup(what: &str, error: &io::Error) -> Self {
        let e = RunError::io(what, error);
        if refused(error) {
            e.hint(format!("creating cgroups needs root, or a delegated subtree: {DELEGATED_RUN}"))
        } else {
            e
        }
    }

    /// An I/O error creating or entering a network namespace (`what` names
    /// it); when it was refused, that this needs root.
    pub fn namespace(what: &str, error: &io::Error) -> Self {
        let e = RunError::io(what, error);
        if refused(error) {
            e.hint("a network namespace for the step needs root (CAP_SYS_ADMIN); without one, run with --net host")
        } else {
            e
        }
    }
}

/// EACCES, EPERM (both `PermissionDenied`) or EROFS: refused, not failed.
fn refused(error: &io::Error) -> bool {
    matches!(error.kind(), io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem)
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RunError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_hint_goes_with_its_error() {
        let denied = io::Error::from(io::ErrorKind::PermissionDenied);
        let cgroup = RunError::cgroup("cannot create a cgroup under /sys/fs/cgroup/x", &denied);
        assert!(cgroup.hint.as_deref().is_some_and(|h| h.contains("delegated subtree")), "{cgroup:?}");
        let namespace = RunError::namespace("cannot create a network namespace", &denied);
        assert!(namespace.hint.as_deref().is_some_and(|h| h.contains("--net host")), "{namespace:?}");
        // Anything else (a signal handler, the subreaper, waiting): no hint,
        // rather than the cgroup one.
        assert_eq!(RunError::io("cannot become the step's child subreaper", &denied).hint, None);
        // A cgroup that failed for another reason than a refusal: no hint.
        let busy = io::Error::from(io::ErrorKind::ResourceBusy);
        assert_eq!(RunError::cgroup("cannot set memory.max to 1", &busy).hint, None);
        let read_only = io::Error::from(io::ErrorKind::ReadOnlyFilesystem);
        assert!(RunError::cgroup("cannot create a cgroup under /x", &read_only).hint.is_some());
        assert!(cgroup.hint.as_deref().is_some_and(|h| h.ends_with(DELEGATED_RUN)), "{cgroup:?}");
    }

    /// Runs `command` (a hint's command line, `CMD` as `true`) through
    /// `sh` with stand-ins on PATH: `systemd-run` runs what follows its
    /// options with `IN_SCOPE=1` (as the new scope would), `stepmon doctor
    /// --own-cgroup` prints `scope` there and `caller` outside it, and
    /// `stepmon run --cgroup-parent DIR` prints DIR. Returns what it printed.
    #[cfg(unix)]
    fn cgroup_parent_given_by(command: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let bin = tempfile::tempdir().expect("scratch directory");
        let stand_ins = [
            (
                "systemd-run",
                "while [ $# -gt 0 ]; do case $1 in --) shift; break;; -p) shift 2;; -*) shift;; *) break;; esac; done\n\
                 IN_SCOPE=1 exec \"$@\"\n",
            ),
            (
                "stepmon",
                "case $1 in\n\
                 doctor) if [ \"${IN_SCOPE:-}\" = 1 ]; then echo scope; else echo caller; fi;;\n\
                 run) echo \"$3\";;\n\
                 esac\n",
            ),
        ];
        for (name, body) in stand_ins {
            let path = bin.path().join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}")).expect("write a stand-in");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod a stand-in");
        }
        let path = format!("{}:/usr/bin:/bin", bin.path().display());
        let out = std::process::Command::new("/bin/sh")
            .args(["-c", &command.replace("CMD", "true")])
            .env("PATH", path)
            .env_remove("IN_SCOPE")
            .output()
            .expect("run /bin/sh");
        assert!(out.status.success(), "{command}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    #[cfg(unix)]
    #[test]
    fn the_delegation_hint_names_the_new_scope() {
        assert_eq!(cgroup_parent_given_by(DELEGATED_RUN), "scope");
        // With `$(…)` outside `sh -c`, the caller's shell expands it before
        // the scope exists: it names the caller's cgroup.
        let expanded_too_early = "systemd-run --user --scope -p Delegate=yes stepmon run \
             --cgroup-parent \"$(stepmon doctor --own-cgroup)\" -- CMD";
        assert_eq!(cgroup_parent_given_by(expanded_too_early), "caller");
    }
}
