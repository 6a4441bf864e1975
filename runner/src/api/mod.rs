//! The crate's public handles — [`Runner`], [`prepare`], [`Prepared`],
//! [`Step`] and the pipe ends — defined once for every operating system.
//! Each holds the private part of the platform it was built for
//! (`crate::imp`: `linux.rs`, `windows.rs` or `unix_other.rs`, chosen by
//! `#[cfg]`) and each method delegates to it: a method that one platform
//! lacks does not compile there, so the platforms cannot drift apart.

mod ends;
mod step;

pub use ends::{ChildStderr, ChildStdin, ChildStdout};
pub use step::Step;

use crate::error::RunError;
use crate::finished::Finished;
use crate::imp;
use crate::notice::Notice;
use crate::options::StepOptions;

/// Starts measured steps; one per process is enough (clones share it).
///
/// It owns what steps share: on Linux the host's cgroup layout as read
/// once, the sampler's thread and timers, the taskstats listener; each
/// step runs under a subreaper of its own, so that steps never reap, kill
/// or count each other's processes. On Windows each step gets a job object
/// of its own, on macOS and the BSDs a process group of its own.
///
/// ```
/// use stepmon_runner::{Runner, StepOptions};
///
/// # #[cfg(unix)] let exit = |i: usize| ["sh".to_owned(), "-c".to_owned(), format!("exit {i}")];
/// # #[cfg(windows)] let exit = |i: usize| ["cmd".to_owned(), "/c".to_owned(), format!("exit {i}")];
/// let runner = Runner::new()?;
/// let steps: Vec<_> = (0..4).map(|i| runner.start(StepOptions::new(exit(i)))).collect::<Result<_, _>>()?;
/// for (i, step) in steps.into_iter().enumerate() {
///     // Or `step.await` in any async executor.
///     let finished = step.wait()?;
///     assert_eq!(finished.exit_code, i32::try_from(i).unwrap());
/// }
/// runner.shutdown();
/// # Ok::<(), stepmon_runner::RunError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Runner {
    inner: imp::Runner,
}

impl Runner {
    /// Reads what all steps share once (on Linux: the host's cgroup
    /// layout, container and systemd signs; the shared sampler's thread).
    pub fn new() -> Result<Runner, RunError> {
        imp::Runner::new().map(|inner| Runner { inner })
    }

    /// Places a step (see [`prepare`]) with what this runner shares.
    pub fn prepare(&self, options: StepOptions) -> Result<Prepared, RunError> {
        self.inner.prepare(options).map(|inner| Prepared { inner })
    }

    /// Places and starts a step; await the [`Step`] or [`Step::wait`] for it.
    pub fn start(&self, options: StepOptions) -> Result<Step, RunError> {
        self.prepare(options)?.start()
    }

    /// Stops what the runner shares once every step has ended (on Linux the
    /// sampler: steps started after it fail).
    pub fn shutdown(&self) {
        self.inner.shutdown();
    }
}

/// Places the step: on Linux discovers the host, creates its cgroups (or
/// says why it gets none and what measures it instead), sets up its
/// network and starts recording; elsewhere checks that the options can be
/// kept there. Nothing runs yet; [`Prepared::notices`] says what the user
/// should know before it does.
///
/// Errors ([`RunError::kind`]): the command does not exist (`NotFound`), a
/// cgroup is required (`CgroupMode::Require`: `NoCgroup`) or its parent or
/// a limit cannot be used (`Placement`), the network namespace cannot be
/// set up (`Namespace`), options that do not go together
/// (`InvalidOptions`), options this platform cannot keep (`Unsupported`:
/// limits, a cgroup parent, a network namespace or a spawn mode off
/// Linux), or `/proc` cannot be read (`Io`).
pub fn prepare(options: StepOptions) -> Result<Prepared, RunError> {
    imp::prepare(options).map(|inner| Prepared { inner })
}

/// A step placed and ready to start; see [`prepare`].
#[derive(Debug)]
pub struct Prepared {
    inner: imp::Prepared,
}

impl Prepared {
    /// What the user should know before the step starts: how it is placed
    /// when it gets no cgroup of its own (Linux), what this platform does
    /// not measure or keep (elsewhere) — typed, each displayed as one line.
    /// (On Linux earlier runs' leftovers are cleaned up once the step runs;
    /// a failure of that is one of [`Finished::messages`].)
    #[must_use]
    pub fn notices(&self) -> &[Notice] {
        self.inner.notices()
    }

    /// Whether the step has a cgroup of its own (always `false` off Linux).
    #[must_use]
    pub fn has_own_cgroup(&self) -> bool {
        self.inner.has_own_cgroup()
    }

    /// Starts the step and returns at once: on Linux its first process runs
    /// in its cgroups (or the ladder below them), under a subreaper of its
    /// own that collects its orphans; on Windows in a job object of its own
    /// (assigned before its first instruction); on macOS and the BSDs in a
    /// process group of its own.
    pub fn start(self) -> Result<Step, RunError> {
        self.inner.start().map(Step::new)
    }

    /// Runs the step to its end, kills (or on Linux with `wait_all` waits
    /// for) what it leaves behind, takes the final numbers, cleans up and
    /// returns the run document. The step's failure is not an error: its
    /// exit status is in [`Finished::exit_code`]. [`Prepared::start`] and
    /// [`Step::wait`] in one.
    pub fn run(self) -> Result<Finished, RunError> {
        self.start()?.wait()
    }
}
