//! The cgroup this process runs in, as a source for a step that has no
//! cgroup of its own (a container's cgroup, a user's session scope) or whose
//! own cgroup lacks a controller this one has: its counters over the step
//! include the step and whatever else runs in it, so stepmon counts who else
//! was there at the start, and takes `memory.peak` since the start where
//! the kernel allows it.
//!
//! `memory.peak` reset: "A write of any non-empty string to this file resets
//! it to the current memory usage for subsequent reads through the same file
//! descriptor" (Linux 6.12+,
//! <https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files>);
//! it needs the file to be writable, which a read-only cgroupfs is not.
//! Where it cannot be reset (older kernels, a read-only cgroupfs) the peak
//! at the start is recorded beside the usage then, and the peak over the
//! step is an upper bound, as on cgroup v1 below.
//!
//! Inside a cgroup namespace (what Docker and Podman give a container on a
//! pure cgroup v2 host) the container's cgroup is the root of the mount, yet
//! not the machine's root cgroup: only a non-root cgroup has `cgroup.type`
//! ("A read-write single value file which exists on non-root cgroups",
//! <https://docs.kernel.org/admin-guide/cgroup-v2.html#core-interface-files>).
//!
//! On hosts with cgroup v1 hierarchies (hybrid and v1-only layouts) memory
//! and task counts live there: this process's cgroup of the memory and
//! pids hierarchies (a container's, which runc mounts read-only at
//! `/sys/fs/cgroup/<controller>`; a login session's) is read beside, or
//! instead of, its cgroup v2
//! (<https://docs.kernel.org/admin-guide/cgroup-v1/memory.html>). v1 has
//! no reset stepmon may use (writing `memory.max_usage_in_bytes` resets it
//! for everyone, and others may rely on it): its peak is an upper bound for
//! the step, recorded beside the usage and the peak at the step's start.

use std::fs;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};
use stepmon_sampler::cgroup::CgroupV1Dirs;
use stepmon_sampler::{Monitor, MonitorError, NetworkSource, Recorder};

use super::v1::Hierarchy;

/// How many cgroup directories the count of other processes reads at most.
const MAX_DIRS: usize = 1000;

/// The enclosing cgroup, opened at the step's start.
#[derive(Debug)]
pub(crate) struct Enclosing {
    /// Its directory: the cgroup v2 one, or without one, its memory (else
    /// pids) cgroup v1 directory.
    pub(crate) dir: PathBuf,
    /// Whether `dir` is a cgroup v2 directory.
    pub(crate) v2: bool,
    /// Whether it is the root cgroup (then it covers the whole machine).
    pub(crate) root: bool,
    /// Processes in it and below it, other than this one, at the start.
    pub(crate) others_at_start: Option<u64>,
    /// Its memory and pids cgroups in the v1 hierarchies, read where its
    /// cgroup v2 has no such files.
    pub(crate) v1: CgroupV1Dirs,
    /// `memory.usage_in_bytes` (v1) or `memory.current` at the start.
    pub(crate) memory_usage_at_start: Option<u64>,
    /// v1 `memory.max_usage_in_bytes`, or `memory.peak` where it could
    /// not be reset, at the start.
    pub(crate) memory_peak_at_start: Option<u64>,
    /// Whether its memory numbers come from its cgroup v1 memory cgroup.
    pub(crate) memory_v1: bool,
    /// `memory.peak` opened for reading and writing and reset.
    peak: Option<OwnedFd>,
}

impl Enclosing {
    /// Looks at `dir` (this process's cgroup) under the cgroup2 mount `mount_point`.
    /// The cgroup v1 memory and pids cgroups of this process are added where
    /// `dir` has no `memory.current` or `pids.current`, from `hierarchies`
    /// (this process's v1 hierarchies, [`super::v1::hierarchies_in`]).
    #[must_use]
    pub(crate) fn open(dir: &Path, mount_point: &Path, hierarchies: &[Hierarchy]) -> Enclosing {
        let root = is_root(dir, mount_point);
        let others_at_start = if root { None } else { count_processes(dir).map(|n| n.saturating_sub(1)) };
        let peak = if root { None } else { reset_peak(&dir.join("memory.peak")) };
        // Not reset: the peak so far, which the step's may not exceed.
        let memory_peak_at_start = if root || peak.is_some() { None } else { read_u64(&dir.join("memory.peak")) };
        let mut enclosing = Enclosing {
            dir: dir.to_path_buf(),
            v2: true,
            root,
            others_at_start,
            v1: CgroupV1Dirs::default(),
            memory_usage_at_start: read_u64(&dir.join("memory.current")),
            memory_peak_at_start,
            memory_v1: false,
            peak,
        };
        let lacks = |file: &str| root || !dir.join(file).exists();
        if lacks("memory.current") || lacks("pids.current") {
            enclosing.add_v1(hierarchies, lacks("memory.current"), lacks("pids.current"));
        }
        enclosing
    }

    /// This process's memory and pids cgroups of the v1 `hierarchies`, where
    /// it has no cgroup v2 (a container on a hybrid or v1 host: no cgroup2
    /// mount, each v1 hierarchy mounted at the container's cgroup); `None`
    /// when neither is readable or both are their hierarchy's root.
    #[must_use]
    pub(crate) fn open_v1(hierarchies: &[Hierarchy]) -> Option<Enclosing> {
        let mut enclosing = Enclosing {
            dir: PathBuf::new(),
            v2: false,
            root: false,
            others_at_start: None,
            v1: CgroupV1Dirs::default(),
            memory_usage_at_start: None,
            memory_peak_at_start: None,
            memory_v1: false,
            peak: None,
        };
        enclosing.add_v1(hierarchies, true, true);
        let dir = enclosing.v1.memory.clone().or_else(|| enclosing.v1.pids.clone())?;
        enclosing.others_at_start = count_processes(&dir).map(|n| n.saturating_sub(1));
        enclosing.dir = dir;
        Some(enclosing)
    }

    fn add_v1(&mut self, hierarchies: &[Hierarchy], memory: bool, pids: bool) {
        // A hierarchy's root cgroup is the whole machine's (in sysUsage).
        let own = |controller: &str, file: &str| {
            hierarchies
                .iter()
                .find(|h| h.has(controller) && h.path != "/" && h.own_dir.join(file).exists())
                .map(|h| h.own_dir.clone())
        };
        if memory && let Some(dir) = own("memory", "memory.usage_in_bytes") {
            self.memory_usage_at_start = read_u64(&dir.join("memory.usage_in_bytes"));
            self.memory_peak_at_start = read_u64(&dir.join("memory.max_usage_in_bytes"));
            self.memory_v1 = true;
            self.v1.memory = Some(dir);
        }
        if pids && let Some(dir) = own("pids", "pids.current") {
            self.v1.pids = Some(dir);
        }
    }

    /// Its cgroup v1 directories, for the run document.
    #[must_use]
    pub(crate) fn v1_dirs(&self) -> Vec<String> {
        [&self.v1.memory, &self.v1.pids].into_iter().flatten().map(|d| d.display().to_string()).collect()
    }

    /// Every directory it is sampled from (cgroup v2 first).
    #[must_use]
    pub(crate) fn dirs(&self) -> Vec<PathBuf> {
        let v2 = self.v2.then(|| self.dir.clone());
        v2.into_iter().chain([&self.v1.memory, &self.v1.pids].into_iter().flatten().cloned()).collect()
    }

    /// Starts sampling it (its cgroup v2 directory and its v1 ones).
    pub(crate) fn record(&self, monitor: &Monitor, network: &NetworkSource) -> Result<Recorder, MonitorError> {
        if self.v1.is_empty() {
            return monitor.record(&self.dir, network);
        }
        let v2 = self.v2.then_some(self.dir.as_path());
        monitor.record_with_v1(v2, self.v1.clone(), network, "no cgroup v2 of the enclosing cgroup's own")
    }

    /// `memory.peak` since the start, if it could be reset.
    #[must_use]
    pub(crate) fn peak_since_start(&self) -> Option<u64> {
        let fd = self.peak.as_ref()?;
        let mut buffer = [0u8; 32];
        let read = rustix::io::pread(fd, &mut buffer, 0).ok()?;
        std::str::from_utf8(buffer.get(..read)?).ok()?.trim().parse().ok()
    }
}

/// Whether `dir`, the cgroup2 mount's root when it is `mount_point`, is the
/// machine's root cgroup: the root of a cgroup namespace (a container's
/// cgroup) has `cgroup.type`, the real root does not.
pub(crate) fn is_root(dir: &Path, mount_point: &Path) -> bool {
    dir == mount_point && !dir.join("cgroup.type").exists()
}

/// Whether `dir` is the root of this process's cgroup namespace without
/// being the machine's root: a container's cgroup, delegated to it
/// (<https://docs.kernel.org/admin-guide/cgroup-v2.html#namespace>).
pub(crate) fn is_namespace_root(dir: &Path, mount_point: &Path) -> bool {
    dir == mount_point && dir.join("cgroup.type").exists()
}

/// The root of this process's cgroup namespace (a container's cgroup) when
/// `own` is it, or its `stepmon-supervisor` leaf that an earlier run moved
/// the container's processes into ([`super::placement::RunCgroups::create`]).
pub(crate) fn container_root(own: &Path, mount_point: &Path) -> Option<PathBuf> {
    let root = if own.file_name().is_some_and(|n| n == super::placement::SUPERVISOR) { own.parent()? } else { own };
    is_namespace_root(root, mount_point).then(|| root.to_path_buf())
}

fn read_u64(file: &Path) -> Option<u64> {
    let bytes = stepmon_fdread::read_path(file).ok()?;
    std::str::from_utf8(&bytes).ok()?.trim().parse().ok()
}

fn reset_peak(file: &Path) -> Option<OwnedFd> {
    let fd = rustix::fs::open(file, OFlags::RDWR | OFlags::CLOEXEC, Mode::empty()).ok()?;
    // Kernels before 6.12 refuse the write (the file is read-only there).
    rustix::io::write(&fd, b"reset\n").ok()?;
    Some(fd)
}

/// Processes in `dir` and its descendants (`cgroup.procs` lines); `None`
/// when a file cannot be read or the subtree is too large to walk.
fn count_processes(dir: &Path) -> Option<u64> {
    let mut pending = vec![dir.to_path_buf()];
    let mut count = 0u64;
    let mut seen = 0usize;
    while let Some(current) = pending.pop() {
        seen += 1;
        if seen > MAX_DIRS {
            return None;
        }
        let procs = fs::read_to_string(current.join("cgroup.procs")).ok()?;
        count += u64::try_from(procs.lines().filter(|l| !l.trim().is_empty()).count()).ok()?;
        for entry in stepmon_fdread::list_dir(&current).ok()? {
            if entry.is_dir {
                pending.push(current.join(entry.name));
            }
        }
    }
    Some(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cgroup_namespace_root_is_not_the_machine() {
        let dir = tempfile::tempdir().unwrap();
        let mount = dir.path();
        // The machine's root cgroup: no cgroup.type.
        std::fs::write(mount.join("cgroup.procs"), "1\n").unwrap();
        std::fs::write(mount.join("memory.current"), "4096\n").unwrap();
        assert!(is_root(mount, mount));
        assert!(!is_namespace_root(mount, mount));
        let machine = Enclosing::open(mount, mount, &[]);
        assert!(machine.root);
        assert_eq!(machine.others_at_start, None);
        // A container's cgroup seen through its cgroup namespace: the mount's
        // root, with cgroup.type; memory.peak read-only (no reset), so the
        // peak at the start is kept for the upper bound.
        std::fs::write(mount.join("cgroup.type"), "domain\n").unwrap();
        std::fs::write(mount.join("cgroup.procs"), "1\n7\n").unwrap();
        // A number in a file that refuses writes, even root's.
        let read_only = Path::new("/proc/sys/kernel/ngroups_max");
        std::os::unix::fs::symlink(read_only, mount.join("memory.peak")).unwrap();
        let container = Enclosing::open(mount, mount, &[]);
        assert!(!container.root);
        assert_eq!(container.others_at_start, Some(1));
        assert_eq!(container.memory_usage_at_start, Some(4096));
        assert!(container.peak.is_none());
        assert_eq!(container.memory_peak_at_start, read_u64(read_only));
        assert!(container.memory_peak_at_start.is_some());
        assert!(!container.memory_v1);
        assert!(is_namespace_root(mount, mount));
        // After a run moved the container's processes into its leaf.
        let leaf = mount.join("stepmon-supervisor");
        assert_eq!(container_root(&leaf, mount).as_deref(), Some(mount));
        assert_eq!(container_root(mount, mount).as_deref(), Some(mount));
        // A child cgroup below the mount is never the root.
        let child = mount.join("child");
        std::fs::create_dir(&child).unwrap();
        assert!(!is_root(&child, mount));
        assert_eq!(container_root(&child, mount), None);
    }
}
