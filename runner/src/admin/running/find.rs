//! Finding the steps running on this machine: every run directory
//! (`stepmon-run.<pid>.<start>[.<n>]`, [`crate::cgroup::naming::run_name`])
//! in the cgroup v2 tree and in the v1 hierarchies stepmon uses, grouped by
//! name (one name per step in every hierarchy), whose owner still runs.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use stepmon_sampler::cgroup::CgroupV1Dirs;

use crate::cgroup::naming::{RUN_PREFIX, owner_gone, owner_of};
use crate::cgroup::v1::Hierarchy;

/// How deep below a hierarchy's root run directories are looked for: a
/// systemd user session's service is some 6 levels down, a container's
/// cgroup a few more.
const DEPTH: usize = 12;

/// A step some stepmon process (or builder) runs now.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunningStep {
    /// The run directory's name, the same in every hierarchy.
    pub run: String,
    /// The process that placed it (stepmon, or a builder using the
    /// runner): its PID ...
    pub owner_pid: u32,
    /// ... and start time (clock ticks since boot), which the name encodes.
    pub owner_start: u64,
    /// Its cgroup v2 directory where its processes run (`<run>/step`, or
    /// the run directory itself where no controller could be enabled).
    pub cgroup: Option<PathBuf>,
    /// Its cgroup v1 directories (hybrid and v1-only hosts).
    pub v1: CgroupV1Dirs,
    /// When its directory was made (`ctime`; cgroupfs keeps no birth
    /// time): about when the step started.
    pub created: Option<Timestamp>,
    /// The owner's command line (`/proc/PID/cmdline`).
    pub owner_command: Vec<String>,
}

/// How deep inside a run directory the run directories of steps nested in
/// it are looked for: `<run>/step/stepmon-run.…` (a build's actions where
/// its cgroup has controllers), `<run>/stepmon-run.…` (elsewhere, and in
/// the v1 hierarchies).
const NESTED_DEPTH: usize = 1;

/// Every run directory below `dir` (down to `depth` more levels), and
/// those of the steps nested in each ([`NESTED_DEPTH`]).
fn run_dirs(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let name = entry.file_name();
        if name.to_str().is_some_and(|n| n.starts_with(RUN_PREFIX)) {
            found.push(entry.path());
            // A step that nests steps (`stepmon build`): its actions' run
            // directories are inside its own.
            run_dirs(&entry.path(), depth.min(NESTED_DEPTH), found);
        } else if depth > 0 {
            run_dirs(&entry.path(), depth - 1, found);
        }
    }
}

fn name_of(dir: &Path) -> Option<String> {
    dir.file_name()?.to_str().map(str::to_owned)
}

/// When `dir` was made, as far as cgroupfs says (its `ctime`).
fn created(dir: &Path) -> Option<Timestamp> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = std::fs::metadata(dir).ok()?;
    let nanos = i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec());
    Timestamp::from_nanosecond(nanos).ok()
}

/// `/proc/PID/cmdline` as its arguments.
fn command_of(pid: u32) -> Vec<String> {
    let bytes = stepmon_fdread::read_path(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    bytes.split(|b| *b == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect()
}

/// The steps whose run directories are under the cgroup v2 mount `v2` (if
/// any) and in the v1 `hierarchies`, whose owners still run.
#[must_use]
pub(crate) fn find_in(v2: Option<&Path>, hierarchies: &[Hierarchy]) -> Vec<RunningStep> {
    let mut steps: Vec<RunningStep> = Vec::new();
    let mut add = |dir: PathBuf, place: &dyn Fn(&mut RunningStep, PathBuf)| {
        let Some(run) = name_of(&dir) else { return };
        let Some((owner_pid, owner_start)) = owner_of(&run) else { return };
        let at = match steps.iter().position(|s| s.run == run) {
            Some(at) => at,
            None => {
                steps.push(RunningStep {
                    run,
                    owner_pid,
                    owner_start,
                    cgroup: None,
                    v1: CgroupV1Dirs::default(),
                    created: None,
                    owner_command: Vec::new(),
                });
                steps.len() - 1
            }
        };
        place(&mut steps[at], dir);
    };
    if let Some(mount) = v2 {
        let mut found = Vec::new();
        run_dirs(mount, DEPTH, &mut found);
        for dir in found {
            add(dir, &|step, dir| {
                let leaf = dir.join("step");
                step.cgroup = Some(if leaf.is_dir() { leaf } else { dir });
            });
        }
    }
    for hierarchy in hierarchies {
        let mut found = Vec::new();
        run_dirs(&hierarchy.mount_point, DEPTH, &mut found);
        for dir in found {
            add(dir, &|step, dir| {
                for controller in &hierarchy.controllers {
                    let slot = match controller.as_str() {
                        "memory" => &mut step.v1.memory,
                        "pids" => &mut step.v1.pids,
                        "cpu" => &mut step.v1.cpu,
                        "cpuacct" => &mut step.v1.cpuacct,
                        _ => continue,
                    };
                    *slot = Some(dir.clone());
                }
            });
        }
    }
    // A directory whose owner is gone is a leftover for `stepmon gc`.
    steps.retain(|s| owner_gone(&s.run) == Some(false));
    for step in &mut steps {
        let dir = step.cgroup.clone().or_else(|| step.v1.memory.clone()).or_else(|| step.v1.pids.clone());
        step.created = dir.as_deref().and_then(created);
        step.owner_command = command_of(step.owner_pid);
    }
    steps.sort_by(|a, b| a.run.cmp(&b.run));
    steps
}

/// The steps running on this machine that this user can see: those whose
/// run directories are under this process's cgroup v2 mount and in its v1
/// hierarchies, and whose owners still run.
#[must_use]
pub fn find() -> Vec<RunningStep> {
    let v2 = stepmon_sampler::cgroup::discover::locate().ok().map(|c| c.mount_point);
    let hierarchies: Vec<Hierarchy> = crate::cgroup::v1::hierarchies_in(Path::new("/proc/self"))
        .into_iter()
        .filter(|h| ["memory", "pids", "cpu", "cpuacct"].iter().any(|c| h.has(c)))
        .collect();
    find_in(v2.as_deref(), &hierarchies)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_directories_are_grouped_by_name_across_hierarchies_and_dead_owners_left_out() {
        let root = tempfile::tempdir().unwrap();
        let pid = std::process::id();
        let start = crate::cgroup::naming::start_time(pid).unwrap();
        let mine = format!("{RUN_PREFIX}{pid}.{start}");
        let builders = format!("{RUN_PREFIX}{pid}.{start}.2");
        let dead = format!("{RUN_PREFIX}{pid}.{}", start + 1);
        // An action nested in the first (`stepmon build`): beside the
        // build's command in its cgroup, and inside its v1 one.
        let action = format!("{RUN_PREFIX}{pid}.{start}.3");
        let v2 = root.path().join("unified");
        for dir in [
            v2.join("user.slice/ci.service").join(&mine).join("step/stepmon-command"),
            v2.join("user.slice/ci.service").join(&mine).join("step").join(&action).join("step"),
            v2.join(&builders),
            v2.join(&dead),
            v2.join("system.slice/other"),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let memory = Hierarchy {
            controllers: vec!["memory".into()],
            mount_point: root.path().join("memory"),
            own_dir: root.path().join("memory/ci"),
            path: "/ci".into(),
        };
        std::fs::create_dir_all(memory.own_dir.join(&mine).join(&action)).unwrap();
        let steps = find_in(Some(&v2), std::slice::from_ref(&memory));
        let runs: Vec<&str> = steps.iter().map(|s| s.run.as_str()).collect();
        assert_eq!(runs, [mine.as_str(), builders.as_str(), action.as_str()], "the dead owner's is left for gc");
        let nested = v2.join("user.slice/ci.service").join(&mine).join("step").join(&action).join("step");
        assert_eq!(steps[2].cgroup, Some(nested));
        assert_eq!(steps[2].v1.memory, Some(memory.own_dir.join(&mine).join(&action)));
        assert_eq!(steps[0].cgroup, Some(v2.join("user.slice/ci.service").join(&mine).join("step")));
        assert_eq!(steps[0].v1.memory, Some(memory.own_dir.join(&mine)));
        assert_eq!(steps[1].cgroup, Some(v2.join(&builders)), "no leaf: the run directory itself");
        assert_eq!((steps[0].owner_pid, steps[0].owner_start), (pid, start));
        assert!(!steps[0].owner_command.is_empty() && steps[0].created.is_some());
    }
}
