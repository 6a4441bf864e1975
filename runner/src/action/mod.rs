//! What a builder's action gets besides its arguments, named as
//! `std::process::Command` names it: its environment, its working
//! directory and its stdin, stdout and stderr ([`Stdio`]). Plain data on
//! every platform (a builder's code that sets them compiles everywhere);
//! on Linux the spawn applies them ([`crate::spawn::Launch`]) and the
//! started [`crate::Step`] hands out its piped ends.
// Off Linux nothing reads what the options hold: no step starts there.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

#[cfg(target_os = "linux")]
pub(crate) mod collect;
mod command;
#[cfg(target_os = "linux")]
pub(crate) mod open;
#[cfg(target_os = "linux")]
pub(crate) mod pipe;

/// Where one of the step's standard streams goes: `std::process::Stdio`'s
/// constructors and conversions, as a value this crate can read (std's
/// cannot be looked into from outside std).
///
/// ```
/// use stepmon_runner::{StepOptions, Stdio};
///
/// let log = tempfile::tempfile()?;
/// let mut options = StepOptions::new(["rustc", "--error-format=json", "lib.rs"]);
/// options.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(log);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Stdio(pub(crate) Kind);

#[derive(Debug, Clone, Default)]
pub(crate) enum Kind {
    /// This process's own stream (the default).
    #[default]
    Inherit,
    /// `/dev/null`.
    Null,
    /// A new pipe; the started step holds this process's end.
    Piped,
    /// An open file (or pipe, socket, terminal): the command gets a copy of
    /// it. Shared, so that the options stay `Clone`; the file stays open
    /// until the last clone of the options is dropped.
    File(Arc<File>),
}

impl Stdio {
    /// This process's own stream (what a step gets unless told otherwise).
    #[must_use]
    pub fn inherit() -> Stdio {
        Stdio(Kind::Inherit)
    }

    /// `/dev/null`: nothing to read, output thrown away.
    #[must_use]
    pub fn null() -> Stdio {
        Stdio(Kind::Null)
    }

    /// A new pipe to the step: its end of it is `Step::stdin`,
    /// `Step::stdout` or `Step::stderr`.
    #[must_use]
    pub fn piped() -> Stdio {
        Stdio(Kind::Piped)
    }

    fn file(file: File) -> Stdio {
        Stdio(Kind::File(Arc::new(file)))
    }
}

impl From<File> for Stdio {
    /// The command reads or writes this file (a copy of its descriptor, so
    /// it shares the file's offset).
    fn from(file: File) -> Stdio {
        Stdio::file(file)
    }
}

#[cfg(unix)]
impl From<std::os::fd::OwnedFd> for Stdio {
    /// The command gets a copy of this descriptor.
    fn from(fd: std::os::fd::OwnedFd) -> Stdio {
        Stdio::file(File::from(fd))
    }
}

/// std's pipe ends, as `Command` takes them: the output of one process
/// becomes the step's input, or the step writes into another's stdin.
macro_rules! from_std_pipe {
    ($($std:ty),*) => {$(
        impl From<$std> for Stdio {
            /// The command gets a copy of this pipe end.
            fn from(end: $std) -> Stdio {
                #[cfg(unix)]
                let file = File::from(std::os::fd::OwnedFd::from(end));
                #[cfg(windows)]
                let file = File::from(std::os::windows::io::OwnedHandle::from(end));
                Stdio::file(file)
            }
        }
    )*};
}

from_std_pipe!(std::process::ChildStdin, std::process::ChildStdout, std::process::ChildStderr);

/// The command's environment and directory, and its streams: what the
/// [`StepOptions`] methods below set.
#[derive(Debug, Clone, Default)]
pub(crate) struct Action {
    /// Start from an empty environment rather than this process's.
    pub(crate) env_clear: bool,
    /// Variables set (`Some`) or removed (`None`) on top of it.
    pub(crate) vars: BTreeMap<OsString, Option<OsString>>,
    pub(crate) current_dir: Option<PathBuf>,
    /// fds 0, 1 and 2 (`None`: inherited).
    pub(crate) stdio: [Option<Stdio>; 3],
    /// Who the command runs as, and its umask (Linux only: the setters are).
    pub(crate) credentials: Credentials,
}

/// The user and group ids and the umask the command's first process takes
/// before its exec (`None`: this process's), as `std::process::Command`
/// takes them on Unix (`CommandExt::uid`, `gid`, `groups`), plus the umask
/// that a process started by another user's one (through sudo) needs back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Credentials {
    pub(crate) uid: Option<u32>,
    pub(crate) gid: Option<u32>,
    /// The supplementary groups, the whole list.
    pub(crate) groups: Option<Vec<u32>>,
    pub(crate) umask: Option<u32>,
}

impl Action {
    /// Whether the environment differs from this process's.
    fn env_changed(&self) -> bool {
        self.env_clear || !self.vars.is_empty()
    }

    /// The command's whole environment as `NAME`, `VALUE` pairs, or `None`
    /// when it is this process's unchanged (read at the spawn, as std does).
    pub(crate) fn environment(&self) -> Option<Vec<(OsString, OsString)>> {
        if !self.env_changed() {
            return None;
        }
        let mut all: BTreeMap<OsString, OsString> =
            if self.env_clear { BTreeMap::new() } else { std::env::vars_os().collect() };
        for (name, value) in &self.vars {
            match value {
                Some(value) => all.insert(name.clone(), value.clone()),
                None => all.remove(name),
            };
        }
        Some(all.into_iter().collect())
    }

    /// `PATH` as the command will see it, for the program's lookup: the
    /// step's own when its environment sets, removes or clears it (as std's
    /// `Command` does), else this process's.
    pub(crate) fn path(&self) -> Option<OsString> {
        const PATH: &str = "PATH";
        match self.vars.get(OsStr::new(PATH)) {
            Some(value) => value.clone(),
            None if self.env_clear => None,
            None => std::env::var_os(PATH),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::StepOptions;

    #[test]
    fn the_environment_is_built_as_commands_is() {
        let mut options = StepOptions::new(["true"]);
        assert!(options.action.environment().is_none(), "unchanged: read at the spawn");
        assert_eq!(options.action.path(), std::env::var_os("PATH"));
        options.env("STEPMON_A", "1").env_remove("HOME");
        let env = options.action.environment().unwrap();
        assert!(env.contains(&("STEPMON_A".into(), "1".into())));
        assert!(!env.iter().any(|(k, _)| k == "HOME"));
        options.env_clear().env("PATH", "/nowhere");
        assert_eq!(options.action.environment().unwrap(), vec![("PATH".into(), "/nowhere".into())]);
        assert_eq!(options.action.path().as_deref(), Some(OsStr::new("/nowhere")));
        options.env_remove("PATH");
        assert_eq!(options.action.path(), None);
        assert_eq!(options.action.environment().unwrap(), Vec::new());
        assert_eq!(options.get_envs().collect::<Vec<_>>(), vec![(OsStr::new("PATH"), None)]);
    }
}
