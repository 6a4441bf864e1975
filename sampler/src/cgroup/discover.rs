//! Where this process's cgroup v2 directory is: the cgroup2 mount from
//! `/proc/self/mountinfo` and the `0::` path from `/proc/self/cgroup`
//! (<https://docs.kernel.org/admin-guide/cgroup-v2.html#processes>).

use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use stepmon_cgroupfs_parse::mountinfo::find_cgroup2_mount;
use stepmon_cgroupfs_parse::proc_cgroup::unified_entry;

/// The cgroup v2 hierarchy as this process sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cgroup2 {
    /// Where cgroup2 is mounted (`/sys/fs/cgroup` on pure v2 hosts,
    /// `/sys/fs/cgroup/unified` on hybrid ones, or elsewhere).
    pub mount_point: PathBuf,
    /// This process's cgroup as a directory under the mount point.
    pub own_dir: PathBuf,
    /// Whether the mount is the whole `/sys/fs/cgroup` (pure v2) rather
    /// than a hybrid layout's `unified` mount or an unusual place.
    pub pure_v2: bool,
}

/// Why no cgroup v2 directory could be found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiscoverError {
    /// Reading `/proc/self/...` failed.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: &'static str,
        /// The error.
        source: io::Error,
    },
    /// A `/proc/self/...` file did not parse.
    #[error("cannot parse {path}: {source}")]
    Parse {
        /// The file.
        path: &'static str,
        /// The error.
        source: stepmon_cgroupfs_parse::ParseError,
    },
    /// No `0::` line: cgroup v2 is not mounted anywhere (pure cgroup v1 host).
    #[error(
        "this process has no cgroup v2 membership (no `0::` line in /proc/self/cgroup): mount cgroup2 or boot with systemd.unified_cgroup_hierarchy=1"
    )]
    NoUnifiedHierarchy,
    /// No cgroup2 mount serves this process's cgroup path.
    #[error("no cgroup2 mount in /proc/self/mountinfo contains this process's cgroup {0:?}")]
    NoMount(String),
}

/// Finds the cgroup2 mount and this process's cgroup directory.
pub fn locate() -> Result<Cgroup2, DiscoverError> {
    locate_in(Path::new("/proc/self"))
}

/// [`locate`] reading `mountinfo` and `cgroup` from another directory
/// (another process's `/proc/<pid>`, or captured files in tests).
pub fn locate_in(proc_self: &Path) -> Result<Cgroup2, DiscoverError> {
    let cgroup = stepmon_fdread::read_path(proc_self.join("cgroup"))
        .map_err(|source| DiscoverError::Read { path: "/proc/self/cgroup", source })?;
    let mountinfo = stepmon_fdread::read_path(proc_self.join("mountinfo"))
        .map_err(|source| DiscoverError::Read { path: "/proc/self/mountinfo", source })?;
    locate_from(&cgroup, &mountinfo)
}

/// [`locate`] from the bytes of `/proc/self/cgroup` and
/// `/proc/self/mountinfo` read already (a caller that needs them for more
/// than this reads each once: `mountinfo` costs the kernel a path walk per
/// mount).
pub fn locate_from(cgroup: &[u8], mountinfo: &[u8]) -> Result<Cgroup2, DiscoverError> {
    let entry = unified_entry(cgroup)
        .map_err(|source| DiscoverError::Parse { path: "/proc/self/cgroup", source })?
        .ok_or(DiscoverError::NoUnifiedHierarchy)?;
    let mount = find_cgroup2_mount(mountinfo, entry.path)
        .map_err(|source| DiscoverError::Parse { path: "/proc/self/mountinfo", source })?
        .ok_or_else(|| DiscoverError::NoMount(String::from_utf8_lossy(entry.path).into_owned()))?;
    let mount_point = mount.mount_point.to_path_buf();
    // The cgroup path relative to the mount's root.
    let root: Vec<u8> = mount.root.bytes().collect();
    let relative = entry.path.strip_prefix(root.as_slice()).unwrap_or(entry.path);
    let relative = Path::new(std::ffi::OsStr::from_bytes(relative));
    let relative = relative.strip_prefix("/").unwrap_or(relative);
    // Joining "" would leave a trailing slash.
    let own_dir = if relative.as_os_str().is_empty() { mount_point.clone() } else { mount_point.join(relative) };
    let pure_v2 = mount_point == Path::new("/sys/fs/cgroup");
    Ok(Cgroup2 { mount_point, own_dir, pure_v2 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(mountinfo: &str, cgroup: &str) -> Result<Cgroup2, DiscoverError> {
        let dir = tempfile::Builder::new().prefix("stepmon-discover-").tempdir().unwrap();
        std::fs::write(dir.path().join("mountinfo"), mountinfo).unwrap();
        std::fs::write(dir.path().join("cgroup"), cgroup).unwrap();
        locate_in(dir.path())
    }

    #[test]
    fn hybrid_host_capture() {
        let found = fake(
            include_str!("../../tests/data/hybrid-6.18/proc_self_mountinfo.txt"),
            include_str!("../../tests/data/hybrid-6.18/proc_self_cgroup.txt"),
        )
        .unwrap();
        assert_eq!(found.mount_point, Path::new("/sys/fs/cgroup/unified"));
        assert_eq!(found.own_dir, Path::new("/sys/fs/cgroup/unified"));
        assert!(!found.pure_v2);
    }

    #[test]
    fn pure_v2_systemd_and_container_views() {
        let found = fake(
            "30 24 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
            "0::/user.slice/user-1000.slice/session-2.scope\n",
        )
        .unwrap();
        assert_eq!(found.own_dir, Path::new("/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"));
        assert!(found.pure_v2);
        let container =
            fake("5 1 0:30 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/kubepods/pod1/c1\n").unwrap();
        assert_eq!(container.own_dir, Path::new("/sys/fs/cgroup/c1"));
        assert!(matches!(
            fake("22 27 0:21 / /proc rw - proc proc rw\n", "1:cpu:/\n"),
            Err(DiscoverError::NoUnifiedHierarchy)
        ));
        assert!(matches!(fake("22 27 0:21 / /proc rw - proc proc rw\n", "0::/\n"), Err(DiscoverError::NoMount(_))));
    }
}
