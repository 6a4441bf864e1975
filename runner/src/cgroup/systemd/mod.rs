//! The step's cgroup on a host where systemd manages this process's cgroup
//! (a CI runner's service, a login session's scope): such a cgroup holds
//! other processes, so by the no-internal-process rule
//! (<https://docs.kernel.org/admin-guide/cgroup-v2.html#no-internal-process-constraint>)
//! a cgroup made below it can get no controller. systemd is asked for a
//! transient scope instead (`StartTransientUnit`, as `systemd-run --scope`,
//! runc's systemd driver and BenchExec do), with `Delegate=yes`, bound to
//! the caller's unit (stopping a CI runner's service stops the step).
//!
//! A scope needs a process when it is started, and systemd stops it (and
//! removes its cgroup) as soon as it holds none (systemd.scope(5)). So the
//! scope is started with a [`Keeper`] process, not the step: the keeper
//! then moves into `<scope>/keeper`, and the step gets a leaf
//! `<scope>/step` made like any of stepmon's own cgroups
//! (`RunCgroups::in_scope`, which holds the scope). The step is
//! spawned straight into its leaf, and when its last process exits the
//! scope stays (the keeper is in it) until stepmon has taken the final
//! sample and removed the leaf; then the keeper is released and the scope
//! stopped. `gc` stops leftovers.
//!
//! Only the D-Bus calls ([`bus`]) talk to systemd; [`properties`] is the
//! request as data.

#[cfg(feature = "systemd")]
pub(crate) mod bus;
/// Without the `systemd` feature: no D-Bus client, and every host falls
/// back to the next rung, saying why.
#[cfg(not(feature = "systemd"))]
#[path = "bus_off.rs"]
pub(crate) mod bus;
pub(crate) mod properties;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use stepmon_cgroupfs_parse::proc_cgroup::unified_entry;

use crate::cgroup::naming::owner_gone;
use crate::spawn::keeper::Keeper;
pub(crate) use bus::Bus;
pub(crate) use properties::Request;

/// The sub-cgroup of the scope the keeper moves to.
pub(crate) const KEEPER_CGROUP: &str = "keeper";

/// How long systemd gets to move the keeper into its scope (the job
/// runs in PID 1's event loop; under emulation, seconds).
const PLACE_TIMEOUT: Duration = Duration::from_secs(20);

/// Whether systemd is the init system (`sd_booted()`: `/run/systemd/system`
/// exists; or PID 1 is named systemd, which hiding `/run/systemd` does not
/// change).
#[must_use]
pub(crate) fn booted() -> bool {
    Path::new("/run/systemd/system").is_dir()
        || std::fs::read("/proc/1/comm").is_ok_and(|comm| comm.trim_ascii() == b"systemd")
}

/// The step's transient scope, started, its keeper in `<cgroup>/keeper`.
#[derive(Debug)]
pub(crate) struct Scope {
    bus: Bus,
    /// `stepmon-run.….scope`.
    pub(crate) unit: String,
    /// Its cgroup directory (read back from where systemd put the keeper).
    pub(crate) cgroup: PathBuf,
    /// Keeps the scope populated until [`Scope::stop`] (a lock because
    /// stopping takes `&self`: it is retried).
    keeper: Mutex<Keeper>,
}

/// The cgroup v2 path (`/system.slice/x.scope`) of process `pid`.
fn cgroup_of(pid: u32) -> Option<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/cgroup")).ok()?;
    unified_entry(&bytes).ok().flatten().map(|entry| String::from_utf8_lossy(entry.path).into_owned())
}

/// Asks systemd for the scope `request` describes, holding `keeper`
/// (`request.pid`), waits until the keeper is in its cgroup and moves it on
/// into the sub-cgroup [`KEEPER_CGROUP`]; `mount` is the cgroup2 mount
/// point. On an error the scope is stopped, the keeper released, and the
/// bus comes back.
pub(crate) fn place(bus: Bus, request: &Request<'_>, keeper: Keeper, mount: &Path) -> Result<Scope, (Bus, String)> {
    let unit = properties::unit_name(request.run_name);
    if let Err(e) = bus.start_transient_unit(&unit, &request.properties()) {
        let why = format!("systemd refused the scope {unit} (asked over {}): {e}", bus.socket);
        return Err((bus, why));
    }
    let start = Instant::now();
    let suffix = format!("/{unit}");
    let mut pause = Duration::from_millis(1);
    let cgroup = loop {
        match cgroup_of(request.pid) {
            Some(path) if path.ends_with(&suffix) => break mount.join(path.trim_start_matches('/')),
            Some(_) if start.elapsed() < PLACE_TIMEOUT => {}
            found => {
                let _ = bus.stop_unit(&unit);
                let at = found.unwrap_or_else(|| "gone".to_owned());
                let why = format!(
                    "systemd started {unit} but did not move stepmon's keeper process into it within {} s (it is \
                     in {at})",
                    PLACE_TIMEOUT.as_secs()
                );
                return Err((bus, why));
            }
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    let scope = Scope { bus, unit, cgroup, keeper: Mutex::new(keeper) };
    // systemd delegates the scope's cgroup to stepmon (Delegate=yes): "the
    // delegated cgroup subtree is owned by the unit's process(es)", which
    // may create sub-cgroups, move its processes between them and enable
    // controllers in them — systemd's "Control Group APIs and Delegation"
    // (<https://systemd.io/CGROUP_DELEGATION/>). The keeper leaves the
    // scope's own cgroup so that it may enable controllers for the step's
    // leaf (the no-internal-process rule).
    let dir = scope.cgroup.join(KEEPER_CGROUP);
    let moved = std::fs::create_dir(&dir)
        .and_then(|()| std::fs::write(dir.join("cgroup.procs"), request.pid.to_string()))
        .map_err(|e| format!("cannot move stepmon's keeper process into {}: {e}", dir.display()));
    match moved {
        Ok(()) => Ok(scope),
        Err(why) => {
            let _ = scope.stop(Duration::from_secs(1));
            Err((scope.bus, why))
        }
    }
}

impl Scope {
    /// Releases the keeper and stops the scope (systemd kills what is left
    /// and removes its cgroup), then waits until the cgroup is gone, at
    /// most `timeout`. A scope that is already gone (collected once the
    /// keeper exited) is done. Call it once the step's leaf is removed.
    pub(crate) fn stop(&self, timeout: Duration) -> io::Result<()> {
        self.keeper.lock().unwrap_or_else(std::sync::PoisonError::into_inner).release();
        // Empty now; systemd may beat this rmdir to it.
        let _ = std::fs::remove_dir(self.cgroup.join(KEEPER_CGROUP));
        if let Err(e) = self.bus.stop_unit(&self.unit) {
            let gone = bus::is_no_such_unit(&e);
            if !gone && self.cgroup.exists() {
                return Err(io::Error::other(format!("stopping {}: {e}", self.unit)));
            }
        }
        let start = Instant::now();
        while self.cgroup.exists() {
            if start.elapsed() > timeout {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("{} still exists after stopping {}", self.cgroup.display(), self.unit),
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }
}

/// Stops the scopes of dead stepmon runs (`stepmon-run.*.scope` whose
/// owner is gone); returns their names. Connects only where systemd is the
/// init system; elsewhere there is nothing to collect.
pub(crate) fn collect_garbage(dry_run: bool) -> Result<Vec<String>, String> {
    if !booted() {
        return Ok(Vec::new());
    }
    let bus = Bus::connect()?;
    let units = bus.units("stepmon-run.*.scope").map_err(|e| format!("listing stepmon's scopes: {e}"))?;
    let mut stopped = Vec::new();
    for (unit, _state) in units {
        if properties::run_name_of(&unit).and_then(owner_gone) != Some(true) {
            continue;
        }
        if !dry_run {
            bus.stop_unit(&unit).map_err(|e| format!("stopping {unit}: {e}"))?;
        }
        stopped.push(unit);
    }
    Ok(stopped)
}
