//! The shape of the cgroup this process runs in, as data: it decides which
//! rung a step gets (the notice and `doctor` name both). A cgroup that holds
//! other processes cannot enable controllers for a child (the
//! no-internal-process rule,
//! <https://docs.kernel.org/admin-guide/cgroup-v2.html#no-internal-process-constraint>;
//! the root cgroup is exempt), so where systemd manages it the step asks
//! systemd for a scope of its own.

use serde::Serialize;
use stepmon_model::source::Rung;
use stepmon_sampler::cgroup::discover;

use crate::cgroup::systemd::{self, properties};

/// Where this process runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Shape {
    /// The cgroup2 root (exempt from the no-internal-process rule).
    RootCgroup,
    /// The root of a container's cgroup namespace: the container's cgroup,
    /// which looks like the root from inside but is not the machine's.
    ContainerNamespace {
        /// Whether its cgroupfs is writable (then it is delegated to the
        /// container: `run` moves the container's processes into a leaf
        /// and gives each step a cgroup of its own).
        writable: bool,
    },
    /// A service or scope systemd manages (a CI runner's service, a login
    /// session's scope).
    SystemdUnit {
        /// `actions.runner.….service`, `session-2.scope`.
        unit: String,
        /// Its slice, where the step's scope goes too.
        slice: Option<String>,
    },
    /// A cgroup this (unprivileged) user may write: delegated to it.
    DelegatedSubtree,
    /// A cgroup holding this process alone.
    EmptyOwnCgroup,
    /// None of these: a cgroup with other processes, not systemd's.
    Neither,
}

/// The facts [`classify`] needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts<'a> {
    /// This process's cgroup path (`/system.slice/x.service`).
    pub(crate) path: &'a str,
    /// Whether systemd is the init system.
    pub(crate) systemd: bool,
    /// Effective user ID.
    pub(crate) euid: u32,
    /// Whether this user may write the cgroup's `cgroup.procs`.
    pub(crate) writable: bool,
    /// Whether the cgroup holds processes besides this one.
    pub(crate) others: bool,
    /// Whether the cgroup is the root of this process's cgroup namespace
    /// without being the machine's root (it has `cgroup.type`).
    pub(crate) namespace_root: bool,
}

/// The shape the facts describe.
#[must_use]
pub(crate) fn classify(facts: &Facts<'_>) -> Shape {
    if facts.namespace_root {
        return Shape::ContainerNamespace { writable: facts.writable };
    }
    if facts.path.trim_matches('/').is_empty() {
        return Shape::RootCgroup;
    }
    if facts.systemd
        && let (Some(unit), slice) = properties::caller_of(facts.path)
    {
        return Shape::SystemdUnit { unit: unit.to_owned(), slice: slice.map(str::to_owned) };
    }
    if facts.euid != 0 && facts.writable {
        return Shape::DelegatedSubtree;
    }
    if facts.others { Shape::Neither } else { Shape::EmptyOwnCgroup }
}

/// This process's shape.
#[must_use]
pub(crate) fn detect(location: &discover::Cgroup2, euid: u32) -> Shape {
    let own: std::path::PathBuf = location.own_dir.components().collect();
    let path = own.strip_prefix(&location.mount_point).map_or_else(|_| String::new(), |p| format!("/{}", p.display()));
    let me = std::process::id();
    let others = std::fs::read_to_string(own.join("cgroup.procs"))
        .map(|procs| procs.lines().any(|pid| pid.trim().parse::<u32>().is_ok_and(|pid| pid != me)))
        .unwrap_or(true);
    let writable = {
        use rustix::fs::{Access, AtFlags, CWD, accessat};
        accessat(CWD, own.join("cgroup.procs"), Access::WRITE_OK, AtFlags::EACCESS).is_ok()
    };
    let namespace_root = crate::cgroup::enclosing::container_root(&own, &location.mount_point).is_some();
    classify(&Facts { path: &path, systemd: systemd::booted(), euid, writable, others, namespace_root })
}

impl Shape {
    /// In words, for the notice and `doctor`.
    #[must_use]
    pub fn words(&self) -> String {
        match self {
            Shape::RootCgroup => "the root cgroup".to_owned(),
            Shape::ContainerNamespace { writable: true } => {
                "the root of a container's cgroup namespace (the container's cgroup), writable".to_owned()
            }
            Shape::ContainerNamespace { writable: false } => {
                "the root of a container's cgroup namespace (the container's cgroup), read-only".to_owned()
            }
            Shape::SystemdUnit { unit, .. } if unit.ends_with(".scope") => format!("the systemd scope {unit}"),
            Shape::SystemdUnit { unit, .. } => format!("the systemd service {unit}"),
            Shape::DelegatedSubtree => "a delegated subtree".to_owned(),
            Shape::EmptyOwnCgroup => "a cgroup of its own, holding only stepmon".to_owned(),
            Shape::Neither => {
                "a cgroup with other processes that systemd does not manage (its children get no controller)".to_owned()
            }
        }
    }

    /// The rung a step's cgroup numbers get in this shape, and how.
    #[must_use]
    pub fn follows(&self, euid: u32, cgroup_parent: bool) -> (Rung, &'static str) {
        match self {
            _ if cgroup_parent => (Rung::CgroupV2, "a cgroup under --cgroup-parent"),
            Shape::RootCgroup => (Rung::CgroupV2, "a cgroup of the step's own below the root"),
            Shape::ContainerNamespace { writable: true } => (
                Rung::CgroupV2,
                "a cgroup of the step's own below the container's, whose processes move to a leaf \
                 (stepmon-supervisor) so that it may enable controllers",
            ),
            Shape::ContainerNamespace { writable: false } => (
                Rung::ProcessTree,
                "no cgroup of the step's own (read-only cgroupfs): the process tree and the container's cgroup",
            ),
            Shape::SystemdUnit { .. } if euid == 0 => {
                (Rung::SystemdScope, "a transient systemd scope per step, bound to the caller's unit")
            }
            Shape::SystemdUnit { .. } | Shape::Neither => (
                Rung::ProcessTree,
                "a cgroup below this one gets no controller: the process tree and the enclosing cgroup \
                 (--cgroup-parent DIR at an ancestor that distributes controllers gives a cgroup of its own)",
            ),
            Shape::DelegatedSubtree | Shape::EmptyOwnCgroup => {
                (Rung::CgroupV2, "with --cgroup-parent naming this cgroup, a cgroup of the step's own")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(path: &str) -> Facts<'_> {
        Facts { path, systemd: true, euid: 0, writable: true, others: true, namespace_root: false }
    }

    #[test]
    fn shapes_of_the_common_hosts() {
        assert_eq!(classify(&facts("/")), Shape::RootCgroup);
        assert_eq!(
            classify(&facts("/system.slice/actions.runner.x.service")),
            Shape::SystemdUnit { unit: "actions.runner.x.service".into(), slice: Some("system.slice".into()) }
        );
        assert_eq!(
            classify(&facts("/user.slice/user-0.slice/session-2.scope")),
            Shape::SystemdUnit { unit: "session-2.scope".into(), slice: Some("user-0.slice".into()) }
        );
        // Without systemd the same path is just a cgroup with other processes.
        let no_systemd = Facts { systemd: false, ..facts("/svc.slice/runner.service") };
        assert_eq!(classify(&no_systemd), Shape::Neither);
        assert_eq!(classify(&Facts { others: false, ..no_systemd }), Shape::EmptyOwnCgroup);
        assert_eq!(classify(&Facts { euid: 1000, ..no_systemd }), Shape::DelegatedSubtree);
        // PID 1's own scope is no unit a step is bound to.
        assert_eq!(classify(&facts("/init.scope")), Shape::Neither);
    }

    #[test]
    fn the_rung_that_follows_each_shape() {
        let unit = Shape::SystemdUnit { unit: "r.service".into(), slice: None };
        assert_eq!(unit.follows(0, false).0, Rung::SystemdScope);
        assert_eq!(unit.follows(1000, false).0, Rung::ProcessTree);
        assert_eq!(unit.follows(0, true).0, Rung::CgroupV2);
        assert_eq!(Shape::Neither.follows(0, false).0, Rung::ProcessTree);
        assert_eq!(Shape::RootCgroup.follows(0, false).0, Rung::CgroupV2);
        assert!(unit.words().contains("systemd service r.service"));
        // A container's cgroup seen through its cgroup namespace is "/" too.
        let container = |writable| classify(&Facts { namespace_root: true, writable, ..facts("/") });
        assert_eq!(container(true).follows(0, false).0, Rung::CgroupV2);
        assert_eq!(container(false).follows(0, false).0, Rung::ProcessTree);
    }
}
