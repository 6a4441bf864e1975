//! What the caller asks of a step: the command, where its cgroup may go,
//! its network, its limits, and how strict placement must be.

use std::ffi::OsString;
use std::path::PathBuf;

/// How to start the step on Linux (elsewhere only [`Mode::Auto`]: other
/// modes are [`crate::RunErrorKind::Unsupported`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// clone3, else fork.
    #[default]
    Auto,
    /// clone3 only.
    Clone3,
    /// fork, then the child joins the cgroup (a write to its
    /// `cgroup.procs`), only.
    Fork,
}

/// The environment variable that forces a [`Mode`].
pub const MODE_VARIABLE: &str = "STEPMON_SPAWN";

impl Mode {
    /// From `STEPMON_SPAWN` (unset or empty: [`Mode::Auto`]); the error says
    /// what the variable holds.
    pub fn from_env() -> Result<Mode, String> {
        match std::env::var_os(MODE_VARIABLE) {
            None => Ok(Mode::Auto),
            Some(value) => match value.to_str() {
                Some("" | "auto") => Ok(Mode::Auto),
                Some("clone3") => Ok(Mode::Clone3),
                Some("fork") => Ok(Mode::Fork),
                _ => Err(format!("{MODE_VARIABLE}={} is not one of auto, clone3, fork", value.to_string_lossy())),
            },
        }
    }
}

/// How the step's network is set up.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum NetMode {
    /// Share this process's namespace (traffic not counted).
    #[default]
    Host,
    /// A new namespace with only loopback up (needs `CAP_SYS_ADMIN`).
    Isolated,
    /// Join an existing namespace (`/run/netns/NAME`, `/proc/PID/ns/net`).
    Namespace(PathBuf),
}

impl std::str::FromStr for NetMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "host" => Ok(NetMode::Host),
            "isolated" => Ok(NetMode::Isolated),
            _ => s
                .strip_prefix("ns:")
                .filter(|p| !p.is_empty())
                .map(|p| NetMode::Namespace(PathBuf::from(p)))
                .ok_or_else(|| format!("expected host, isolated or ns:PATH, got {s:?}")),
        }
    }
}

/// Whether the step gets a cgroup of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CgroupMode {
    /// Where this process may create one; else the step runs without and is
    /// measured through its process tree and the enclosing cgroup.
    #[default]
    Auto,
    /// Refuse to run the step without one.
    Require,
    /// Never create one (nothing is written to any cgroupfs): the process
    /// tree and the enclosing cgroup measure the step.
    Never,
}

/// Limits written into the step's own cgroup (they need one).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct Limits {
    /// `memory.max`, bytes.
    pub memory_max: Option<u64>,
    /// `cpu.max` as a number of cores (quota = cores × the 100 ms period).
    pub cpus: Option<f64>,
    /// `pids.max`.
    pub pids_max: Option<u64>,
}

impl Limits {
    /// Whether any limit is set.
    #[must_use]
    pub fn any(&self) -> bool {
        self.memory_max.is_some() || self.cpus.is_some() || self.pids_max.is_some()
    }
}

/// A step to run; [`StepOptions::new`] gives the defaults of `stepmon run`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StepOptions {
    /// The program and its arguments (executed directly, never through a shell).
    pub command: Vec<OsString>,
    /// The step's name in the document and every export (`None`: the
    /// program's base name, [`stepmon_model::labels::default_name`]).
    pub name: Option<String>,
    /// Labels of the step (validated by the caller, e.g. with
    /// [`stepmon_model::Label`]'s `FromStr`).
    pub labels: Vec<stepmon_model::Label>,
    /// Create the step's cgroups under this directory instead of this
    /// process's own cgroup (naming the own cgroup means "it is delegated to
    /// me"); a cgroup that cannot be created there is an error.
    pub cgroup_parent: Option<PathBuf>,
    /// Whether the step gets a cgroup of its own.
    pub cgroup: CgroupMode,
    /// After the main process exits, wait for every process of the step
    /// instead of killing what it left behind.
    pub wait_all: bool,
    /// How many processes the document lists one by one (taskstats; the
    /// per-command aggregates cover all of them either way).
    pub processes: stepmon_model::processes::Keep,
    /// The step's network.
    pub net: NetMode,
    /// Count loopback traffic too (own namespaces only).
    pub include_loopback: bool,
    /// Limits of the step's cgroup.
    pub limits: Limits,
    /// How the first process is started.
    pub spawn_mode: Mode,
    /// Catch SIGINT, SIGTERM and SIGHUP for the whole run and forward them to
    /// the step (a command-line wrapper wants this; a library caller with
    /// signal handling of its own may not). Also reaps the step's orphans as
    /// they exit (SIGCHLD); without it they are reaped at the end.
    pub forward_signals: bool,
    /// Where the step's samples go as they are taken (the baseline first,
    /// then each periodic one), for a record that must outlive this process
    /// (`stepmon run --job`; `stepmon_job::JobWriter::follow` appends them
    /// to a job record). The final samples are in the run document.
    /// A closed receiver only stops the forwarding; the step goes on.
    pub live: Option<std::sync::mpsc::Sender<stepmon_model::LiveSample>>,
    /// How often the process tree's memory is sampled where no memory
    /// cgroup covers the step alone
    /// ([`stepmon_model::source::TreeMemory`]).
    pub tree_memory_interval: std::time::Duration,
    /// Whether the cgroup stepmon runs in is sampled as the enclosing rung
    /// where the step lacks a cgroup of its own (off: the process tree
    /// alone measures it, as where that cgroup cannot be read).
    pub enclosing: bool,
    /// Whether the command will start steps of its own that nest in this
    /// one (`stepmon build`'s actions, each a `stepmon wrap` run by the
    /// build): the command then runs in a leaf child of the step's cgroup,
    /// so that the step's cgroup can enable the memory, cpu, io and pids
    /// controllers for the nested steps' cgroups (on cgroup v2 a cgroup
    /// holding processes cannot,
    /// <https://docs.kernel.org/admin-guide/cgroup-v2.html#no-internal-process-constraint>).
    /// A step started from that leaf makes its cgroups in the step's
    /// cgroup, beside it. The step's numbers are its cgroup's, the nested
    /// steps' included.
    pub nested_steps: bool,
    /// The command's environment, directory and streams (set with
    /// [`StepOptions::env`], [`StepOptions::current_dir`],
    /// [`StepOptions::stdout`], ...).
    pub(crate) action: crate::action::Action,
    /// What the caller is told while the step runs: a progress every
    /// interval, an event when its memory nears what bounds it
    /// ([`crate::watch::Watch`]; by default the memory alone, kept for the
    /// document's `stepmon.events`).
    pub watch: crate::watch::Watch,
}

impl StepOptions {
    /// `command` with the defaults: the host's network, no limits, leftovers
    /// killed at the end, placement falling back when no cgroup can be
    /// made, signals not caught.
    #[must_use]
    pub fn new<I, S>(command: I) -> StepOptions
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        StepOptions {
            command: command.into_iter().map(Into::into).collect(),
            name: None,
            labels: Vec::new(),
            cgroup_parent: None,
            cgroup: CgroupMode::Auto,
            wait_all: false,
            processes: stepmon_model::processes::Keep::default(),
            net: NetMode::Host,
            include_loopback: false,
            limits: Limits::default(),
            spawn_mode: Mode::Auto,
            forward_signals: false,
            live: None,
            tree_memory_interval: TREE_MEMORY_INTERVAL,
            enclosing: true,
            nested_steps: false,
            action: crate::action::Action::default(),
            watch: crate::watch::Watch::default(),
        }
    }
}

/// The default interval between samples: the step sampler's during its first
/// 2 s. A sample of a large tree costs milliseconds of CPU, a small share of
/// a core at this interval (the figure: benches/README.md, "Figures behind
/// code comments").
pub(crate) const TREE_MEMORY_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);
