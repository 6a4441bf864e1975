//! The step's own cgroups in the cgroup v1 hierarchies (hybrid and v1-only
//! hosts): which controllers are worth one, and the sampler's view of them.

use std::path::Path;

use stepmon_sampler::cgroup::CgroupV1Dirs;

use super::host_view::HostView;
use super::owned::{Owned, OwnedV1};
use crate::cgroup::placement::RunCgroups;
use crate::cgroup::v1::V1Cgroups;
use crate::options::Limits;

/// The v1 controllers worth a cgroup of the step's own, given what its
/// cgroup v2 (if any) accounts: memory and pids where v2 lacks them; cpu
/// only for `--cpus` (a v1 cgroup's `cpu.stat` counts only its own quota's
/// throttling); cpuacct only without any cgroup v2 (v2's `cpu.stat` has the
/// usage otherwise). Never blkio: blk-throttle counts only on devices with a
/// throttle rule (seen on 6.1 and 6.18), which stepmon never sets; the
/// process tree counts the step's IO.
pub(super) fn v1_wanted(v2: Option<&RunCgroups>, limits: &Limits) -> Vec<&'static str> {
    let lacks = |controller: &str| !v2.is_some_and(|c| c.enabled.contains(&controller));
    let mut wanted = Vec::new();
    for (v2_name, v1_name) in [("memory", "memory"), ("pids", "pids")] {
        if lacks(v2_name) {
            wanted.push(v1_name);
        }
    }
    if lacks("cpu") && limits.cpus.is_some() {
        wanted.push("cpu");
    }
    if v2.is_none() {
        wanted.extend(["cpu", "cpuacct"]);
    }
    wanted.dedup();
    wanted
}

/// The step's cgroups in the v1 hierarchies that hold what its cgroup v2
/// (if any) does not account.
pub(super) fn place_v1(host: &HostView, cgroups: Option<&RunCgroups>, limits: &Limits, name: &str) -> Option<OwnedV1> {
    let hierarchies = &host.v1;
    if hierarchies.is_empty() {
        return None;
    }
    let wanted = v1_wanted(cgroups, limits);
    if wanted.is_empty() {
        return None;
    }
    let made = V1Cgroups::create(hierarchies, &wanted, name);
    (!made.dirs.is_empty() || !made.not_created.is_empty()).then_some(Owned(Some(made)))
}

/// The step's v1 directories as the sampler reads them.
pub(super) fn probe_dirs(v1: &V1Cgroups) -> CgroupV1Dirs {
    let mut dirs = CgroupV1Dirs::default();
    dirs.memory = v1.dir_of("memory").map(Path::to_path_buf);
    dirs.pids = v1.dir_of("pids").map(Path::to_path_buf);
    dirs.cpu = v1.dir_of("cpu").map(Path::to_path_buf);
    dirs.cpuacct = v1.dir_of("cpuacct").map(Path::to_path_buf);
    dirs.blkio = v1.dir_of("blkio").map(Path::to_path_buf);
    dirs
}
