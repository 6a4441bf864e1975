//! A container this process runs in, as the notices and `doctor` describe
//! it: what gave it away and what it allows a step. Plain data on every
//! platform (so that [`crate::Notice`] is one type everywhere); it is
//! detected from procfs on Linux only.

use serde::Serialize;

/// What gave the container away, most telling first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "value")]
pub enum ContainerEvidence {
    /// `/.dockerenv` exists.
    DockerEnv,
    /// `/run/.containerenv` exists.
    ContainerEnv,
    /// PID 1's environment has `container=<value>`.
    ContainerVariable(String),
    /// This process's cgroup path names a runtime (`docker`, `kubepods`,
    /// `libpod`, `containerd`, `lxc`).
    CgroupPath(String),
    /// The cgroupfs at `/sys/fs/cgroup` is mounted read-only.
    ReadOnlyCgroupfs,
    /// This process's cgroup is the root of a cgroup namespace that is not
    /// the machine's root cgroup.
    CgroupNamespace,
}

/// A container this process runs in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    /// What gave it away.
    pub evidence: Vec<ContainerEvidence>,
    /// Whether the cgroupfs is mounted read-only.
    pub read_only_cgroupfs: bool,
    /// Whether this process has `CAP_NET_ADMIN` (the taskstats listener
    /// needs it, and the initial pid namespace).
    pub net_admin: bool,
    /// Whether it shares the host's pid namespace (PID 2 is the kernel's
    /// `kthreadd`, as in the initial pid namespace only).
    pub host_pid: bool,
}

impl Container {
    /// Who made it, in words (`Docker`, `Podman`, `a container runtime`).
    #[must_use]
    pub fn runtime(&self) -> String {
        for e in &self.evidence {
            match e {
                ContainerEvidence::DockerEnv => return "Docker".to_owned(),
                ContainerEvidence::ContainerEnv => return "Podman".to_owned(),
                ContainerEvidence::ContainerVariable(v) => return v.clone(),
                _ => {}
            }
        }
        "a container runtime".to_owned()
    }

    /// What the container allows a step, in words.
    #[must_use]
    pub fn allows(&self) -> String {
        let cgroupfs = match (self.read_only_cgroupfs, self.evidence.contains(&ContainerEvidence::CgroupNamespace)) {
            (true, true) => "a cgroup namespace with a read-only cgroupfs",
            (true, false) => "a read-only cgroupfs",
            (false, true) => "a cgroup namespace with a writable cgroupfs, so each step gets a cgroup of its own",
            (false, false) => "a writable cgroupfs",
        };
        let pid = if self.host_pid { "the host's pid namespace" } else { "a pid namespace of its own" };
        let cap = if self.net_admin { "CAP_NET_ADMIN" } else { "no CAP_NET_ADMIN" };
        let records = if self.net_admin && self.host_pid {
            "so per-process records come from taskstats where it shares the host's network namespace too"
        } else {
            "so per-process records are sampled"
        };
        format!("{cgroupfs}, {pid}, {cap}, {records}")
    }

    /// Why the step gets no cgroup of its own here, in words.
    #[must_use]
    pub fn no_cgroup(&self) -> String {
        let cgroupfs = if self.read_only_cgroupfs { "a read-only cgroupfs" } else { "a cgroupfs" };
        format!("inside a container ({}) with {cgroupfs} and no cgroup2 mount", self.runtime())
    }

    /// The flags that would give the step more, in words; `None` when it
    /// has what a container can give.
    #[must_use]
    pub fn ways_out(&self) -> Option<String> {
        let mut ways = Vec::new();
        if self.read_only_cgroupfs {
            ways.push(
                "for a cgroup of the step's own, run the container with --cgroupns=private and a writable cgroupfs \
                 (Podman: --security-opt unmask=/sys/fs/cgroup), or --privileged, or give it a delegated subtree"
                    .to_owned(),
            );
        }
        // The taskstats listener needs all three (its records go to the
        // host's network namespace; `doctor` tells whether they arrive).
        if !(self.host_pid && self.net_admin) {
            ways.push(
                "for exact per-process records, with --pid=host, --network=host and --cap-add NET_ADMIN".to_owned(),
            );
        }
        (!ways.is_empty()).then(|| ways.join("; "))
    }
}
