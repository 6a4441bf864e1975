//! The parts of the run document that are read when the step ends: its
//! exit status, the host, stepmon's own CPU.

use std::path::Path;
use std::process::ExitStatus;

use stepmon_model::Host;
use stepmon_sampler::cgroup::discover;

use super::host_view::HostView;
pub(super) fn exit_code(status: ExitStatus) -> (Option<i32>, Option<i32>, i32) {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => (Some(code), None, code),
        (None, Some(signal)) => (None, Some(signal), 128 + signal),
        // A reaped process has one or the other; should it have neither,
        // the status `env` and container runners give their own failures.
        (None, None) => (None, None, 125),
    }
}

pub(super) fn host(location: Option<&discover::Cgroup2>, view: &HostView) -> Host {
    let mut host = Host::default();
    host.kernel = rustix::system::uname().release().to_string_lossy().into_owned();
    let v1 = !view.v1.is_empty();
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
pub(super) fn own_cpu_seconds() -> f64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    #[allow(clippy::cast_precision_loss)]
    let seconds = now.tv_sec as f64 + now.tv_nsec as f64 / 1e9;
    seconds
}
