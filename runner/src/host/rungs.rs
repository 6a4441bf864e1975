//! Which rung of the measurement ladder ([`crate`]'s docs,
//! [`stepmon_model::source::Rung`]) a step gets on this host, per
//! resource, why, and what would move it up — predicted from the same facts
//! `stepmon run` acts on. The run itself decides from what its samples hold.

use std::path::{Path, PathBuf};

use serde::Serialize;
use stepmon_model::source::Rung;
use stepmon_sampler::cgroup::discover;

use super::V1Binding;

/// One resource's rung.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRung {
    /// `cpu`, `memory`, `io`, `pids`, `pressure`, `network`.
    pub resource: &'static str,
    /// The rung, `None` when not measured.
    pub rung: Option<Rung>,
    /// Why this rung (or why not measured).
    pub why: String,
    /// What would move it up, if anything can.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_improve: Option<String>,
}

/// The facts the prediction needs.
#[derive(Debug)]
pub(crate) struct Inputs<'a> {
    /// The cgroup2 mount and this process's cgroup, if found.
    pub(crate) location: Option<&'a discover::Cgroup2>,
    /// Whether a cgroup of the step's own can be created.
    pub(crate) step_cgroup: bool,
    /// `cgroup.subtree_control` of this process's cgroup (what a step's run
    /// parent may enable).
    pub(crate) subtree_control: &'a [String],
    /// Controllers bound to cgroup v1 hierarchies.
    pub(crate) v1: &'a [V1Binding],
    /// Effective user ID.
    pub(crate) euid: u32,
    /// v1 controllers whose hierarchy lets this process create a cgroup
    /// below its own (hybrid and v1-only hosts).
    pub(crate) v1_writable: &'a [String],
    /// This process's own (non-root) cgroups in the v1 hierarchies that
    /// hold memory or pids, as (controller, directory): the enclosing
    /// cgroup there (a container's on a hybrid host).
    pub(crate) v1_enclosing: &'a [(String, PathBuf)],
}

fn rung(
    resource: &'static str,
    rung: Option<Rung>,
    why: impl Into<String>,
    to_improve: Option<String>,
) -> ResourceRung {
    ResourceRung { resource, rung, why: why.into(), to_improve }
}

/// Rungs of cpu, memory, io, pids, pressure and network on this host.
#[must_use]
pub(crate) fn predict(inputs: &Inputs<'_>) -> Vec<ResourceRung> {
    let own: Option<PathBuf> = inputs.location.map(|l| l.own_dir.components().collect());
    // A cgroup namespace's root (a container's cgroup) is not the machine's.
    let root = inputs
        .location
        .is_some_and(|l| own.as_deref().is_some_and(|own| crate::cgroup::enclosing::is_root(own, &l.mount_point)));
    let around = |file: &str| own.as_deref().filter(|_| !root).is_some_and(|dir: &Path| dir.join(file).exists());
    let enabled = |controller: &str| inputs.step_cgroup && inputs.subtree_control.iter().any(|c| c == controller);
    let on_v1 = |controller: &str| {
        let v1_name = if controller == "io" { "blkio" } else { controller };
        inputs.v1.iter().any(|b| b.controller == v1_name)
    };
    let up = if inputs.location.is_none() {
        Some("mount cgroup2 (systemd.unified_cgroup_hierarchy=1) for a cgroup of the step's own".to_owned())
    } else if inputs.euid != 0 {
        Some(format!("run as root, or in a delegated scope: {}", crate::DELEGATED_RUN))
    } else {
        Some("a writable cgroupfs (a container started with a private, writable cgroup mount)".to_owned())
    };
    let no_own = |what: &str| {
        if inputs.step_cgroup {
            format!("the step's cgroup has no {what} controller here")
        } else {
            "no cgroup of the step's own can be created here".to_owned()
        }
    };
    let mut rungs = Vec::new();
    if inputs.step_cgroup {
        rungs.push(rung("cpu", Some(Rung::CgroupV2), "the step's own cgroup (cpu.stat)", None));
    } else if inputs.location.is_none() && inputs.v1_writable.iter().any(|c| c == "cpuacct") {
        rungs.push(rung("cpu", Some(Rung::CgroupV1), "the step's own cgroup in the cpuacct cgroup v1 hierarchy", None));
    } else {
        rungs.push(rung(
            "cpu",
            Some(Rung::ProcessTree),
            format!("{}: wait4 rusage of its processes", no_own("cpu")),
            up.clone(),
        ));
    }
    let v1_rung = |resource: &str| -> Option<ResourceRung> {
        (on_v1(resource) && inputs.v1_writable.iter().any(|c| c == resource)).then(|| ResourceRung {
            resource: match resource {
                "memory" => "memory",
                _ => "pids",
            },
            rung: Some(Rung::CgroupV1),
            why: format!("the step's own cgroup in the {resource} cgroup v1 hierarchy"),
            to_improve: None,
        })
    };
    for (resource, file) in [("memory", "memory.current"), ("pids", "pids.current")] {
        if let Some(v1) = v1_rung(resource).filter(|_| !enabled(resource)) {
            rungs.push(v1);
            continue;
        }
        let v1_hint = on_v1(resource).then(|| {
            "bound to a cgroup v1 hierarchy (hybrid layout): boot with systemd.unified_cgroup_hierarchy=1".to_owned()
        });
        rungs.push(if enabled(resource) {
            rung(resource, Some(Rung::CgroupV2), format!("the step's own cgroup ({resource} controller)"), None)
        } else if around(file) {
            rung(
                resource,
                Some(Rung::EnclosingCgroup),
                format!(
                    "{}; the enclosing cgroup {} has {file} (it includes other processes)",
                    no_own(resource),
                    display(&own)
                ),
                v1_hint.or_else(|| up.clone()),
            )
        } else if let Some((_, dir)) = inputs.v1_enclosing.iter().find(|(c, _)| c == resource) {
            let bound = if resource == "memory" {
                "memory.max_usage_in_bytes, never reset, as an upper bound beside the usage at the start"
            } else {
                "pids.current sampled (a lower bound) or pids.peak"
            };
            rung(
                resource,
                Some(Rung::EnclosingCgroup),
                format!(
                    "{}; this process's cgroup in the {resource} cgroup v1 hierarchy {} (it includes other \
                     processes): {bound}",
                    no_own(resource),
                    dir.display()
                ),
                v1_hint.or_else(|| up.clone()),
            )
        } else {
            let why = if on_v1(resource) {
                format!(
                    "the {resource} controller is bound to cgroup v1 on this host and no cgroup v2 here accounts it"
                )
            } else {
                format!("{}, and the enclosing cgroup has no {file}", no_own(resource))
            };
            rung(resource, None, why, v1_hint.or_else(|| up.clone()))
        });
    }
    rungs.push(if enabled("io") {
        rung("io", Some(Rung::CgroupV2), "the step's own cgroup (io.stat)", None)
    } else if on_v1("io") {
        rung(
            "io",
            Some(Rung::ProcessTree),
            "blkio (cgroup v1) counts only devices with a throttle rule, which stepmon never sets: storage bytes of \
             the step's processes (task IO accounting)",
            None,
        )
    } else {
        rung(
            "io",
            Some(Rung::ProcessTree),
            format!("{}: storage bytes of its processes (task IO accounting)", no_own("io")),
            None,
        )
    });
    let psi = Path::new("/proc/pressure/cpu").exists();
    rungs.push(if !psi {
        rung("pressure", None, "PSI is disabled on this kernel", Some("boot with psi=1".to_owned()))
    } else if inputs.step_cgroup {
        rung("pressure", Some(Rung::CgroupV2), "the step's own cgroup (cpu/memory/io.pressure)", None)
    } else if own.as_deref().is_some_and(|dir| dir.join("cpu.pressure").exists()) {
        let whose =
            if root { "the root cgroup: the whole machine" } else { "the enclosing cgroup, with its other processes" };
        rung("pressure", Some(Rung::EnclosingCgroup), whose, up.clone())
    } else {
        rung(
            "pressure",
            Some(Rung::Machine),
            "no cgroup pressure files readable: the whole machine's (/proc/pressure), every task's stall",
            up.clone(),
        )
    });
    rungs.push(rung(
        "network",
        Some(Rung::NetworkNamespace),
        "counted with --net isolated or --net ns:PATH (an isolated namespace needs CAP_SYS_ADMIN); not with --net host",
        None,
    ));
    rungs
}

/// The rungs where each step gets a transient systemd scope bound to
/// `unit`: every cgroup group from the scope (network stays as it is).
pub(crate) fn systemd_scope(rungs: &mut [ResourceRung], unit: &str) {
    // Pressure only where PSI is on at all.
    for r in rungs.iter_mut().filter(|r| r.resource != "network" && (r.resource != "pressure" || r.rung.is_some())) {
        r.rung = Some(Rung::SystemdScope);
        r.why = format!("the step's own transient systemd scope (bound to {unit}, every controller accounted)");
        r.to_improve = None;
    }
}

fn display(dir: &Option<PathBuf>) -> String {
    dir.as_deref().map_or_else(String::new, |d| d.display().to_string())
}
