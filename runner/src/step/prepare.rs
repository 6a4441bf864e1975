//! Placing a step before it starts: its command resolved, its cgroups (or
//! the ladder below them), limits, network and recorders.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use stepmon_sampler::cgroup::{CgroupV1Dirs, discover};
use stepmon_sampler::{Monitor, MonitorOptions, NetworkSource};

use super::Prepared;
use super::host_view::HostView;
use super::limits::apply_limits;
use super::notices::{Deferred, outside_notice};
use super::owned::{Owned, OwnedCgroups, OwnedV1};
use super::scope::{pending_scope, scope_cgroups};
use super::v1_placement::{place_v1, probe_dirs};
use crate::cgroup::enclosing::Enclosing;
use crate::cgroup::naming;
use crate::cgroup::placement::RunCgroups;
use crate::error::{RunError, RunErrorKind};
use crate::netns::HeldNamespace;
use crate::notice::Notice;
use crate::options::{CgroupMode, NetMode, StepOptions};
use crate::processes::Hub;
use crate::signals::Caught;
use crate::spawn::{self};
use crate::ticker::Ticker;

/// Finds `program` like `execvp` would in the step, to report "not found"
/// before any cgroup is created: a path that exists, or a file of that
/// name in `path` (the step's `PATH`), a relative one from `dir` (the
/// step's working directory) when it has one.
pub(super) fn resolve(program: &OsStr, path: Option<&OsStr>, dir: Option<&Path>) -> Option<PathBuf> {
    let from_dir = |p: &Path| dir.filter(|_| p.is_relative()).map_or_else(|| p.to_path_buf(), |dir| dir.join(p));
    spawn::lookup::find_program(program, path, |p| from_dir(p).is_file()).filter(|found| from_dir(found).exists())
}

/// Places the step: discovers the host, creates its cgroups (or says why it
/// gets none and what measures it instead), sets up its network and starts
/// recording. Nothing runs yet; [`Prepared::notices`] says what the user
/// should know before it does.
///
/// Errors ([`RunError::kind`](crate::RunError::kind)): the command does not
/// exist (`NotFound`), a cgroup is required (`CgroupMode::Require`:
/// `NoCgroup`) or its parent or a limit cannot be used (`Placement`), the
/// network namespace cannot be set up (`Namespace`), options that do not go
/// together (`InvalidOptions`), or `/proc` cannot be read (`Io`).
pub(crate) fn prepare(options: StepOptions) -> Result<Prepared, RunError> {
    // First: the listener's thread sets its sockets up while this one
    // places the step.
    let hub = crate::processes::Hub::start_for_one_step();
    prepare_with(options, None, Arc::new(HostView::read()), Some(hub), None)
}

/// [`prepare`] with the sampler of a [`crate::Runner`] (`None`: one of the
/// step's own), its view of the host, its taskstats listener and its
/// thread for procfs readings (`None`: the step's own).
pub(crate) fn prepare_with(
    options: StepOptions,
    monitor: Option<Monitor>,
    host: Arc<HostView>,
    hub: Option<Result<Hub, String>>,
    ticker: Option<Ticker>,
) -> Result<Prepared, RunError> {
    let called = std::time::Instant::now();
    // Take over the signals before anything is created: from now on a signal
    // is forwarded to the step (or ends it right after it starts), and
    // cleanup always runs.
    let caught = if options.forward_signals {
        Some(Caught::install().map_err(|e| RunError::io("cannot install signal handlers", &e))?)
    } else {
        None
    };
    let program =
        options.command.first().ok_or_else(|| RunError::new(RunErrorKind::InvalidOptions, "no command given"))?;
    // A working directory that cannot be entered is the child's to report
    // (a command that did not start), whatever the program.
    let dir = options.action.current_dir.as_deref();
    if dir.is_none_or(Path::is_dir) && resolve(program, options.action.path().as_deref(), dir).is_none() {
        return Err(RunError::new(
            RunErrorKind::NotFound,
            format!("cannot run {}: command not found", stepmon_model::labels::quote(&program.to_string_lossy())),
        ));
    }
    if options.include_loopback && options.net == NetMode::Host {
        return Err(RunError::new(
            RunErrorKind::InvalidOptions,
            "counting loopback traffic needs a network namespace of the step's own (NetMode::Isolated or \
             NetMode::Namespace): on the host's, the step's traffic cannot be told from the host's",
        ));
    }
    if options.cgroup == CgroupMode::Never && (options.cgroup_parent.is_some() || options.limits.any()) {
        return Err(RunError::new(
            RunErrorKind::InvalidOptions,
            "CgroupMode::Never cannot go with a cgroup parent or limits (they need a cgroup of the step's own)",
        ));
    }
    let location = host.location.as_ref();
    let mut notices = Vec::new();
    // One name for the step's directories in every hierarchy.
    let run_name = naming::run_name();
    let mut sweeps = super::Sweeps::default();
    // A cgroup v2 the caller named (--cgroup-parent) must be made there; any
    // other failure moves the step down the ladder (the v1 hierarchies, the
    // process tree, the enclosing cgroup), checked against --require-cgroup
    // and the limits below.
    let scoped = location
        .as_ref()
        .ok()
        .and_then(|loc| pending_scope(&options, &host, loc, &run_name, &mut notices))
        .and_then(|pending| scope_cgroups(pending, &mut notices));
    let (cgroups, no_cgroup) = match (&location, scoped) {
        (Ok(_), _) if options.cgroup == CgroupMode::Never => (None, Some("--no-cgroup".to_owned())),
        (Ok(_), Some(scoped)) => (Some(Owned(Some(scoped))), None),
        (Ok(location), None) => {
            // A container's writable cgroup namespace root is delegated to it
            // (also when an earlier run moved this process into its leaf).
            let container = host.container_root.clone();
            // Started by a step that nests steps: beside its command's leaf.
            let own = crate::cgroup::placement::nesting_base(&location.own_dir);
            let base = options.cgroup_parent.clone().or_else(|| container.clone()).unwrap_or_else(|| own.to_path_buf());
            sweeps.base = Some(base.clone());
            // Naming one's own cgroup as the parent means "it is delegated
            // to me"; so is the root of a container's cgroup namespace.
            let delegated = options.cgroup_parent.as_deref().map_or(container.is_some(), |p| p == location.own_dir);
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
        (Err(e), _) if options.cgroup_parent.is_some() => {
            return Err(RunError::new(RunErrorKind::Placement, e.to_string()));
        }
        (Err(e), _) => match host.container() {
            Some(container) if container.read_only_cgroupfs => (None, Some(container.no_cgroup())),
            _ => (None, Some(e.to_string())),
        },
    };
    let cgroups = match cgroups {
        Some(mut owned) if options.nested_steps => match owned.get_mut().nest() {
            Ok(()) => Some(owned),
            Err(e) => {
                drop(owned);
                return Err(RunError::cgroup("cannot make the leaf for the command of a step that nests steps", &e));
            }
        },
        cgroups => cgroups,
    };
    // The no-controllers notice, if it applies, needs the shape of this
    // process's cgroup (five reads): made when the notices are asked for.
    let mut deferred = Vec::new();
    if cgroups.is_some() {
        deferred.push((notices.len(), Deferred::NoControllers));
    }
    let v1 = if options.cgroup == CgroupMode::Never {
        None
    } else {
        sweeps.v1 = !host.v1.is_empty();
        place_v1(&host, cgroups.as_ref().map(OwnedCgroups::get), &options.limits, &run_name)
    };
    let has_v1 = v1.as_ref().is_some_and(|v| !v.get().dirs.is_empty());
    if options.cgroup == CgroupMode::Require && cgroups.is_none() && !has_v1 {
        let why = no_cgroup.unwrap_or_else(|| "no cgroup".to_owned());
        return Err(RunError::with_source(
            RunErrorKind::NoCgroup,
            "a cgroup of the step's own is required, and none could be made",
            std::io::Error::other(why),
        ));
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
    let location = location.ok().cloned();
    let enclosing = match &location {
        _ if !options.enclosing => None,
        Some(loc) => enclosing_for(loc, cgroups.as_ref().map(OwnedCgroups::get), &host.v1),
        // No cgroup v2 (a container on a hybrid or v1 host): its v1 cgroups.
        None if !has_v1 => Enclosing::open_v1(&host.v1),
        None => None,
    };

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
    let own_monitor = monitor.is_none();
    let monitor = match monitor {
        Some(monitor) => monitor,
        None => Monitor::new(MonitorOptions::default())
            .map_err(|e| RunError::with_source(RunErrorKind::Io, "cannot start the step's sampler", e))?,
    };
    let v1_dirs = v1.as_ref().map_or_else(CgroupV1Dirs::default, |v| probe_dirs(v.get()));
    let step_recorder = match (&cgroups, &enclosing, &no_cgroup) {
        (Some(cgroups), _, _) => Some(monitor.record_with_v1(Some(&cgroups.get().leaf), v1_dirs, &network, "")),
        // The enclosing recorder carries the network then.
        (None, Some(_), _) if v1_dirs.is_empty() => None,
        (None, _, reason) => Some(monitor.record_with_v1(None, v1_dirs, &network, reason.as_deref().unwrap_or(""))),
    }
    .transpose()
    .map_err(|e| RunError::with_source(RunErrorKind::Io, "cannot start recording the step", e))?;
    let enclosing_recorder = match &enclosing {
        Some(e) => {
            let network = if step_recorder.is_some() { &NetworkSource::SharedNamespace } else { &network };
            match e.record(&monitor, network) {
                Ok(recorder) => Some(recorder),
                Err(error) => {
                    notices.push(Notice::EnclosingUnreadable { cgroup: e.dir.clone(), error: error.to_string() });
                    None
                }
            }
        }
        None => None,
    };
    if let Some(reason) = &no_cgroup
        && has_v1
    {
        let v1_names: Vec<String> =
            v1.iter().flat_map(|v| v.get().dirs.iter()).flat_map(|(h, _)| h.controllers.iter().cloned()).collect();
        notices.push(Notice::NoCgroupV2 { reason: reason.clone(), v1: v1_names });
    } else if no_cgroup.is_some() {
        // Whether a container is why needs its detection (six reads inside
        // one): made when the notices are asked for.
        deferred.push((notices.len(), Deferred::NoCgroup));
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
        own_monitor,
        step_recorder,
        placing: called.elapsed(),
        enclosing_recorder,
        notices,
        deferred,
        all_notices: std::sync::OnceLock::new(),
        host,
        hub,
        ticker,
        sweeps,
    })
}

/// The enclosing cgroup, when it is a source the step's own cgroup lacks:
/// always without a step cgroup; with one, when the step's lacks memory or
/// pids accounting that this process's own cgroup has.
pub(super) fn enclosing_for(
    location: &discover::Cgroup2,
    cgroups: Option<&RunCgroups>,
    v1: &[crate::cgroup::v1::Hierarchy],
) -> Option<Enclosing> {
    let own: PathBuf = location.own_dir.components().collect();
    let mount: PathBuf = location.mount_point.components().collect();
    let needed = match cgroups {
        None => true,
        Some(c) => ["memory", "pids"].iter().any(|controller| {
            !c.enabled.contains(controller) && own != mount && own.join(format!("{controller}.current")).exists()
        }),
    };
    needed.then(|| Enclosing::open(&own, &mount, v1))
}
