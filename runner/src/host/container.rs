//! Whether this process runs inside a container, from what runtimes leave
//! behind: `/.dockerenv` (Docker), `/run/.containerenv` (Podman),
//! `container=` in PID 1's environment (Podman, systemd-nspawn, LXC; the
//! convention of <https://systemd.io/CONTAINER_INTERFACE/>), a cgroup path
//! naming a runtime, and a read-only cgroupfs (runc's default spec mounts
//! `/sys/fs/cgroup` read-only, Docker's default too). The notice and
//! `doctor` use it to say what the container allows and which flag gives
//! the step more.

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
}

const RUNTIME_WORDS: [&str; 6] = ["docker", "kubepods", "libpod", "containerd", "lxc", "crio"];

/// Looks at `root` (`/`) and `proc` (`/proc`).
#[must_use]
pub fn detect_in(root: &Path, proc: &Path) -> Option<Container> {
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
    if let Ok(cgroup) = std::fs::read_to_string(proc.join("self/cgroup"))
        && let Some(path) =
            cgroup.lines().filter_map(|l| l.splitn(3, ':').nth(2)).find(|p| RUNTIME_WORDS.iter().any(|w| p.contains(w)))
    {
        evidence.push(Evidence::CgroupPath(path.to_owned()));
    }
    let read_only_cgroupfs = read_only_cgroupfs(proc);
    if read_only_cgroupfs {
        evidence.push(Evidence::ReadOnlyCgroupfs);
    }
    let net_admin = std::fs::read_to_string(proc.join("self/status")).ok().is_some_and(|status| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .is_some_and(|caps| caps & (1 << 12) != 0) // CAP_NET_ADMIN = 12
    });
    (!evidence.is_empty()).then_some(Container { evidence, read_only_cgroupfs, net_admin })
}

/// This process's container, if it runs in one.
#[must_use]
pub fn detect() -> Option<Container> {
    detect_in(Path::new("/"), Path::new("/proc"))
}

/// Whether every cgroup mount at or below `/sys/fs/cgroup` is read-only
/// (and there is one).
fn read_only_cgroupfs(proc: &Path) -> bool {
    let Ok(bytes) = stepmon_fdread::read_path(proc.join("self/mountinfo")) else { return false };
    let mut any = false;
    for mount in MountInfo::new(&bytes).flatten() {
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
        let cgroupfs = if self.read_only_cgroupfs { "a read-only cgroupfs" } else { "a writable cgroupfs" };
        let records =
            if self.net_admin { "CAP_NET_ADMIN" } else { "no CAP_NET_ADMIN, so per-process records are sampled" };
        format!("{cgroupfs}, {records}")
    }

    /// Why the step gets no cgroup of its own here, in words.
    #[must_use]
    pub fn no_cgroup(&self) -> String {
        let cgroupfs = if self.read_only_cgroupfs { "a read-only cgroupfs" } else { "a cgroupfs" };
        format!("inside a container ({}) with {cgroupfs} and no cgroup2 mount", self.runtime())
    }

    /// The flags that give the step more, in words.
    #[must_use]
    pub fn ways_out(&self) -> &'static str {
        "for a cgroup of the step's own, run the container with --cgroupns=private and a writable cgroupfs \
         (Podman: --security-opt unmask=/sys/fs/cgroup), or --privileged, or give it a delegated subtree; for exact \
         per-process records, with --cap-add NET_ADMIN and --pid=host"
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
        // Docker's default capability set: no CAP_NET_ADMIN.
        assert!(!found.net_admin);
        assert_eq!(found.runtime(), "a container runtime");
        assert!(found.allows().starts_with("a read-only cgroupfs"), "{}", found.allows());
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
    }
}
