//! The checks: per fact, whether it works here, why not, and what would
//! fix it.

use std::path::Path;

use stepmon_model::source::Rung;
use stepmon_model::system::SysSample;
use stepmon_sysusage::probe::SysProbe;

use super::facts::{Facts, missing_reason, sample, v1_name, writable};
use super::{Check, Status, V1Binding, shape};
use crate::kernel::kernel_version;

/// The `host shape` check (and the `systemd` one where systemd manages
/// this cgroup); returns the caller's unit when a step gets a transient
/// scope here (root, pure cgroup v2, systemd reachable).
pub(super) fn shape_check(
    shape: &shape::Shape,
    facts: &Facts,
    layout: &str,
    checks: &mut Vec<Check>,
) -> Option<String> {
    let (rung, how) = shape.follows(facts.euid, false);
    let escape = "a step placed outside this cgroup (--cgroup-parent elsewhere, or a scope of its own) escapes \
                  this cgroup's limits and whatever stops it (a cancelled job)";
    checks.push(Check::ok("host shape", format!("{}: rung {}, {how}; {escape}", shape.words(), rung.as_str())));
    let shape::Shape::SystemdUnit { unit, .. } = shape else { return None };
    if rung != Rung::SystemdScope {
        return None;
    }
    if layout != "unified" {
        checks.push(Check::not(
            Status::Missing,
            "systemd",
            format!(
                "{layout} layout: systemd accounts on the cgroup v1 hierarchies, a scope's cgroup v2 gets no controller"
            ),
            Some("boot with systemd.unified_cgroup_hierarchy=1".to_owned()),
        ));
        return None;
    }
    match crate::cgroup::systemd::Bus::connect() {
        Ok(bus) => {
            checks.push(Check::ok(
                "systemd",
                format!("reachable over {}: each step gets a transient scope bound to {unit}", bus.socket),
            ));
            Some(unit.clone())
        }
        Err(why) => {
            checks.push(Check::not(
                Status::Missing,
                "systemd",
                format!("manages {unit}, but cannot be reached ({why})"),
                Some(if cfg!(feature = "systemd") {
                    "run stepmon where /run/systemd/private or the system bus is visible".to_owned()
                } else {
                    "build stepmon with its `systemd` feature (on by default)".to_owned()
                }),
            ));
            None
        }
    }
}

pub(super) fn layout(facts: &Facts) -> &'static str {
    let v1 = facts.v1_mounts || !facts.controllers.cgroup_v1.is_empty();
    match (&facts.location, v1) {
        (Ok(_), false) => "unified",
        (Ok(_), true) => "hybrid",
        // No `0::` line, or one without a cgroup2 mount we can see.
        (Err(_), true) => "v1-only",
        (Err(_), false) => "none",
    }
}

/// Privileges and delegation; returns whether a run cgroup can be created.
pub(super) fn privileges(facts: &Facts, own: &Path, checks: &mut Vec<Check>) -> bool {
    let delegate_hint = format!("run inside a delegated scope: {}", crate::DELEGATED_RUN);
    let nsdelegate = facts.mount_options.split(',').any(|o| o == "nsdelegate");
    let own_writable = writable(own) && writable(&own.join("cgroup.procs"));
    let can_run = match &facts.probe {
        Some(Ok(probe)) => {
            checks.push(Check::ok(
                "privileges",
                format!("euid {} can create cgroups here (made and removed {})", facts.euid, probe.dir.display()),
            ));
            true
        }
        Some(Err(e)) => {
            checks.push(Check::not(
                Status::Missing,
                "privileges",
                format!("euid {}, but creating a cgroup under {} failed: {e}", facts.euid, own.display()),
                Some("a read-only cgroup mount (containers) needs a writable one, or pass --cgroup-parent".into()),
            ));
            false
        }
        None if own_writable => {
            checks.push(Check::ok("privileges", format!("euid {}: {} is writable", facts.euid, own.display())));
            true
        }
        None => {
            checks.push(Check::not(
                Status::Missing,
                "privileges",
                format!("euid {} may not create cgroups under {}", facts.euid, own.display()),
                Some(delegate_hint.clone()),
            ));
            false
        }
    };
    let detail = format!(
        "own cgroup {} by euid {}; cgroup2 {}",
        if own_writable { "writable" } else { "not writable" },
        facts.euid,
        if nsdelegate { "mounted with nsdelegate" } else { "mounted without nsdelegate" }
    );
    checks.push(if own_writable {
        Check::ok("delegation", detail)
    } else {
        Check::not(Status::Missing, "delegation", detail, Some(delegate_hint))
    });
    can_run
}

pub(super) fn controller_check(facts: &Facts, own: &Path, controller: &'static str) -> Check {
    let c = &facts.controllers;
    let has = |list: &[String]| list.iter().any(|x| x == controller);
    let is_root = facts.location.as_ref().is_ok_and(|l| crate::cgroup::enclosing::is_root(own, &l.mount_point));
    let v1 = c.cgroup_v1.iter().find(|b| b.controller == v1_name(controller));
    let name = format!("{controller} controller");
    if has(&c.own_subtree_control) {
        return Check::ok(name, format!("enabled in {}/cgroup.subtree_control: runs get it", own.display()));
    }
    let namespace_root =
        facts.location.as_ref().is_ok_and(|l| crate::cgroup::enclosing::container_root(own, &l.mount_point).is_some());
    if has(&c.own) && namespace_root {
        let where_ = format!("available in {}, a container's cgroup (the root of its cgroup namespace)", own.display());
        return if matches!(facts.probe, Some(Ok(_))) {
            // RunCgroups::create: the container's cgroup is delegated to it.
            Check::ok(
                name,
                format!(
                    "{where_}: runs move the container's processes into {}/stepmon-supervisor and enable it for \
                     their steps",
                    own.display()
                ),
            )
        } else {
            Check::not(
                Status::Missing,
                name,
                format!("{where_}, but the cgroupfs is read-only"),
                Some(
                    "run the container with --cgroupns=private and a writable cgroupfs (Podman: --security-opt \
                     unmask=/sys/fs/cgroup), or --privileged"
                        .to_owned(),
                ),
            )
        };
    }
    if has(&c.own) {
        let hint = if is_root {
            format!("echo +{controller} > {}/cgroup.subtree_control", own.display())
        } else {
            // A cgroup with processes cannot enable controllers for its
            // children (no-internal-process rule); `run` moves itself aside
            // when given its own cgroup as --cgroup-parent.
            format!("run inside a delegated scope: {}", crate::DELEGATED_RUN)
        };
        return Check::not(
            Status::Missing,
            name,
            format!("available in {} but not in its cgroup.subtree_control", own.display()),
            Some(hint),
        );
    }
    if let Some(V1Binding { controller: v1name, hierarchy }) = v1 {
        return Check::not(
            Status::Missing,
            name,
            format!("bound to cgroup v1 hierarchy {hierarchy} ({v1name}; hybrid layout): cgroup v2 cannot account it"),
            Some(format!(
                "boot with systemd.unified_cgroup_hierarchy=1 (or cgroup_no_v1={v1name}) to give it to cgroup v2"
            )),
        );
    }
    if has(&c.root) {
        return Check::not(
            Status::Missing,
            name,
            format!("available at the cgroup2 root but not passed down to {}", own.display()),
            Some("enable it in cgroup.subtree_control of each ancestor, or use a delegated scope".to_owned()),
        );
    }
    Check::not(
        Status::Missing,
        name,
        "not available in cgroup v2 (not built into this kernel, or disabled with cgroup_disable=)",
        None,
    )
}

pub(super) fn psi_checks(own: &Path) -> Vec<Check> {
    let mut checks = Vec::new();
    let system: Option<SysSample> =
        SysProbe::open("/proc").ok().map(|mut probe| stepmon_sysusage::model::sys_sample(&probe.read(), None));
    checks.push(match system.as_ref().map(|s| s.cpu_pressure.is_some()) {
        Some(true) => Check::ok("psi (system)", "/proc/pressure/{cpu,memory,io} readable"),
        _ => Check::not(
            Status::Missing,
            "psi (system)",
            system
                .as_ref()
                .and_then(|s| s.stepmon.as_ref())
                .and_then(|ext| ext.missing.iter().find(|m| m.field == "cpuPressure"))
                .map_or_else(|| "cannot read /proc".to_owned(), |m| m.reason.to_string()),
            Some("boot with psi=1 (kernel built with CONFIG_PSI)".to_owned()),
        ),
    });
    let step = sample(own);
    checks.push(match step.as_ref().map(|s| s.cpu_stat.as_ref().is_some_and(|c| c.pressure.is_some())) {
        Some(true) => Check::ok("psi (cgroup)", format!("{}/cpu.pressure readable", own.display())),
        _ => Check::not(
            Status::Missing,
            "psi (cgroup)",
            step.as_ref()
                .and_then(|s| missing_reason(s, "cpuStat.pressure"))
                .unwrap_or_else(|| format!("cannot read {}/cpu.pressure", own.display())),
            Some("boot with psi=1; a cgroup may also turn it off in cgroup.pressure".to_owned()),
        ),
    });
    checks
}

/// `memory.peak` / `pids.peak` exist only in a cgroup with the controller
/// enabled (not the root): look at one if there is one, else say unknown.
pub(super) fn peak_check(facts: &Facts, own: &Path, controller: &str, file: &str, field: &str) -> Check {
    let c = &facts.controllers;
    let is_root = facts.location.as_ref().is_ok_and(|l| crate::cgroup::enclosing::is_root(own, &l.mount_point));
    let probe = match &facts.probe {
        Some(Ok(p)) if c.own_subtree_control.iter().any(|x| x == controller) => Some(p.dir.clone()),
        _ => None,
    };
    let dir = if !is_root && c.own.iter().any(|x| x == controller) { Some(own.to_path_buf()) } else { probe };
    let Some(dir) = dir else {
        let why = if c.cgroup_v1.iter().any(|b| b.controller == v1_name(controller)) {
            format!("unknown on this host: {controller} controller not in v2")
        } else {
            format!("unknown on this host: no {controller}-enabled cgroup to look at")
        };
        return Check::not(Status::Unknown, file, why, None);
    };
    let found = sample(&dir).map(|s| {
        let present = if controller == "memory" {
            s.memory_stat.as_ref().is_some_and(|m| m.peak.is_some())
        } else {
            s.stepmon.pids_peak.is_some()
        };
        (present, missing_reason(&s, field))
    });
    match found {
        Some((true, _)) => Check::ok(file, format!("present in {}", dir.display())),
        Some((false, reason)) => Check::not(
            Status::Missing,
            file,
            reason.unwrap_or_else(|| format!("absent in {}", dir.display())),
            Some("memory.peak needs Linux 5.19, pids.peak 6.1".to_owned()),
        ),
        None => Check::not(Status::Unknown, file, format!("cannot read {}", dir.display()), None),
    }
}

pub(super) fn kill_check(facts: &Facts) -> Check {
    let version = kernel_version(&facts.kernel);
    let by_version = version.map(|v| v >= (5, 14));
    match &facts.probe {
        Some(Ok(probe)) if probe.dir.join("cgroup.kill").exists() => {
            Check::ok("cgroup.kill", format!("present in a probe cgroup ({})", probe.dir.display()))
        }
        Some(Ok(_)) => Check::not(
            Status::Missing,
            "cgroup.kill",
            "absent in a probe cgroup (needs Linux 5.14): leftovers are killed one by one",
            None,
        ),
        _ => match by_version {
            Some(true) => {
                Check::ok("cgroup.kill", format!("kernel {} ≥ 5.14 (not verified in a cgroup)", facts.kernel))
            }
            Some(false) => Check::not(
                Status::Missing,
                "cgroup.kill",
                format!("kernel {} < 5.14: leftovers are killed one by one", facts.kernel),
                None,
            ),
            None => {
                Check::not(Status::Unknown, "cgroup.kill", format!("cannot read the version of {}", facts.kernel), None)
            }
        },
    }
}

/// Moving the step into its cgroup (a write to `cgroup.procs`) takes
/// `cgroup_threadgroup_rwsem` for writing, which waits for an RCU grace
/// period unless the hierarchy favors dynamic modifications
/// (<https://docs.kernel.org/admin-guide/cgroup-v2.html#mounting>,
/// `favordynmods`, Linux 6.0+): milliseconds added to every run.
pub(super) fn favordynmods_check(facts: &Facts, mount: &Path, features: &[String]) -> Check {
    let name = "favordynmods";
    if facts.mount_options.split(',').any(|o| o == name) {
        return Check::ok(name, format!("{} is mounted with favordynmods: cheap migrations", mount.display()));
    }
    if features.iter().any(|f| f == name) {
        return Check::not(
            Status::Missing,
            name,
            "cgroup2 is mounted without favordynmods: moving each step into its cgroup waits for an RCU grace period \
             (milliseconds of start-up latency per run)",
            Some(format!("mount -o remount,favordynmods {}", mount.display())),
        );
    }
    Check::not(
        Status::Missing,
        name,
        "this kernel has no favordynmods (Linux 6.0+): moving each step into its cgroup waits for an RCU grace period",
        None,
    )
}
