//! The step's cgroups in the cgroup v1 hierarchies of hybrid and v1-only
//! hosts (<https://docs.kernel.org/admin-guide/cgroup-v1/cgroups.html>):
//! one directory per hierarchy that holds a controller cgroup v2 does not
//! account here (memory, pids, cpu/cpuacct, blkio), created below this
//! process's own cgroup of that hierarchy (`/proc/self/cgroup`) and never
//! elsewhere, named like the v2 run parents so that `gc` finds them.
//!
//! The step joins each before it executes anything: its first process,
//! single-threaded between clone and exec, writes `0` to every `tasks`
//! file (a `tasks` write moves one thread; `cgroup.procs` would move a
//! thread group under the global threadgroup lock).
//!
//! v1 has no `cgroup.kill`: what is left at the end is stopped from forking
//! (`pids.max` 0, where the step has a pids cgroup) and killed with SIGKILL
//! until every directory is empty.

use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{Mode, OFlags};
use stepmon_cgroupfs_parse::mountinfo::MountInfo;
use stepmon_cgroupfs_parse::proc_cgroup::ProcCgroup;

use super::naming::{RUN_PREFIX, owner_gone};

/// The v1 controllers stepmon reads, by their v1 names.
pub(crate) const V1_CONTROLLERS: [&str; 5] = ["memory", "pids", "cpu", "cpuacct", "blkio"];

/// One mounted v1 hierarchy and this process's cgroup in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hierarchy {
    /// Its controllers (`cpu`, `cpuacct` when co-mounted).
    pub(crate) controllers: Vec<String>,
    /// Where it is mounted.
    pub(crate) mount_point: PathBuf,
    /// This process's cgroup in it, as a directory.
    pub(crate) own_dir: PathBuf,
    /// This process's cgroup in it, as `/proc/self/cgroup` names it (`/`:
    /// the hierarchy's root, which covers the whole machine).
    pub(crate) path: String,
}

impl Hierarchy {
    /// Whether it holds `controller`.
    #[must_use]
    pub(crate) fn has(&self, controller: &str) -> bool {
        self.controllers.iter().any(|c| c == controller)
    }
}

/// The v1 hierarchies of [`V1_CONTROLLERS`] this process sees, from
/// `<proc_self>/cgroup` and `<proc_self>/mountinfo`.
#[must_use]
pub(crate) fn hierarchies_in(proc_self: &Path) -> Vec<Hierarchy> {
    let (Ok(cgroup), Ok(mountinfo)) =
        (stepmon_fdread::read_path(proc_self.join("cgroup")), stepmon_fdread::read_path(proc_self.join("mountinfo")))
    else {
        return Vec::new();
    };
    hierarchies_from(&cgroup, &mountinfo)
}

/// [`hierarchies_in`] from the bytes of `cgroup` and `mountinfo` read already.
#[must_use]
pub(crate) fn hierarchies_from(cgroup: &[u8], mountinfo: &[u8]) -> Vec<Hierarchy> {
    let mut found = Vec::new();
    for entry in ProcCgroup::new(cgroup).flatten().filter(|e| !e.is_unified()) {
        let controllers: Vec<String> =
            entry.controller_names().filter(|n| V1_CONTROLLERS.contains(n)).map(str::to_owned).collect();
        if controllers.is_empty() {
            continue;
        }
        // The mount of this hierarchy: a `cgroup` mount whose superblock
        // options name each of its controllers, with a root that contains
        // this process's path.
        let path = String::from_utf8_lossy(entry.path).into_owned();
        let mount = MountInfo::new(mountinfo).flatten().find(|m| {
            let root: Vec<u8> = m.root.bytes().collect();
            let serves = root == b"/"
                || entry.path == root.as_slice()
                || entry.path.strip_prefix(root.as_slice()).is_some_and(|rest| rest.starts_with(b"/"));
            m.fs_type == "cgroup" && controllers.iter().all(|c| m.has_super_option(c)) && serves
        });
        let Some(mount) = mount else { continue };
        let mount_point =
            PathBuf::from(String::from_utf8_lossy(&mount.mount_point.bytes().collect::<Vec<u8>>()).into_owned());
        let root: String = String::from_utf8_lossy(&mount.root.bytes().collect::<Vec<u8>>()).into_owned();
        let relative = path.strip_prefix(root.trim_end_matches('/')).unwrap_or(&path).trim_start_matches('/');
        let own_dir = if relative.is_empty() { mount_point.clone() } else { mount_point.join(relative) };
        found.push(Hierarchy { controllers, mount_point, own_dir, path });
    }
    found
}

/// The step's v1 cgroups.
#[derive(Debug, Default)]
pub(crate) struct V1Cgroups {
    /// One run directory per hierarchy: `<own>/stepmon-run.<pid>.<start>`.
    pub(crate) dirs: Vec<(Hierarchy, PathBuf)>,
    /// Hierarchies where none could be created, and why.
    pub(crate) not_created: Vec<(Hierarchy, String)>,
}

impl V1Cgroups {
    /// Creates a run directory in each of `hierarchies` that holds one of
    /// `wanted` (v1 controller names), named for this process.
    #[must_use]
    pub(crate) fn create(hierarchies: &[Hierarchy], wanted: &[&str], name: &str) -> V1Cgroups {
        let mut made = V1Cgroups::default();
        for h in hierarchies.iter().filter(|h| wanted.iter().any(|w| h.has(w))) {
            let dir = h.own_dir.join(name);
            match fs::create_dir(&dir) {
                Ok(()) => made.dirs.push((h.clone(), dir)),
                Err(e) => made
                    .not_created
                    .push((h.clone(), format!("cannot create a cgroup under {}: {e}", h.own_dir.display()))),
            }
        }
        made
    }

    /// The run directory of the hierarchy holding `controller`.
    #[must_use]
    pub(crate) fn dir_of(&self, controller: &str) -> Option<&Path> {
        self.dirs.iter().find(|(h, _)| h.has(controller)).map(|(_, d)| d.as_path())
    }

    /// Whether the step has a v1 cgroup for `controller`.
    #[must_use]
    pub(crate) fn has(&self, controller: &str) -> bool {
        self.dir_of(controller).is_some()
    }

    /// Every `tasks` file opened for writing, for the step's first process to
    /// join before exec.
    pub(crate) fn tasks_files(&self) -> io::Result<Vec<OwnedFd>> {
        self.dirs
            .iter()
            .map(|(_, dir)| {
                rustix::fs::open(dir.join("tasks"), OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty()).map_err(Into::into)
            })
            .collect()
    }

    /// PIDs in any of the step's v1 cgroups, or in a cgroup below one: a
    /// step may nest steps of its own (`stepmon build`'s actions, each made
    /// by `stepmon wrap` below the cgroup it runs in), and v1's
    /// `cgroup.procs` lists a cgroup's own members only.
    fn members(&self) -> Vec<i32> {
        let mut pids: Vec<i32> = self
            .dirs
            .iter()
            .flat_map(|(_, dir)| super::placement::subtree(dir))
            .filter_map(|dir| fs::read_to_string(dir.join("cgroup.procs")).ok())
            .flat_map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect::<Vec<i32>>())
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// Kills everything left in the step's v1 cgroups and waits until they
    /// are empty, at most `timeout`: forks stopped with `pids.max` 0 first
    /// (where there is a pids cgroup), then SIGKILL to each member, round after
    /// round.
    pub(crate) fn kill_and_wait(&self, timeout: Duration) -> io::Result<()> {
        if self.members().is_empty() {
            return Ok(());
        }
        if let Some(pids) = self.dir_of("pids") {
            let _ = fs::write(pids.join("pids.max"), "0");
        }
        let start = Instant::now();
        loop {
            let members = self.members();
            if members.is_empty() {
                return Ok(());
            }
            if start.elapsed() > timeout {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("{} processes are still in the step's v1 cgroups", members.len()),
                ));
            }
            for pid in members.into_iter().filter_map(rustix::process::Pid::from_raw) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Removes every run directory (`rmdir`), and first the cgroups a
    /// nested step left below it (its stepmon killed before it removed
    /// them: a v1 cgroup with a child cannot be removed).
    pub(crate) fn remove(&self) -> io::Result<()> {
        let mut first_error = None;
        for (_, dir) in &self.dirs {
            let removed = match fs::remove_dir(dir) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => super::placement::remove_tree(dir),
                other => other,
            };
            if let Err(e) = removed
                && e.kind() != io::ErrorKind::NotFound
            {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// Finds run directories of dead owners in this process's cgroup of each
/// hierarchy, kills what is left in them and removes them (`stepmon gc`,
/// and every run once its step runs). Returns the directories (to be) removed.
pub(crate) fn collect_garbage(hierarchies: &[Hierarchy], dry_run: bool) -> io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for h in hierarchies {
        let Ok(entries) = stepmon_fdread::list_dir(&h.own_dir) else { continue };
        for entry in entries {
            let name = entry.name;
            if !name.to_str().is_some_and(|n| n.starts_with(RUN_PREFIX))
                || owner_gone(&name.to_string_lossy()) != Some(true)
            {
                continue;
            }
            let dir = h.own_dir.join(&name);
            if !dry_run {
                let dead = V1Cgroups { dirs: vec![(h.clone(), dir.clone())], not_created: Vec::new() };
                dead.kill_and_wait(Duration::from_secs(5))?;
                // Collected by another stepmon meanwhile: done (remove skips NotFound).
                dead.remove()?;
            }
            removed.push(dir);
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(mountinfo: &str, cgroup: &str) -> Vec<Hierarchy> {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("mountinfo"), mountinfo).unwrap();
        fs::write(dir.path().join("cgroup"), cgroup).unwrap();
        hierarchies_in(dir.path())
    }

    #[test]
    fn this_hosts_hybrid_layout() {
        let found = fake(
            include_str!("../../tests/data/hybrid-6.18/proc_self_mountinfo.txt"),
            "9:name=systemd:/\n8:pids:/\n7:blkio:/\n4:memory:/process_api/abc\n2:cpuacct:/\n1:cpu:/\n0::/\n",
        );
        let memory = found.iter().find(|h| h.has("memory")).unwrap();
        assert_eq!(memory.own_dir, Path::new("/sys/fs/cgroup/memory/process_api/abc"));
        assert_eq!(found.iter().find(|h| h.has("pids")).unwrap().own_dir, Path::new("/sys/fs/cgroup/pids"));
        assert!(found.iter().any(|h| h.has("cpu")) && found.iter().any(|h| h.has("cpuacct")));
        assert!(found.iter().all(|h| !h.has("name=systemd")));
    }

    #[test]
    fn co_mounted_cpu_and_cpuacct_and_a_container_root() {
        let mountinfo = "30 24 0:26 /docker/x /sys/fs/cgroup/cpu,cpuacct ro,nosuid - cgroup cgroup rw,cpu,cpuacct\n\
                         31 24 0:27 /docker/x /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory\n";
        let found = fake(mountinfo, "3:cpu,cpuacct:/docker/x\n2:memory:/docker/x/step\n");
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].controllers, ["cpu", "cpuacct"]);
        assert_eq!(found[0].own_dir, Path::new("/sys/fs/cgroup/cpu,cpuacct"));
        assert_eq!(found[1].own_dir, Path::new("/sys/fs/cgroup/memory/step"));
    }
}
