//! What this host offers a step, as data (`stepmon doctor` prints it): the
//! cgroup layout, privileges, controllers, PSI, and per resource which rung
//! of the measurement ladder this host and this user get, why, and what
//! would move it up. Every fact comes from the kernel's own files, read
//! with the parser crates; what cannot be known here is reported as
//! unknown, never guessed.
//!
//! Spec: controllers and delegation
//! <https://docs.kernel.org/admin-guide/cgroup-v2.html#enabling-and-disabling>,
//! <https://docs.kernel.org/admin-guide/cgroup-v2.html#delegation>; PSI
//! <https://docs.kernel.org/accounting/psi.html>.

use std::path::Path;

use crate::cgroup::placement::CONTROLLERS;

mod checks;
pub(crate) mod container;
mod facts;
pub(crate) mod model;
mod probe;
pub(crate) mod rungs;
pub(crate) mod shape;
pub(crate) mod v1_binding;

use checks::{
    controller_check, favordynmods_check, kill_check, layout, peak_check, privileges, psi_checks, shape_check,
};
pub(crate) use facts::locate;
use facts::{gather, newline_list, v1_writable};
pub(crate) use model::{Check, Controllers, Report, Status};
pub(crate) use v1_binding::V1Binding;

/// Looks at this host (as this user) and reports.
#[must_use]
pub(crate) fn examine() -> Report {
    let facts = gather();
    let mut checks = Vec::new();
    let layout = layout(&facts);
    let (mount, own) = match &facts.location {
        Ok(loc) => (Some(loc.mount_point.clone()), Some(loc.own_dir.clone())),
        Err(_) => (None, None),
    };
    checks.push(Check::ok("kernel", facts.kernel.clone()));
    if let Some(container) = container::detect() {
        let mut check =
            Check::ok("container", format!("inside a container ({}): {}", container.runtime(), container.allows()));
        check.hint = container.ways_out();
        checks.push(check);
    }
    match &facts.location {
        Ok(loc) => {
            let options = if facts.mount_options.is_empty() { "none" } else { &facts.mount_options };
            checks.push(Check::ok(
                "cgroup2",
                format!("mounted at {} ({layout} layout; options {options})", loc.mount_point.display()),
            ));
            checks.push(Check::ok("own cgroup", loc.own_dir.display().to_string()));
        }
        Err(e) => checks.push(Check::not(
            Status::Missing,
            "cgroup2",
            e.to_string(),
            Some(
                "boot with systemd.unified_cgroup_hierarchy=1, or mount -t cgroup2 none /sys/fs/cgroup/unified".into(),
            ),
        )),
    }
    let mut step_cgroup = false;
    if let Some(own) = &own {
        step_cgroup = privileges(&facts, own, &mut checks);
        for controller in CONTROLLERS {
            checks.push(controller_check(&facts, own, controller));
        }
        checks.extend(psi_checks(own));
        checks.push(peak_check(&facts, own, "memory", "memory.peak", "memoryStat.peak"));
        checks.push(peak_check(&facts, own, "pids", "pids.peak", "stepmon.pidsPeak"));
        checks.push(kill_check(&facts));
    }
    for (name, check) in [
        ("per-process records", crate::processes::doctor::taskstats()),
        ("delay accounting", crate::processes::doctor::delay_accounting()),
    ] {
        checks.push(match check {
            Ok(detail) => Check::ok(name, detail),
            Err((reason, hint)) => Check::not(Status::Missing, name, reason, hint),
        });
    }
    let delegate_files = newline_list(Path::new("/sys/kernel/cgroup/delegate")).unwrap_or_default();
    let cgroup_features = newline_list(Path::new("/sys/kernel/cgroup/features")).unwrap_or_default();
    if let Some(mount) = &mount {
        checks.push(favordynmods_check(&facts, mount, &cgroup_features));
    }
    let shape = facts.location.as_ref().ok().map(|loc| shape::detect(loc, facts.euid));
    // A container's writable cgroup namespace root is delegated to it: a run
    // enables there what it has (RunCgroups::create).
    let namespace_root = facts
        .location
        .as_ref()
        .is_ok_and(|l| crate::cgroup::enclosing::container_root(&l.own_dir, &l.mount_point).is_some());
    let subtree_control = if namespace_root { &facts.controllers.own } else { &facts.controllers.own_subtree_control };
    let mut rungs = rungs::predict(&rungs::Inputs {
        location: facts.location.as_ref().ok(),
        step_cgroup,
        subtree_control,
        v1: &facts.controllers.cgroup_v1,
        euid: facts.euid,
        v1_writable: &v1_writable(),
        v1_enclosing: &facts::v1_enclosing(),
    });
    if let Some(shape) = &shape {
        let scope = shape_check(shape, &facts, layout, &mut checks);
        if let Some(unit) = scope {
            rungs::systemd_scope(&mut rungs, &unit);
        }
    }
    Report {
        kernel: facts.kernel.clone(),
        layout,
        cgroup2_mount: mount,
        own_cgroup: own,
        euid: facts.euid,
        controllers: facts.controllers.clone(),
        delegate_files,
        cgroup_features,
        step_cgroup,
        shape,
        rungs,
        checks,
    }
}

#[cfg(test)]
mod tests;
