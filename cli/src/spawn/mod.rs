//! Starting the step so that it is inside its leaf cgroup (and network
//! namespace) before it executes the command's first instruction.
//!
//! Two ways, same outcome:
//! * [`clone3`]: `clone3(CLONE_INTO_CGROUP)`, `setns` in the child, `execvp`
//!   (Linux 5.7+). No cgroup migration, so no RCU grace period to wait for.
//! * the trampoline ([`crate::trampoline`], `stepmon __exec`): a child that
//!   writes itself into `cgroup.procs`, joins the namespace and execs. Used
//!   when clone3 fails (older kernels, seccomp filters that hide clone3).
//!
//! `STEPMON_SPAWN=clone3|trampoline` forces one way (no fallback) and names
//! the way taken on stderr; for tests and diagnosis.

mod clone3;
pub mod lookup;
pub mod script;

use std::ffi::OsString;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};

use rustix::fs::{Mode as FileMode, OFlags};
use rustix::process::{Pid, WaitOptions};

use crate::error::CliError;
use crate::netns::HeldNamespace;

/// How to start the step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// clone3, else the trampoline.
    Auto,
    /// clone3 only.
    Clone3,
    /// The trampoline only.
    Trampoline,
}

/// The environment variable that forces a [`Mode`].
pub const MODE_VARIABLE: &str = "STEPMON_SPAWN";

impl Mode {
    /// From `STEPMON_SPAWN` (unset or empty: [`Mode::Auto`]).
    pub fn from_env() -> Result<Mode, CliError> {
        match std::env::var_os(MODE_VARIABLE) {
            None => Ok(Mode::Auto),
            Some(value) => match value.to_str() {
                Some("" | "auto") => Ok(Mode::Auto),
                Some("clone3") => Ok(Mode::Clone3),
                Some("trampoline") => Ok(Mode::Trampoline),
                _ => Err(CliError::new(format!(
                    "{MODE_VARIABLE}={} is not one of auto, clone3, trampoline",
                    value.to_string_lossy()
                ))),
            },
        }
    }
}

/// The step's first process.
#[derive(Debug)]
pub enum Step {
    /// Started with clone3 (a child of ours, not yet waited for).
    Direct(Direct),
    /// Started through the trampoline.
    Trampoline(Child),
}

/// A step started with clone3, and what to say if it could not run.
#[derive(Debug)]
pub struct Direct {
    pid: Pid,
    /// `None` once read.
    spawned: Option<clone3::Spawned>,
    program: OsString,
    namespace: Option<PathBuf>,
}

impl Step {
    /// Its PID.
    pub fn id(&self) -> u32 {
        match self {
            Step::Direct(direct) => direct.pid.as_raw_nonzero().get().unsigned_abs(),
            Step::Trampoline(child) => child.id(),
        }
    }

    /// Waits for it to exit. A command that could not run (not found, not
    /// executable, namespace not joined) is reported on stderr here, as the
    /// trampoline reports it before exiting with 127 or 126.
    pub fn wait(&mut self) -> io::Result<ExitStatus> {
        match self {
            Step::Direct(direct) => loop {
                match direct.wait_with(WaitOptions::empty()) {
                    Ok(Some(status)) => return Ok(status),
                    Ok(None) => return Err(io::Error::other("waitpid returned no status")),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            },
            Step::Trampoline(child) => child.wait(),
        }
    }

    /// [`wait`](Self::wait) without blocking: `None` while it runs.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        match self {
            Step::Direct(direct) => direct.wait_with(WaitOptions::NOHANG),
            Step::Trampoline(child) => child.try_wait(),
        }
    }
}

impl Direct {
    /// `waitpid` with `options`; once it has exited, reports a command that
    /// could not run.
    fn wait_with(&mut self, options: WaitOptions) -> io::Result<Option<ExitStatus>> {
        let Some((_, status)) = rustix::process::waitpid(Some(self.pid), options)? else { return Ok(None) };
        if let Some(failure) = self.spawned.take().and_then(clone3::Spawned::failure) {
            match (failure.stage, &self.namespace) {
                (clone3::Stage::NetNs, Some(path)) => {
                    eprintln!("stepmon: cannot join the network namespace {}: {}", path.display(), failure.error)
                }
                _ => eprintln!("stepmon: cannot run {}: {}", self.program.to_string_lossy(), failure.error),
            }
        }
        Ok(Some(ExitStatus::from_raw(status.as_raw())))
    }
}

/// Starts `command` in the cgroup directory `leaf`, in `namespace` if given.
/// A failure to run the command itself (not found, not executable) is not an
/// error here: it is printed, and the step exits with 127 or 126.
pub fn spawn(
    leaf: &Path,
    namespace: Option<&HeldNamespace>,
    command: &[OsString],
    mode: Mode,
) -> Result<Step, CliError> {
    if mode != Mode::Trampoline {
        match direct(leaf, namespace, command) {
            Ok(step) => {
                if mode == Mode::Clone3 {
                    eprintln!("stepmon: started the step with clone3(CLONE_INTO_CGROUP)");
                }
                return Ok(step);
            }
            Err(e) if mode == Mode::Clone3 || e.kind() == io::ErrorKind::InvalidInput => {
                return Err(CliError::io("cannot start the step with clone3(CLONE_INTO_CGROUP)", &e));
            }
            // Fall back to the trampoline, which needs neither clone3 nor
            // CLONE_INTO_CGROUP.
            Err(_) => {}
        }
    }
    let child = trampoline(leaf, namespace, command).map_err(|e| CliError::io("cannot start the step", &e))?;
    if mode == Mode::Trampoline {
        eprintln!("stepmon: started the step with the trampoline (stepmon __exec)");
    }
    Ok(Step::Trampoline(child))
}

/// clone3 into the leaf.
fn direct(leaf: &Path, namespace: Option<&HeldNamespace>, command: &[OsString]) -> io::Result<Step> {
    let exec = clone3::Exec::new(command)?;
    let cgroup = rustix::fs::open(leaf, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, FileMode::empty())?;
    let spawned = clone3::spawn(cgroup.as_fd(), namespace.map(HeldNamespace::as_fd), &exec)?;
    Ok(Step::Direct(Direct {
        pid: spawned.pid,
        spawned: Some(spawned),
        program: command.first().cloned().unwrap_or_default(),
        namespace: namespace.map(HeldNamespace::path),
    }))
}

/// `stepmon __exec --cgroup LEAF [--netns PATH] -- COMMAND...`.
fn trampoline(leaf: &Path, namespace: Option<&HeldNamespace>, command: &[OsString]) -> io::Result<Child> {
    let mut trampoline = Command::new(std::env::current_exe()?);
    trampoline.arg("__exec").arg("--cgroup").arg(leaf);
    if let Some(ns) = namespace {
        trampoline.arg("--netns").arg(ns.path());
    }
    trampoline.arg("--").args(command).spawn()
}
