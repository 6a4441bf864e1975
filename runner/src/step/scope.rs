//! A transient systemd scope for the step, where systemd manages this
//! process's cgroup.

use std::path::PathBuf;

use stepmon_sampler::cgroup::discover;

use super::host_view::HostView;
use crate::cgroup::placement::RunCgroups;
use crate::cgroup::systemd::{self, Bus};
use crate::host::shape::Shape;
use crate::notice::Notice;
use crate::options::{CgroupMode, StepOptions};
use crate::spawn::{self};

/// What a transient scope is made with.
#[derive(Debug)]
pub(super) struct PendingScope {
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
pub(super) fn pending_scope(
    options: &StepOptions,
    host: &HostView,
    location: &discover::Cgroup2,
    run_name: &str,
    notices: &mut Vec<Notice>,
) -> Option<PendingScope> {
    if options.cgroup == CgroupMode::Never || options.cgroup_parent.is_some() || host.euid != 0 {
        return None;
    }
    // A hybrid host's systemd accounts on the v1 hierarchies; its scopes'
    // cgroup v2 directories get no controller.
    if !host.v1.is_empty() {
        return None;
    }
    let Some(Shape::SystemdUnit { unit, slice }) = host.shape().cloned() else { return None };
    match Bus::connect() {
        Ok(bus) => Some(PendingScope {
            bus,
            run_name: run_name.to_owned(),
            unit,
            slice,
            mount: location.mount_point.components().collect(),
        }),
        Err(why) => {
            notices.push(Notice::SystemdUnreachable { unit, error: why.to_string() });
            None
        }
    }
}

/// The step's cgroups in a transient scope: a keeper process starts the
/// scope ([`systemd::place`]), the step gets a leaf beside it. `None`, with
/// a notice saying why, when that fails: the step then goes where it would
/// without systemd.
pub(super) fn scope_cgroups(pending: PendingScope, notices: &mut Vec<Notice>) -> Option<RunCgroups> {
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
            notices.push(Notice::TransientScope {
                unit: pending.unit,
                scope: scope.to_string(),
                socket: socket.to_owned(),
            });
            Some(cgroups)
        }
        Err(why) => {
            notices.push(Notice::NoScope { error: why.to_string() });
            None
        }
    }
}
