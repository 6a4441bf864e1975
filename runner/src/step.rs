//! A step's whole life: placement (its own cgroup, or the ladder below it),
//! network, sampling, the process, its orphans and leftovers, the final
//! samples, cleanup, and the run document.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use stepmon_report::source::{EnclosingCgroup, Group, Rung, Sources};
use stepmon_report::{Collector, Host, NotEnabled, RunDocument, RunInfo, Step};
use stepmon_sampler::cgroup::{CgroupV1Dirs, discover};
use stepmon_sampler::model::StepUsage;
use stepmon_sampler::{Monitor, MonitorOptions, NetworkSource, Recorder};

use crate::cgroup::enclosing::Enclosing;
use crate::cgroup::placement::{self, RunCgroups};
use crate::cgroup::systemd::{self, Bus};
use crate::cgroup::v1::{self, V1Cgroups};
use crate::error::{INTERNAL_ERROR, RunError};
use crate::host::shape::{self, Shape};
use crate::ladder::{self, Evidence};
use crate::netns::HeldNamespace;
use crate::options::{CgroupMode, Limits, NetMode, SampleOf, StepOptions};
use crate::signals::Caught;
use crate::spawn::{self, Spawned, Target};
use crate::tree::Reaper;

/// How long leftovers get to die once killed.
const KILL_TIMEOUT: Duration = Duration::from_secs(10);

/// A finished step.
#[derive(Debug)]
#[non_exhaustive]
pub struct Finished {
    /// The run document (what `stepmon run -o` writes), with its summary and verdicts.
    pub document: RunDocument,
    /// The status a wrapper should exit with: the step's code, 128 + N for
    /// a signal, 127 not found, 126 not executable.
    pub exit_code: i32,
    /// Messages for the user, in order (a command that could not run, a
    /// cgroup that could not be removed, ...).
    pub messages: Vec<String>,
}

/// A set of the step's cgroups stepmon created (v2 or v1).
trait Created {
    /// Kills what is left in them, waiting at most `timeout`.
    fn kill(&self, timeout: Duration) -> std::io::Result<()>;
    /// Removes them.
    fn remove(&self) -> std::io::Result<()>;
    /// For the warning when they stay: `/sys/fs/cgroup/…/stepmon-run.…`.
    fn what(&self) -> String;
}

impl Created for RunCgroups {
    fn kill(&self, timeout: Duration) -> std::io::Result<()> {
        self.kill_and_wait(timeout)
    }
    fn remove(&self) -> std::io::Result<()> {
        RunCgroups::remove(self)
    }
    fn what(&self) -> String {
        match &self.scope {
            Some(scope) => format!("the systemd scope {}", scope.unit),
            None => self.parent.display().to_string(),
        }
    }
}

impl Created for V1Cgroups {
    fn kill(&self, timeout: Duration) -> std::io::Result<()> {
        self.kill_and_wait(timeout)
    }
    fn remove(&self) -> std::io::Result<()> {
        V1Cgroups::remove(self)
    }
    fn what(&self) -> String {
        "the step's cgroup v1 directories".to_owned()
    }
}

/// The step's cgroups, killed and removed when dropped (also when the run
/// fails half-way); [`Owned::release`] does it and says what failed.
#[derive(Debug)]
struct Owned<T: Created>(Option<T>);

type OwnedCgroups = Owned<RunCgroups>;
type OwnedV1 = Owned<V1Cgroups>;

impl<T: Created> Owned<T> {
    fn get(&self) -> &T {
        self.0.as_ref().unwrap_or_else(|| unreachable!("released"))
    }

    /// Kills what is left, removes the cgroups; a warning if they stay.
    fn release(mut self) -> Option<String> {
        let cgroups = self.0.take()?;
        let _ = cgroups.kill(KILL_TIMEOUT);
        // rmdir can briefly fail with EBUSY right after the last task exits.
        let mut last = None;
        for _ in 0..200 {
            match cgroups.remove() {
                Ok(()) => return None,
                Err(e) => last = Some(e),
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let e = last.map_or_else(String::new, |e| e.to_string());
        Some(format!("warning: could not remove {}: {e} (`stepmon gc` will)", cgroups.what()))
    }
}

impl<T: Created> Drop for Owned<T> {
    fn drop(&mut self) {
        if self.0.is_some()
            && let Some(warning) = Owned(self.0.take()).release()
        {
            eprintln!("stepmon: {warning}");
        }
    }
}

/// The v1 controllers worth a cgroup of the step's own, given what its
/// cgroup v2 (if any) accounts: memory and pids where v2 lacks them; cpu
/// only for `--cpus` (a v1 cgroup's `cpu.stat` counts only its own quota's
/// throttling); cpuacct only without any cgroup v2 (v2's `cpu.stat` has the
/// usage otherwise). Never blkio: blk-throttle counts only on devices with a
/// throttle rule (seen on 6.1 and 6.18), which stepmon never sets; the
/// process tree counts the step's IO.
fn v1_wanted(v2: Option<&RunCgroups>, limits: &Limits) -> Vec<&'static str> {
    let lacks = |controller: &str| !v2.is_some_and(|c| c.enabled.contains(&controller));
    let mut wanted = Vec::new();
    for (v2_name, v1_name) in [("memory", "memory"), ("pids", "pids")] {
        if lacks(v2_name) {
            wanted.push(v1_name);
        }
    }
    if lacks("cpu") && limits.cpus.is_some() {
        wanted.push("cpu");
    }
    if v2.is_none() {
        wanted.extend(["cpu", "cpuacct"]);
    }
    wanted.dedup();
    wanted
}

/// The step's cgroups in the v1 hierarchies that hold what its cgroup v2
/// (if any) does not account.
fn place_v1(cgroups: Option<&RunCgroups>, limits: &Limits, name: &str, notices: &mut Vec<String>) -> Option<OwnedV1> {
    let hierarchies = v1::hierarchies_in(Path::new("/proc/self"));
    if hierarchies.is_empty() {
        return None;
    }
    if let Err(e) = v1::collect_garbage(&hierarchies, false) {
        notices.push(format!("warning: cleaning up earlier runs in the cgroup v1 hierarchies: {e}"));
    }
    let wanted = v1_wanted(cgroups, limits);
    if wanted.is_empty() {
        return None;
    }
    let made = V1Cgroups::create(&hierarchies, &wanted, name);
    (!made.dirs.is_empty() || !made.not_created.is_empty()).then_some(Owned(Some(made)))
}

/// The step's v1 directories as the sampler reads them.
fn probe_dirs(v1: &V1Cgroups) -> CgroupV1Dirs {
    let mut dirs = CgroupV1Dirs::default();
    dirs.memory = v1.dir_of("memory").map(Path::to_path_buf);
    dirs.pids = v1.dir_of("pids").map(Path::to_path_buf);
    dirs.cpu = v1.dir_of("cpu").map(Path::to_path_buf);
    dirs.cpuacct = v1.dir_of("cpuacct").map(Path::to_path_buf);
    dirs.blkio = v1.dir_of("blkio").map(Path::to_path_buf);
    dirs
}

/// A step placed and ready to start; see [`prepare`].
#[derive(Debug)]
pub struct Prepared {
    options: StepOptions,
    caught: Option<Caught>,
    location: Option<discover::Cgroup2>,
    cgroups: Option<OwnedCgroups>,
    /// Why the step has no cgroup of its own.
    no_cgroup: Option<String>,
    /// The step's cgroups in the v1 hierarchies (hybrid and v1-only hosts).
    v1: Option<OwnedV1>,
    enclosing: Option<Enclosing>,
    namespace: Option<HeldNamespace>,
    monitor: Monitor,
    step_recorder: Option<Recorder>,
    enclosing_recorder: Option<Recorder>,
    notices: Vec<String>,
}

/// What a transient scope is made with.
#[derive(Debug)]
struct PendingScope {
    bus: Bus,
    run_name: String,
    unit: String,
    slice: Option<String>,
    mount: PathBuf,
}

/// A transient systemd scope for the step, where systemd manages this
/// process's cgroup (as root, on a pure cgroup v2 host, no --cgroup-parent):
/// the bus connected, the scope made by [`scope_cgroups`].
/// `None` elsewhere; a notice says why when systemd is there but cannot be
/// reached.
fn pending_scope(
    options: &StepOptions,
    location: &discover::Cgroup2,
    run_name: &str,
    notices: &mut Vec<String>,
) -> Option<PendingScope> {
    let euid = rustix::process::geteuid().as_raw();
    if options.cgroup == CgroupMode::Never || options.cgroup_parent.is_some() || euid != 0 {
        return None;
    }
    let Shape::SystemdUnit { unit, slice } = shape::detect(location, euid) else { return None };
    // A hybrid host's systemd accounts on the v1 hierarchies; its scopes'
    // cgroup v2 directories get no controller.
    if !v1::hierarchies_in(Path::new("/proc/self")).is_empty() {
        return None;
    }
    match Bus::connect() {
        Ok(bus) => Some(PendingScope {
            bus,
            run_name: run_name.to_owned(),
            unit,
            slice,
            mount: location.mount_point.components().collect(),
        }),
        Err(why) => {
            notices.push(format!(
                "notice: this process runs in the systemd unit {unit}, whose cgroup holds other processes, but \
                 systemd cannot be reached for a scope of the step's own ({why})"
            ));
            None
        }
    }
}

/// The step's cgroups in a transient scope: a keeper process starts the
/// scope ([`systemd::place`]), the step gets a leaf beside it. `None`, with
/// a notice saying why, when that fails: the step then goes where it would
/// without systemd.
fn scope_cgroups(pending: PendingScope, notices: &mut Vec<String>) -> Option<RunCgroups> {
    let scope = systemd::properties::unit_name(&pending.run_name);
    let socket = pending.bus.socket;
    let placed = spawn::keeper::Keeper::start()
        .map_err(|e| format!("cannot fork the process that keeps the scope: {e}"))
        .and_then(|keeper| {
            let (caller, slice) = (Some(pending.unit.as_str()), pending.slice.as_deref());
            let request = systemd::Request { run_name: &pending.run_name, pid: keeper.pid(), caller, slice };
            systemd::place(pending.bus, &request, keeper, &pending.mount).map_err(|(_, why)| why)
        })
        .and_then(|scope| {
            RunCgroups::in_scope(scope).map_err(|e| format!("cannot make the step's leaf in its scope: {e}"))
        });
    match placed {
        Ok(cgroups) => {
            notices.push(format!(
                "notice: stepmon runs in the systemd unit {unit}, whose cgroup holds other processes: the step gets \
                 a transient scope {scope} from systemd (asked over {socket}; rung systemdScope), bound to {unit} so \
                 that stopping {unit} stops the step; it runs outside {unit}'s cgroup, so {unit}'s own limits do not \
                 cover it",
                unit = pending.unit,
            ));
            Some(cgroups)
        }
        Err(why) => {
            notices.push(format!("notice: the step gets no systemd scope: {why}"));
            None
        }
    }
}

/// Finds `program` like `execvp` would, to report "not found" before any
/// cgroup is created: a path that exists, or a file of that name in `PATH`.
fn resolve(program: &OsStr) -> Option<PathBuf> {
    spawn::lookup::find_program(program, std::env::var_os("PATH").as_deref(), Path::is_file)
        .filter(|found| found.exists())
}

/// A limit in the step's v1 hierarchy where its cgroup v2 lacks the
/// controller: directory, file and value (`memory.limit_in_bytes`,
/// `pids.max`, `cpu.cfs_quota_us` for the v2 files `memory.max`,
/// `pids.max`, `cpu.max`).
fn v1_limit<'a>(v1: Option<&'a V1Cgroups>, controller: &str, value: &str) -> Option<(&'a Path, &'static str, String)> {
    let v1 = v1?;
    match controller {
        "memory" => Some((v1.dir_of("memory")?, "memory.limit_in_bytes", value.to_owned())),
        "pids" => Some((v1.dir_of("pids")?, "pids.max", value.to_owned())),
        // `QUOTA PERIOD` of cpu.max; the v1 period is the same 100 ms default.
        "cpu" => Some((v1.dir_of("cpu")?, "cpu.cfs_quota_us", value.split_whitespace().next()?.to_owned())),
        _ => None,
    }
}

/// Writes the requested limits into the step's cgroup (which stepmon owns):
/// the cgroup v2 file where the controller is enabled there, else its v1
/// equivalent.
fn apply_limits(
    limits: &Limits,
    cgroups: Option<&RunCgroups>,
    v1: Option<&V1Cgroups>,
    no_cgroup: Option<&str>,
) -> Result<(), RunError> {
    let mut writes: Vec<(&str, &str, String)> = Vec::new();
    if let Some(bytes) = limits.memory_max {
        writes.push(("memory", "memory.max", bytes.to_string()));
    }
    if let Some(cores) = limits.cpus {
        if !(cores > 0.0 && cores.is_finite()) {
            return Err(RunError::new(format!("--cpus must be a positive number, got {cores}")));
        }
        // The kernel's default period is 100 ms; quota = cores × period.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let quota = (cores * 100_000.0).round().max(1000.0) as u64;
        writes.push(("cpu", "cpu.max", format!("{quota} 100000")));
    }
    if let Some(n) = limits.pids_max {
        writes.push(("pids", "pids.max", n.to_string()));
    }
    for (controller, file, value) in writes {
        if let Some(cgroups) = cgroups.filter(|c| c.enabled.contains(&controller)) {
            std::fs::write(cgroups.leaf.join(file), &value)
                .map_err(|e| RunError::cgroup(&format!("cannot set {file} to {value}"), &e))?;
            continue;
        }
        if let Some((dir, v1_file, v1_value)) = v1_limit(v1, controller, &value) {
            std::fs::write(dir.join(v1_file), &v1_value)
                .map_err(|e| RunError::cgroup(&format!("cannot set {v1_file} to {v1_value}"), &e))?;
            continue;
        }
        let why = match cgroups {
            Some(c) => {
                c.not_enabled.iter().find(|n| n.controller == controller).map_or_else(String::new, |n| n.reason.clone())
            }
            None => format!("the step has no cgroup of its own: {}", no_cgroup.unwrap_or("")),
        };
        return Err(RunError::new(format!("cannot set {file}: the {controller} controller is not available ({why})")));
    }
    Ok(())
}

/// Places the step: discovers the host, creates its cgroups (or says why it
/// gets none and what measures it instead), sets up its network and starts
/// recording. Nothing runs yet; [`Prepared::notices`] says what the user
/// should know before it does.
///
/// Errors: the command does not exist (`exit_code` 127), a cgroup is
/// required (`--require-cgroup`, `--cgroup-parent`, a limit) but cannot be
/// made, the network namespace cannot be set up, or `/proc` cannot be read.
pub fn prepare(options: StepOptions) -> Result<Prepared, RunError> {
    // Take over the signals before anything is created: from now on a signal
    // is forwarded to the step (or ends it right after it starts), and
    // cleanup always runs.
    let caught = if options.forward_signals {
        Some(Caught::install().map_err(|e| RunError::io("cannot install signal handlers", &e))?)
    } else {
        None
    };
    let program = options.command.first().ok_or_else(|| RunError::new("no command given"))?;
    if resolve(program).is_none() {
        let mut error = RunError::new(format!(
            "cannot run {}: command not found",
            stepmon_report::step::quote(&program.to_string_lossy())
        ));
        error.exit_code = spawn::NOT_FOUND;
        return Err(error);
    }
    if options.include_loopback && options.net == NetMode::Host {
        return Err(RunError::new("--include-loopback needs --net isolated or --net ns:PATH")
            .hint("with --net host the step's traffic cannot be told from the host's"));
    }
    if options.cgroup == CgroupMode::Never && (options.cgroup_parent.is_some() || options.limits.any()) {
        return Err(RunError::new(
            "--no-cgroup cannot go with --cgroup-parent, --memory-max, --cpus or --pids-max (they need a cgroup of the step's own)",
        ));
    }
    let location = discover::locate();
    let mut notices = Vec::new();
    // One name for the step's directories in every hierarchy.
    let run_name = placement::run_name();
    // A cgroup v2 the caller named (--cgroup-parent) must be made there; any
    // other failure moves the step down the ladder (the v1 hierarchies, the
    // process tree, the enclosing cgroup), checked against --require-cgroup
    // and the limits below.
    let scoped = location
        .as_ref()
        .ok()
        .and_then(|loc| pending_scope(&options, loc, &run_name, &mut notices))
        .and_then(|pending| scope_cgroups(pending, &mut notices));
    let (cgroups, no_cgroup) = match (&location, scoped) {
        (Ok(_), _) if options.cgroup == CgroupMode::Never => (None, Some("--no-cgroup".to_owned())),
        (Ok(_), Some(scoped)) => (Some(Owned(Some(scoped))), None),
        (Ok(location), None) => {
            let base = options.cgroup_parent.clone().unwrap_or_else(|| location.own_dir.clone());
            if let Err(e) = placement::collect_garbage(&base, false)
                && e.kind() != std::io::ErrorKind::PermissionDenied
                && e.raw_os_error() != Some(rustix::io::Errno::ROFS.raw_os_error())
            {
                notices.push(format!("warning: cleaning up earlier runs under {}: {e}", base.display()));
            }
            // Naming one's own cgroup as the parent means "it is delegated to me".
            let delegated = options.cgroup_parent.as_deref().is_some_and(|p| p == location.own_dir);
            if let Some(notice) = outside_notice(options.cgroup_parent.as_deref(), &location.own_dir) {
                notices.push(notice);
            }
            match RunCgroups::create(&base, &run_name, delegated) {
                Ok(created) => (Some(Owned(Some(created))), None),
                Err(e) if options.cgroup_parent.is_some() => {
                    return Err(RunError::cgroup(&format!("cannot create a cgroup under {}", base.display()), &e));
                }
                Err(e) => (None, Some(format!("cannot create a cgroup under {}: {e}", base.display()))),
            }
        }
        (Err(e), _) if options.cgroup_parent.is_some() => return Err(RunError::new(e.to_string())),
        (Err(e), _) => (None, Some(e.to_string())),
    };
    if let (Some(c), Ok(loc)) = (&cgroups, &location)
        && let Some(notice) = shape_notice(c.get(), loc, options.cgroup_parent.is_some())
    {
        notices.push(notice);
    }
    let v1 = if options.cgroup == CgroupMode::Never {
        None
    } else {
        place_v1(cgroups.as_ref().map(OwnedCgroups::get), &options.limits, &run_name, &mut notices)
    };
    let has_v1 = v1.as_ref().is_some_and(|v| !v.get().dirs.is_empty());
    if options.cgroup == CgroupMode::Require && cgroups.is_none() && !has_v1 {
        return Err(RunError::new(format!("{} (--require-cgroup)", no_cgroup.as_deref().unwrap_or("no cgroup")))
            .hint("a cgroup of the step's own needs root or a delegated subtree, and a writable cgroupfs"));
    }
    // In a systemd scope too the limits go on the step's leaf: the scope
    // holds the keeper as well, which TasksMax would count, and the leaf's
    // files are those of any cgroup v2 run (same code, same errors).
    apply_limits(
        &options.limits,
        cgroups.as_ref().map(OwnedCgroups::get),
        v1.as_ref().map(OwnedV1::get),
        no_cgroup.as_deref(),
    )?;
    let location = location.ok();
    let enclosing = location.as_ref().and_then(|loc| enclosing_for(loc, cgroups.as_ref().map(OwnedCgroups::get)));

    let namespace =
        match &options.net {
            NetMode::Host => None,
            NetMode::Isolated => Some(
                HeldNamespace::isolated().map_err(|e| RunError::namespace("cannot create a network namespace", &e))?,
            ),
            NetMode::Namespace(path) => Some(HeldNamespace::existing(path).map_err(|e| {
                RunError::namespace(&format!("cannot use the network namespace {}", path.display()), &e)
            })?),
        };
    let network = match &namespace {
        None => NetworkSource::SharedNamespace,
        Some(ns) => NetworkSource::Namespace { path: ns.path(), include_loopback: options.include_loopback },
    };
    let monitor = Monitor::new(MonitorOptions::default()).map_err(|e| RunError::new(e.to_string()))?;
    let v1_dirs = v1.as_ref().map_or_else(CgroupV1Dirs::default, |v| probe_dirs(v.get()));
    let step_recorder = match (&cgroups, &enclosing, &no_cgroup) {
        (Some(cgroups), _, _) => Some(monitor.record_with_v1(Some(&cgroups.get().leaf), v1_dirs, &network, "")),
        // The enclosing recorder carries the network then.
        (None, Some(_), _) if v1_dirs.is_empty() => None,
        (None, _, reason) => Some(monitor.record_with_v1(None, v1_dirs, &network, reason.as_deref().unwrap_or(""))),
    }
    .transpose()
    .map_err(|e| RunError::new(e.to_string()))?;
    let enclosing_recorder = match &enclosing {
        Some(e) => {
            let network = if step_recorder.is_some() { &NetworkSource::SharedNamespace } else { &network };
            match monitor.record(&e.dir, network) {
                Ok(recorder) => Some(recorder),
                Err(error) => {
                    notices.push(format!("warning: cannot sample the enclosing cgroup {}: {error}", e.dir.display()));
                    None
                }
            }
        }
        None => None,
    };
    if let Some(reason) = &no_cgroup
        && has_v1
    {
        let v1_names: Vec<&str> = v1
            .iter()
            .flat_map(|v| v.get().dirs.iter())
            .flat_map(|(h, _)| h.controllers.iter().map(String::as_str))
            .collect();
        notices.push(format!(
            "notice: the step gets no cgroup v2 of its own ({reason}); its cgroups in the v1 hierarchies ({}) and its process tree measure it, each number labelled with its source",
            v1_names.join(", ")
        ));
    } else if let Some(reason) = &no_cgroup {
        let around = match &enclosing {
            Some(e) if e.root => format!(" and the root cgroup {} (the whole machine)", e.dir.display()),
            Some(e) => format!(" and the enclosing cgroup {}", e.dir.display()),
            None => String::new(),
        };
        notices.push(format!(
            "notice: the step gets no cgroup of its own ({reason}); measuring its process tree{around} instead, \
             each number labelled with its source (--require-cgroup refuses instead)"
        ));
    }
    Ok(Prepared {
        options,
        caught,
        location,
        cgroups,
        no_cgroup,
        v1,
        enclosing,
        namespace,
        monitor,
        step_recorder,
        enclosing_recorder,
        notices,
    })
}

/// The notice for a step cgroup that got no controller because this
/// process's cgroup holds other processes (the no-internal-process rule):
/// the shape, what measures the step instead, what would do better.
fn shape_notice(cgroups: &RunCgroups, location: &discover::Cgroup2, parent: bool) -> Option<String> {
    let lacking = cgroups.not_enabled.iter().any(|n| !n.reason.contains("cgroup v1"));
    if parent || !lacking || !cgroups.enabled.is_empty() {
        return None;
    }
    let euid = rustix::process::geteuid().as_raw();
    let shape = shape::detect(location, euid);
    let (rung, _) = shape.follows(euid, false);
    Some(format!(
        "notice: stepmon runs in {} ({}), whose children can get no controller: the step's cgroup {} has CPU time \
         and stall only; memory and pids come from the enclosing cgroup, IO from the process tree (rung {}), \
         each number labelled; --cgroup-parent DIR at an ancestor whose cgroup.subtree_control lists the \
         controllers gives the step all of them",
        shape.words(),
        location.own_dir.display(),
        cgroups.leaf.display(),
        rung.as_str()
    ))
}

/// The notice for a `--cgroup-parent` outside this process's cgroup: the
/// step escapes what that cgroup imposes.
fn outside_notice(parent: Option<&Path>, own: &Path) -> Option<String> {
    let parent = parent?;
    let own: PathBuf = own.components().collect();
    let parent: PathBuf = parent.components().collect();
    (!parent.starts_with(&own)).then(|| {
        format!(
            "notice: the step's cgroup goes under --cgroup-parent {}, outside stepmon's own cgroup {}: that cgroup's \
             limits do not cover the step, and stopping what manages it (a cancelled job) does not stop the step \
             (stepmon still kills it when it ends)",
            parent.display(),
            own.display()
        )
    })
}

/// The enclosing cgroup, when it is a source the step's own cgroup lacks:
/// always without a step cgroup; with one, when the step's lacks memory or
/// pids accounting that this process's own cgroup has.
fn enclosing_for(location: &discover::Cgroup2, cgroups: Option<&RunCgroups>) -> Option<Enclosing> {
    let own: PathBuf = location.own_dir.components().collect();
    let mount: PathBuf = location.mount_point.components().collect();
    let needed = match cgroups {
        None => true,
        Some(c) => ["memory", "pids"].iter().any(|controller| {
            !c.enabled.contains(controller) && own != mount && own.join(format!("{controller}.current")).exists()
        }),
    };
    needed.then(|| Enclosing::open(&own, &mount))
}

fn exit_code(status: ExitStatus) -> (Option<i32>, Option<i32>, i32) {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => (Some(code), None, code),
        (None, Some(signal)) => (None, Some(signal), 128 + signal),
        (None, None) => (None, None, INTERNAL_ERROR),
    }
}

fn host(location: Option<&discover::Cgroup2>) -> Host {
    let mut host = Host::default();
    host.kernel = rustix::system::uname().release().to_string_lossy().into_owned();
    let v1 = !v1::hierarchies_in(Path::new("/proc/self")).is_empty();
    if let Some(location) = location {
        host.cgroup2_mount = location.mount_point.display().to_string();
        host.cgroup_layout = if v1 { "hybrid" } else { "unified" }.to_owned();
    } else {
        host.cgroup_layout = if v1 { "v1-only" } else { "none" }.to_owned();
    }
    host.psi = Path::new("/proc/pressure").exists();
    host
}

/// This process's CPU time so far, s (all threads; exact, unlike the 10 ms
/// ticks of /proc/self/stat).
fn own_cpu_seconds() -> f64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    #[allow(clippy::cast_precision_loss)]
    let seconds = now.tv_sec as f64 + now.tv_nsec as f64 / 1e9;
    seconds
}

impl Prepared {
    /// One-line notices for the user: how the step is placed when it gets
    /// no cgroup of its own, warnings about earlier runs' leftovers.
    #[must_use]
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// Whether the step has a cgroup of its own.
    #[must_use]
    pub fn has_own_cgroup(&self) -> bool {
        self.cgroups.is_some()
    }

    /// Runs the step to its end, kills (or with `wait_all` waits for) what it
    /// leaves behind, takes the final samples, removes its cgroups and
    /// returns the run document. The step's failure is not an error: its
    /// exit status is in [`Finished::exit_code`].
    pub fn run(mut self) -> Result<Finished, RunError> {
        let mut messages = Vec::new();
        let mut reaper = Reaper::start().map_err(|e| RunError::io("cannot become the step's child subreaper", &e))?;
        let cpu_at_start = own_cpu_seconds();
        let start = Timestamp::now();
        let started = Instant::now();
        let netns_path = self.namespace.as_ref().map(HeldNamespace::path);
        let v1_tasks = match &self.v1 {
            Some(v1) => {
                v1.get().tasks_files().map_err(|e| RunError::io("cannot open the step's cgroup v1 tasks files", &e))?
            }
            None => Vec::new(),
        };
        let target = Target {
            v1_tasks: &v1_tasks,
            cgroup: self.cgroups.as_ref().map(|c| c.get().leaf.as_path()),
            netns: self.namespace.as_ref().map(HeldNamespace::as_fd),
            netns_path: netns_path.as_deref(),
        };
        // Listening before the spawn: the step's first fork is seen.
        let mut processes = crate::processes::Session::start(self.options.processes);
        let spawned = spawn::spawn(target, &self.options.command, self.options.spawn_mode)
            .map_err(|e| RunError::new(e.to_string()))?;
        let live = self.options.live.take().and_then(|tx| match (&self.step_recorder, &self.enclosing_recorder) {
            (Some(recorder), _) => crate::live::forward(recorder, SampleOf::Step, tx),
            (None, Some(recorder)) => crate::live::forward(recorder, SampleOf::Enclosing, tx),
            (None, None) => None,
        });
        let (exit, signal, code) = match spawned {
            Spawned::NotStarted(not) => {
                if self.options.spawn_mode != spawn::Mode::Auto {
                    messages.push("started the step with fork".to_owned());
                }
                messages.push(not.message);
                (Some(not.code), None, not.code)
            }
            Spawned::Running(mut step) => {
                if self.options.spawn_mode != spawn::Mode::Auto {
                    messages.push(format!("started the step with {}", step.way));
                }
                reaper.set_main(step.pid);
                processes.set_root(step.pid.as_raw_nonzero().get());
                let status = match &self.caught {
                    Some(caught) => caught.wait_forwarding(step.pid, &mut reaper),
                    None => reaper.wait_main(),
                }
                .map_err(|e| RunError::io("waiting for the step", &e))?;
                if let Some(message) = step.failure_message() {
                    messages.push(message);
                }
                exit_code(status)
            }
        };
        processes.query_running();
        if self.options.wait_all {
            if let Some(cgroups) = &self.cgroups {
                placement::wait_unpopulated(&cgroups.get().leaf, None)
                    .map_err(|e| RunError::io("waiting for the step's processes", &e))?;
            }
            reaper.wait_all();
        } else {
            if let Some(cgroups) = &self.cgroups
                && let Err(e) = cgroups.get().kill_and_wait(KILL_TIMEOUT)
            {
                messages.push(format!("warning: killing what the step left behind: {e}"));
            }
            if let Some(v1) = &self.v1
                && let Err(e) = v1.get().kill_and_wait(KILL_TIMEOUT)
            {
                messages.push(format!("warning: killing what the step left behind in cgroup v1: {e}"));
            }
            reaper.kill_leftovers(KILL_TIMEOUT);
        }
        let mut processes = processes.finish();
        // Sampled records miss what lived between two samples; the rusage
        // of what stepmon reaped holds it (with the descendants each waited for).
        if processes.source == Some(stepmon_report::processes::ProcessSource::Sampled) {
            processes.add_reaped(reaper.reaped(), reaper.reaped_not_kept());
        }
        let wall = started.elapsed().as_secs_f64();
        let end = Timestamp::now();
        let stepmon_cpu = own_cpu_seconds() - cpu_at_start;

        let step_usage = self.step_recorder.take().map(Recorder::close_blocking);
        let enclosing_usage = self.enclosing_recorder.take().map(Recorder::close_blocking);
        self.monitor.shutdown_blocking();
        // The recordings are finalised: their streams have ended.
        if let Some(forwarding) = live {
            let _ = forwarding.join();
        }
        let cgroups = self.cgroups.take();
        let leaf = cgroups.as_ref().map(|c| c.get().leaf.clone());
        let scope_unit = cgroups.as_ref().and_then(|c| c.get().scope.as_ref().map(|s| s.unit.clone()));
        let (enabled, not_enabled) = cgroups.as_ref().map_or((Vec::new(), Vec::new()), |c| {
            (
                c.get().enabled.iter().map(|c| (*c).to_owned()).collect::<Vec<_>>(),
                c.get().not_enabled.iter().map(|n| NotEnabled::new(n.controller, n.reason.clone())).collect::<Vec<_>>(),
            )
        });
        if let Some(warning) = cgroups.and_then(OwnedCgroups::release) {
            messages.push(warning);
        }
        let v1 = self.v1.take();
        let v1_dirs: Vec<String> =
            v1.iter().flat_map(|v| v.get().dirs.iter().map(|(_, d)| d.display().to_string())).collect();
        // (v1 controller, its directory) of the step.
        let v1_controllers: Vec<(String, String)> = v1
            .iter()
            .flat_map(|v| v.get().dirs.iter())
            .flat_map(|(h, d)| h.controllers.iter().map(move |c| (c.clone(), d.display().to_string())))
            .collect();
        if let Some(warning) = v1.and_then(OwnedV1::release) {
            messages.push(warning);
        }

        let enclosing = self.enclosing.as_ref().zip(enclosing_usage.as_ref()).map(|(e, usage)| {
            let mut info = EnclosingCgroup::default();
            info.cgroup = e.dir.display().to_string();
            info.root = e.root;
            info.other_processes_at_start = e.others_at_start;
            info.stepmon_cpu_seconds = Some(stepmon_cpu);
            info.memory_peak_since_start = e.peak_since_start();
            info.samples.clone_from(&usage.resource_usage.samples);
            info
        });
        // resourceUsage holds the step's own cgroup samples only; without a
        // step cgroup it keeps the machine's numbers (sysCPUStat, sysUsage),
        // which mean the same whatever the placement.
        let mut usage: StepUsage = match (step_usage, enclosing_usage) {
            (Some(usage), _) => usage,
            (None, Some(mut usage)) => {
                usage.resource_usage.samples.clear();
                usage
            }
            (None, None) => StepUsage::default(),
        };
        if leaf.is_none() && v1_dirs.is_empty() {
            usage.resource_usage.samples.clear();
        }
        let tree = reaper.tree();
        let sources = ladder::choose(&Evidence {
            step: (leaf.is_some() || !v1_dirs.is_empty()).then_some(usage.resource_usage.samples.as_slice()),
            leaf: leaf.as_deref(),
            v2_controllers: &enabled,
            v1: &v1_controllers,
            enclosing: enclosing.as_ref(),
            tree: &tree,
            own_network: self.namespace.is_some(),
            scope: scope_unit.as_deref(),
        });
        let (cpu_seconds, max_rss_bytes) = crate::own::own_usage();
        let mut collector = Collector::default();
        collector.cpu_seconds = cpu_seconds;
        collector.max_rss_bytes = max_rss_bytes;
        collector.samples = match &enclosing {
            Some(e) if leaf.is_none() && v1_dirs.is_empty() => e.samples.len(),
            _ => usage.resource_usage.samples.len(),
        };
        collector.sys_samples = usage.sys_usage.len();
        let mut info = RunInfo::default();
        info.command = self.options.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        info.name =
            Some(self.options.name.clone().unwrap_or_else(|| stepmon_report::labels::default_name(&info.command)));
        info.labels.clone_from(&self.options.labels);
        info.exit_code = exit;
        info.signal = signal;
        info.start = Some(start);
        info.end = Some(end);
        info.cgroup = leaf.as_ref().map(|l| l.display().to_string()).unwrap_or_default();
        info.controllers = enabled;
        info.cgroup_v1.clone_from(&v1_dirs);
        info.not_measured = not_measured(
            &sources,
            v1_controllers.iter().any(|(c, _)| c == "cpu"),
            &not_enabled,
            self.no_cgroup.as_deref(),
            enclosing.as_ref(),
        );
        info.controllers_not_enabled = not_enabled;
        info.host = host(self.location.as_ref());
        info.collector = collector;
        info.placement = match (&leaf, &self.no_cgroup) {
            (Some(leaf), _) if scope_unit.is_some() => format!(
                "its own transient systemd scope {} (cgroup {})",
                scope_unit.as_deref().unwrap_or_default(),
                leaf.display()
            ),
            (Some(leaf), _) => format!("its own cgroup {}", leaf.display()),
            (None, Some(reason)) if !v1_dirs.is_empty() => {
                format!("its own cgroups in the v1 hierarchies, no cgroup v2 ({reason})")
            }
            (None, Some(reason)) => format!("no cgroup of its own ({reason})"),
            (None, None) => String::new(),
        };
        info.sources = sources;
        info.process_tree = Some(tree);
        info.enclosing_cgroup = enclosing;
        info.processes = Some(processes);
        info.summary.wall_seconds = Some(wall);
        let mut document = RunDocument::new(usage, info);
        let summary = stepmon_report::compose::summary(&document, Some(wall));
        let verdicts = Step::from_run(&document).verdicts();
        if let Some(info) = document.stepmon.as_mut() {
            info.summary = summary;
            info.verdicts = Some(verdicts);
        }
        Ok(Finished { document, exit_code: code, messages })
    }
}

/// Why each unmeasured group is missing, in words.
fn not_measured(
    sources: &Sources,
    v1_cpu: bool,
    not_enabled: &[NotEnabled],
    no_cgroup: Option<&str>,
    enclosing: Option<&EnclosingCgroup>,
) -> Vec<String> {
    // Read once, only when some controller is not accounted by a cgroup.
    let v1 = std::cell::OnceCell::new();
    let reason_of = |controller: &str| {
        if let Some(n) = not_enabled.iter().find(|n| n.controller == controller) {
            return n.reason.clone();
        }
        let v1 = v1.get_or_init(|| stepmon_sampler::cgroup::controllers_on_v1(Path::new("/proc")));
        if v1.iter().any(|c| c == controller) {
            return "bound to a cgroup v1 hierarchy on this host, where the step got no cgroup of its own".to_owned();
        }
        match (no_cgroup, enclosing) {
            (Some(why), Some(e)) => {
                format!("no cgroup of its own ({why}), and {} has no {controller} accounting", e.cgroup)
            }
            (Some(why), None) => format!("no cgroup of its own ({why})"),
            _ => format!("no {controller} files in the step's cgroup"),
        }
    };
    let mut by_reason: Vec<(String, Vec<&str>)> = Vec::new();
    let mut add = |what: &'static str, reason: String| match by_reason.iter_mut().find(|(r, _)| *r == reason) {
        Some((_, whats)) => whats.push(what),
        None => by_reason.push((reason, vec![what])),
    };
    // Throttling is the cpu controller's in the step's own cgroup, whatever
    // measured the CPU time.
    let cpu_on_v1 = not_enabled.iter().find(|n| n.controller == "cpu").is_some_and(|n| n.reason.contains("cgroup v1"));
    if v1_cpu {
        // Read from the step's cgroup v1 cpu hierarchy.
    } else if cpu_on_v1 {
        add(
            "cpu throttling (cpu controller)",
            "the cpu controller is bound to cgroup v1, where a cgroup counts only its own quota's throttling: \
             the step has no CPU limit of its own (--cpus)"
                .to_owned(),
        );
    } else if let Some(n) = not_enabled.iter().find(|n| n.controller == "cpu") {
        add("cpu throttling (cpu controller)", n.reason.clone());
    } else if sources.rung(Group::Cpu) != Some(Rung::CgroupV2) {
        let why = no_cgroup
            .map_or_else(|| "no cpu.stat for the step".to_owned(), |why| format!("no cgroup of its own ({why})"));
        add("cpu throttling (cpu controller)", why);
    }
    for (group, controller) in [(Group::Memory, "memory"), (Group::Io, "io"), (Group::Pids, "pids")] {
        if sources.get(group).is_none() {
            add(group.as_str(), reason_of(controller));
        }
    }
    let mut lines: Vec<String> =
        by_reason.into_iter().map(|(reason, whats)| format!("{}: {reason}", whats.join(", "))).collect();
    if sources.network.is_none() {
        lines.push(
            "network: the step shares the host's network namespace (use --net isolated or --net ns:PATH to count it)"
                .to_owned(),
        );
    }
    if !Path::new("/proc/pressure").exists() {
        lines.push("stall: pressure stall information is disabled on this kernel (boot with psi=1)".to_owned());
    } else if sources.pressure.is_none() {
        lines.push("stall: no cgroup's pressure files to read for the step (the machine's are in sysUsage)".to_owned());
    }
    lines
}
