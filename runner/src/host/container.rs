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

use stepmon_cgroupfs_parse::mountinfo::MountInfo;

pub(crate) use crate::container::{Container, ContainerEvidence as Evidence};

const RUNTIME_WORDS: [&str; 6] = ["docker", "kubepods", "libpod", "containerd", "lxc", "crio"];

/// Looks at `root` (`/`) and `proc` (`/proc`).
#[must_use]
pub(crate) fn detect_in(root: &Path, proc: &Path) -> Option<Container> {
    let cgroup = std::fs::read(proc.join("self/cgroup")).unwrap_or_default();
    let mountinfo = stepmon_fdread::read_path(proc.join("self/mountinfo")).unwrap_or_default();
    detect_with(root, proc, &cgroup, &mountinfo)
}

/// [`detect_in`] with this process's `cgroup` and `mountinfo` read already
/// (empty: unreadable).
#[must_use]
pub(crate) fn detect_with(root: &Path, proc: &Path, cgroup: &[u8], mountinfo: &[u8]) -> Option<Container> {
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
pub(crate) fn detect() -> Option<Container> {
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
