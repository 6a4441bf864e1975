//! Whether this process runs inside a container, from what runtimes leave
//! behind: `/.dockerenv` (Docker), `/run/.containerenv` (Podman),
//! `container=` in PID 1's environment (Podman, systemd-nspawn, LXC; the
//! convention of <https://systemd.io/CONTAINER_INTERFACE/>), a cgroup path
//! naming a runtime, a read-only cgroupfs (runc's default spec mounts
//! `/sys/fs/cgroup` read-only, Docker's default too), and a cgroup
//! namespace: this process's cgroup is `/` (`/proc/self/cgroup`), yet has
//! `cgroup.type`, which only a non-root cgroup has
//! (<https://docs.kernel.org/admin-guide/cgroup-v2.html#core-interface-files>)
//! — what Docker and Podman give a container on a cgroup v2 host. The
//! notice and `doctor` use it to say what the container allows and which
//! flag gives the step more.

use std::path::Path;

use serde::Serialize;
use stepmon_cgroupfs_parse::mountinfo::MountInfo;

/// What gave the container away, most telling first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "value")]
pub enum Evidence {
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
    pub evidence: Vec<Evidence>,
    /// Whether the cgroupfs is mounted read-only.
    pub read_only_cgroupfs: bool,
    /// Whether this process has `CAP_NET_ADMIN` (the taskstats listener
    /// needs it, and the initial pid namespace).
    pub net_admin: bool,
    /// Whether it shares the host's pid namespace (PID 2 is the kernel's
    /// `kthreadd`, as in the initial pid namespace only).
    pub host_pid: bool,
}

const RUNTIME_WORDS: [&str; 6] = ["docker", "kubepods", "libpod", "containerd", "lxc", "crio"];

/// Looks at `root` (`/`) and `proc` (`/proc`).
#[must_use]
pub fn detect_in(root: &Path, proc: &Path) -> Option<Container> {
    let cgroup = std::fs::read(proc.join("self/cgroup")).unwrap_or_default();
    let mountinfo = stepmon_fdread::read_path(proc.join("self/mountinfo")).unwrap_or_default();
    detect_with(root, proc, &cgroup, &mountinfo)
}

/// [`detect_in`] with this process's `cgroup` and `mountinfo` read already
/// (empty: unreadable).
#[must_use]
pub fn detect_with(root: &Path, proc: &Path, cgroup: &[u8], mountinfo: &[u8]) -> Option<Container> {
    let cgroup = String::from_utf8_lossy(cgroup);
    let mut evidence = Vec::new();
    if root.join(".dockerenv").exists() {
        evidence.push(Evidence::DockerEnv);
    }
    if root.join("run/.containerenv").exists() {
        evidence.push(Evidence::ContainerEnv);
    }
    if let Ok(environ) = std::fs::read(proc.join("1/environ"))
        && let Some(value) = environ.split(|b| *b == 0).find_map(|v| v.strip_prefix(b"container="))
    {
        evidence.push(Evidence::ContainerVariable(String::from_utf8_lossy(value).into_owned()));
    }
    if let Some(path) =
        cgroup.lines().filter_map(|l| l.splitn(3, ':').nth(2)).find(|p| RUNTIME_WORDS.iter().any(|w| p.contains(w)))
    {
        evidence.push(Evidence::CgroupPath(path.to_owned()));
    }
    let read_only_cgroupfs = read_only_cgroupfs(mountinfo);
    if read_only_cgroupfs {
        evidence.push(Evidence::ReadOnlyCgroupfs);
    }
    // (Or the leaf an earlier run moved the container's processes into.)
    let at_namespace_root = cgroup.lines().any(|l| l == "0::/" || l == "0::/stepmon-supervisor");
    if at_namespace_root && root.join("sys/fs/cgroup/cgroup.type").exists() {
        evidence.push(Evidence::CgroupNamespace);
    }
    if evidence.is_empty() {
        return None;
    }
    let host_pid = stepmon_fdread::read_path(proc.join("2/comm")).is_ok_and(|comm| comm.trim_ascii() == b"kthreadd");
    let net_admin = stepmon_fdread::read_path(proc.join("self/status")).ok().is_some_and(|status| {
        String::from_utf8_lossy(&status)
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .is_some_and(|caps| caps & (1 << 12) != 0) // CAP_NET_ADMIN = 12
    });
    Some(Container { evidence, read_only_cgroupfs, net_admin, host_pid })
}

/// This process's container, if it runs in one.
#[must_use]
pub fn detect() -> Option<Container> {
    detect_in(Path::new("/"), Path::new("/proc"))
}

/// Whether every cgroup mount at or below `/sys/fs/cgroup` is read-only
/// (and there is one).
fn read_only_cgroupfs(mountinfo: &[u8]) -> bool {
    let mut any = false;
    for mount in MountInfo::new(mountinfo).flatten() {
        if !matches!(mount.fs_type, "cgroup" | "cgroup2") {
            continue;
        }
        let point: Vec<u8> = mount.mount_point.bytes().collect();
        if !point.starts_with(b"/sys/fs/cgroup") {
            continue;
        }
        any = true;
        if !mount.mount_options.split(',').any(|o| o == "ro") {
            return false;
        }
    }
    any
}

impl Container {
    /// Who made it, in words (`Docker`, `Podman`, `a container runtime`).
    #[must_use]
    pub fn runtime(&self) -> String {
        for e in &self.evidence {
            match e {
                Evidence::DockerEnv => return "Docker".to_owned(),
                Evidence::ContainerEnv => return "Podman".to_owned(),
                Evidence::ContainerVariable(v) => return v.clone(),
                _ => {}
            }
        }
        "a container runtime".to_owned()
    }

    /// What the container allows a step, in words.
    #[must_use]
    pub fn allows(&self) -> String {
        let cgroupfs = match (self.read_only_cgroupfs, self.evidence.contains(&Evidence::CgroupNamespace)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runc_on_a_hybrid_host_is_told_by_its_read_only_cgroupfs() {
        let dir = tempfile::tempdir().unwrap();
        let proc = dir.path().join("proc");
        std::fs::create_dir_all(proc.join("self")).unwrap();
        std::fs::create_dir_all(proc.join("1")).unwrap();
        std::fs::write(proc.join("1/environ"), b"PATH=/bin\0TERM=xterm\0").unwrap();
        std::fs::write(proc.join("self/cgroup"), "4:memory:/process_api/x/ctr1\n0::/ctr1\n").unwrap();
        std::fs::write(proc.join("self/status"), "Name:\tstepmon\nCapEff:\t00000000a80425fb\n").unwrap();
        std::fs::write(
            proc.join("self/mountinfo"),
            "30 24 0:26 /process_api/x/ctr1 /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory\n\
             31 24 0:27 /ctr1 /sys/fs/cgroup/pids ro,nosuid - cgroup cgroup rw,pids\n",
        )
        .unwrap();
        let found = detect_in(dir.path(), &proc).unwrap();
        assert_eq!(found.evidence, [Evidence::ReadOnlyCgroupfs]);
        // Docker's default capability set: no CAP_NET_ADMIN; a pid namespace.
        assert!(!found.net_admin);
        assert!(!found.host_pid);
        assert_eq!(found.runtime(), "a container runtime");
        assert!(found.allows().starts_with("a read-only cgroupfs"), "{}", found.allows());
        let ways = found.ways_out().unwrap();
        assert!(
            ways.contains("--cgroupns=private") && ways.contains("--pid=host, --network=host and --cap-add NET_ADMIN"),
            "{ways}"
        );
        // Docker's marker and a writable cgroupfs.
        std::fs::write(dir.path().join(".dockerenv"), "").unwrap();
        std::fs::write(proc.join("self/mountinfo"), "30 24 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n")
            .unwrap();
        let docker = detect_in(dir.path(), &proc).unwrap();
        assert_eq!(docker.evidence, [Evidence::DockerEnv]);
        assert_eq!(docker.runtime(), "Docker");
        assert!(!docker.read_only_cgroupfs);
        // A host: nothing.
        std::fs::remove_file(dir.path().join(".dockerenv")).unwrap();
        assert_eq!(detect_in(dir.path(), &proc), None);
        // A cgroup namespace on a cgroup v2 host (runc with a `cgroup`
        // namespace, Docker, Podman), writable, in the host's pid namespace
        // with CAP_NET_ADMIN: nothing more to ask for.
        std::fs::write(proc.join("self/cgroup"), "0::/\n").unwrap();
        std::fs::create_dir_all(dir.path().join("sys/fs/cgroup")).unwrap();
        assert_eq!(detect_in(dir.path(), &proc), None, "the machine's root cgroup has no cgroup.type");
        std::fs::write(dir.path().join("sys/fs/cgroup/cgroup.type"), "domain\n").unwrap();
        std::fs::create_dir_all(proc.join("2")).unwrap();
        std::fs::write(proc.join("2/comm"), "kthreadd\n").unwrap();
        std::fs::write(proc.join("self/status"), "Name:\tstepmon\nCapEff:\t00000000a80435fb\n").unwrap();
        let private = detect_in(dir.path(), &proc).unwrap();
        assert_eq!(private.evidence, [Evidence::CgroupNamespace]);
        assert!(private.host_pid && private.net_admin);
        assert!(private.allows().contains("taskstats"), "{}", private.allows());
        assert_eq!(private.ways_out(), None);
    }
}
