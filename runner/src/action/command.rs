//! `StepOptions`' setters of the step's action (its environment, working
//! directory and streams), named as `std::process::Command` names them.

use std::ffi::OsStr;
use std::path::Path;

use super::Stdio;
use crate::options::StepOptions;

/// The action's environment, working directory and streams, as
/// `std::process::Command` names them (a builder that used `Command`
/// changes only its import of [`Stdio`]).
///
/// ```
/// # #[cfg(target_os = "linux")] {
/// use std::io::Read;
/// use stepmon_runner::{CgroupMode, StepOptions, Stdio, prepare};
///
/// let dir = tempfile::tempdir()?;
/// let mut options = StepOptions::new(["sh", "-c", "echo \"$STEP_INDEX in $(pwd)\""]);
/// options.cgroup = CgroupMode::Never;
/// options.env("STEP_INDEX", "7").current_dir(dir.path()).stdout(Stdio::piped());
/// let finished = prepare(options)?.start()?.wait_with_output()?;
/// let said = String::from_utf8(finished.stdout).unwrap();
/// assert_eq!(said.trim_end(), format!("7 in {}", dir.path().canonicalize()?.display()));
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl StepOptions {
    /// Sets the variable `key` to `val` for the command.
    pub fn env<K: AsRef<OsStr>, V: AsRef<OsStr>>(&mut self, key: K, val: V) -> &mut Self {
        self.action.vars.insert(key.as_ref().to_owned(), Some(val.as_ref().to_owned()));
        self
    }

    /// Sets each of `vars` for the command.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (key, val) in vars {
            self.env(key, val);
        }
        self
    }

    /// Removes the variable `key` from the command's environment.
    pub fn env_remove<K: AsRef<OsStr>>(&mut self, key: K) -> &mut Self {
        self.action.vars.insert(key.as_ref().to_owned(), None);
        self
    }

    /// Starts the command with no variables but those set afterwards
    /// (`PATH` too: the program is then looked up in the `PATH` set, or in
    /// `/usr/local/bin:/bin:/usr/bin` without one).
    pub fn env_clear(&mut self) -> &mut Self {
        self.action.env_clear = true;
        self.action.vars.clear();
        self
    }

    /// Runs the command in `dir` (a relative program path such as
    /// `./configure` is found from there). A directory that cannot be
    /// entered ends the step as a command that could not start
    /// ([`crate::Finished::not_started`]).
    pub fn current_dir<P: AsRef<Path>>(&mut self, dir: P) -> &mut Self {
        self.action.current_dir = Some(dir.as_ref().to_owned());
        self
    }

    /// The command's stdin (default: this process's).
    pub fn stdin<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Self {
        self.action.stdio[0] = Some(cfg.into());
        self
    }

    /// The command's stdout (default: this process's).
    pub fn stdout<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Self {
        self.action.stdio[1] = Some(cfg.into());
        self
    }

    /// The command's stderr (default: this process's).
    pub fn stderr<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Self {
        self.action.stdio[2] = Some(cfg.into());
        self
    }

    /// The variables set (`Some`) or removed (`None`) for the command, as
    /// `Command::get_envs` lists them.
    pub fn get_envs(&self) -> impl Iterator<Item = (&OsStr, Option<&OsStr>)> {
        self.action.vars.iter().map(|(k, v)| (k.as_os_str(), v.as_deref()))
    }

    /// The directory the command runs in, if set.
    #[must_use]
    pub fn get_current_dir(&self) -> Option<&Path> {
        self.action.current_dir.as_deref()
    }
}

/// Who the command runs as (Linux): its first process joins the step's
/// cgroups and network namespace with this process's rights, then takes
/// these ids — `setgroups`, `setgid`, `setuid`, in that order, as std's
/// `CommandExt` does — and only then enters its working directory and
/// execs, so that both are checked against the ids it runs with. Changing
/// them needs `CAP_SETUID` and `CAP_SETGID` (root); a change refused ends
/// the step as a command that could not start
/// ([`crate::Finished::not_started`], status 126).
///
/// A root stepmon that measures another user's command with every
/// controller (`stepmon shell` through sudo) gives that user's ids back to
/// it this way:
///
/// ```
/// use stepmon_runner::StepOptions;
///
/// let mut options = StepOptions::new(["id"]);
/// options.uid(1001).gid(1001).groups(&[1001, 4, 27]).umask(0o002);
/// ```
#[cfg(target_os = "linux")]
impl StepOptions {
    /// Runs the command with the user id `id` (real, effective and saved:
    /// setuid(2) by a privileged process). Without [`StepOptions::groups`],
    /// a root stepmon also drops its own supplementary groups, as std does.
    pub fn uid(&mut self, id: u32) -> &mut Self {
        self.action.credentials.uid = Some(id);
        self
    }

    /// Runs the command with the group id `id` (real, effective and saved).
    pub fn gid(&mut self, id: u32) -> &mut Self {
        self.action.credentials.gid = Some(id);
        self
    }

    /// Runs the command with exactly these supplementary groups
    /// (setgroups(2); empty: none).
    pub fn groups(&mut self, groups: &[u32]) -> &mut Self {
        self.action.credentials.groups = Some(groups.to_vec());
        self
    }

    /// Runs the command with this file mode creation mask (umask(2); the
    /// low 9 bits count, as the kernel takes them).
    pub fn umask(&mut self, mask: u32) -> &mut Self {
        self.action.credentials.umask = Some(mask & 0o777);
        self
    }
}
