//! The step's cgroup on a host where systemd manages this process's cgroup
//! (a CI runner's service, a login session's scope): such a cgroup holds
//! other processes, so by the no-internal-process rule
//! (<https://docs.kernel.org/admin-guide/cgroup-v2.html#no-internal-process-constraint>)
//! a cgroup made below it can get no controller. systemd is asked for a
//! transient scope holding the step instead (`StartTransientUnit`, as
//! `systemd-run --scope`, runc's systemd driver and BenchExec do): the
//! step's first process waits before `exec` ([`crate::spawn::Hold`]) until
//! systemd has moved it into the scope, whose cgroup is then the step's own,
//! with every controller its slices enable for accounting. The scope is
//! bound to the caller's unit (stopping a CI runner's service stops the
//! step) and stopped at the end; `gc` stops leftovers.
//!
//! Only the D-Bus calls ([`bus`]) talk to systemd; [`properties`] is the
//! request as data.

pub mod bus;
pub mod properties;

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use stepmon_cgroupfs_parse::proc_cgroup::unified_entry;

use crate::cgroup::placement::owner_gone;
pub use bus::Bus;
pub use properties::Request;

/// How long systemd gets to move the held process into its scope (the job
/// runs in PID 1's event loop; under emulation, seconds).
const PLACE_TIMEOUT: Duration = Duration::from_secs(20);

/// Whether systemd is the init system (`sd_booted()`: `/run/systemd/system`
/// exists; or PID 1 is named systemd, which hiding `/run/systemd` does not
/// change).
#[must_use]
pub fn booted() -> bool {
    Path::new("/run/systemd/system").is_dir()
        || std::fs::read("/proc/1/comm").is_ok_and(|comm| comm.trim_ascii() == b"systemd")
}

/// The step's transient scope, started and holding the step.
#[derive(Debug)]
pub struct Scope {
    bus: Bus,
    /// `stepmon-run.….scope`.
    pub unit: String,
    /// Its cgroup directory (read back from where systemd put the step).
    pub cgroup: PathBuf,
}

/// The cgroup v2 path (`/system.slice/x.scope`) of process `pid`.
fn cgroup_of(pid: u32) -> Option<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/cgroup")).ok()?;
    unified_entry(&bytes).ok().flatten().map(|entry| String::from_utf8_lossy(entry.path).into_owned())
}

/// Asks systemd for the scope `request` describes and waits until the held
/// process is in its cgroup; `mount` is the cgroup2 mount point. On an
/// error the process stays where it is (and the bus comes back with it).
pub fn place(bus: Bus, request: &Request<'_>, mount: &Path) -> Result<Scope, (Bus, String)> {
    let unit = properties::unit_name(request.run_name);
    if let Err(e) = bus.start_transient_unit(&unit, &request.properties()) {
        let why = format!("systemd refused the scope {unit} (asked over {}): {e}", bus.socket);
        return Err((bus, why));
    }
    let start = Instant::now();
    let suffix = format!("/{unit}");
    let mut pause = Duration::from_millis(1);
    loop {
        match cgroup_of(request.pid) {
            Some(path) if path.ends_with(&suffix) => {
                let cgroup = mount.join(path.trim_start_matches('/'));
                return Ok(Scope { bus, unit, cgroup });
            }
            Some(_) if start.elapsed() < PLACE_TIMEOUT => {}
            found => {
                let _ = bus.stop_unit(&unit);
                let at = found.unwrap_or_else(|| "gone".to_owned());
                let why = format!(
                    "systemd started {unit} but did not move the step into it within {} s (it is in {at})",
                    PLACE_TIMEOUT.as_secs()
                );
                return Err((bus, why));
            }
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

impl Scope {
    /// Stops the scope (systemd kills what is left and removes its cgroup)
    /// and waits until the cgroup is gone, at most `timeout`. A scope that
    /// is already gone (collected when its last process exited) is done.
    pub fn stop(&self, timeout: Duration) -> io::Result<()> {
        if let Err(e) = self.bus.stop_unit(&self.unit) {
            let gone = matches!(&e, zbus::Error::MethodError(name, _, _) if name.as_str() == "org.freedesktop.systemd1.NoSuchUnit");
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
pub fn collect_garbage(dry_run: bool) -> Result<Vec<String>, String> {
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
