//! The facts doctor looks at, gathered once from the kernel's own files
//! (`/proc/self/cgroup`, `mountinfo`, the cgroup2 controller lists) with
//! the parser crates.

use std::fs;
use std::io;
use std::path::Path;

use jiff::Timestamp;
use stepmon_cgroupfs_parse::format::list::NewlineList;
use stepmon_cgroupfs_parse::mountinfo::{MountInfo, find_cgroup2_mount};
use stepmon_cgroupfs_parse::proc_cgroup::{ProcCgroup, unified_entry};
use stepmon_cgroupfs_parse::{ControllerList, ParseError};
use stepmon_model::sample::StepSample;
use stepmon_sampler::cgroup::{CgroupProbe, discover};

use super::probe::ProbeCgroup;
use super::{Controllers, V1Binding};

pub(super) fn parse_error(e: ParseError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

pub(super) fn controller_list(file: &Path) -> io::Result<Vec<String>> {
    let bytes = fs::read(file)?;
    Ok(ControllerList::parse(&bytes).map_err(parse_error)?.iter().map(str::to_owned).collect())
}

pub(super) fn newline_list(file: &Path) -> io::Result<Vec<String>> {
    let bytes = fs::read(file)?;
    NewlineList::new(&bytes)
        .map(|item| item.map(|line| String::from_utf8_lossy(line.bytes).into_owned()).map_err(parse_error))
        .collect()
}

/// The v1 name of a v2 controller (`io` was `blkio`).
pub(super) fn v1_name(controller: &str) -> &str {
    if controller == "io" { "blkio" } else { controller }
}

/// [`discover::locate`] with the own directory normalized (the root cgroup
/// comes back as `<mount>/`, with a trailing slash).
pub(crate) fn locate() -> Result<discover::Cgroup2, discover::DiscoverError> {
    discover::locate().map(|mut location| {
        location.own_dir = location.own_dir.components().collect();
        location
    })
}

/// Whether the effective user may write `path` (`faccessat(AT_EACCESS)`;
/// also fails on a read-only mount).
pub(super) fn writable(path: &Path) -> bool {
    use rustix::fs::{Access, AtFlags, CWD, accessat};
    accessat(CWD, path, Access::WRITE_OK, AtFlags::EACCESS).is_ok()
}

pub(super) fn sample(dir: &Path) -> Option<StepSample> {
    CgroupProbe::open(dir).ok().map(|mut probe| probe.read(Timestamp::now()))
}

/// The `missing` reason the sampler gives for `field`, if any.
pub(super) fn missing_reason(sample: &StepSample, field: &str) -> Option<String> {
    sample.stepmon.missing.iter().find(|m| m.field == field).map(|m| m.reason.to_string())
}

/// Everything doctor looks at, gathered once.
pub(super) struct Facts {
    pub(super) kernel: String,
    pub(super) euid: u32,
    pub(super) location: Result<discover::Cgroup2, discover::DiscoverError>,
    /// cgroup2 superblock options (`nsdelegate`, ...).
    pub(super) mount_options: String,
    /// Mounts of type `cgroup` (v1) exist.
    pub(super) v1_mounts: bool,
    pub(super) controllers: Controllers,
    pub(super) probe: Option<io::Result<ProbeCgroup>>,
}

pub(super) fn gather() -> Facts {
    let kernel = rustix::system::uname().release().to_string_lossy().into_owned();
    let euid = rustix::process::geteuid().as_raw();
    let location = locate();
    let proc_cgroup = fs::read("/proc/self/cgroup").unwrap_or_default();
    let mountinfo = fs::read("/proc/self/mountinfo").unwrap_or_default();
    let mut controllers = Controllers::default();
    for entry in ProcCgroup::new(&proc_cgroup).flatten().filter(|e| !e.is_unified()) {
        for name in entry.controller_names().filter(|n| !n.starts_with("name=")) {
            controllers.cgroup_v1.push(V1Binding { controller: name.to_owned(), hierarchy: entry.hierarchy_id });
        }
    }
    let v1_mounts = MountInfo::new(&mountinfo).flatten().any(|m| m.fs_type == "cgroup");
    let mount_options = unified_entry(&proc_cgroup)
        .ok()
        .flatten()
        .and_then(|entry| find_cgroup2_mount(&mountinfo, entry.path).ok().flatten())
        .map(|m| m.super_options.to_owned())
        .unwrap_or_default();
    let mut probe = None;
    if let Ok(loc) = &location {
        controllers.root = controller_list(&loc.mount_point.join("cgroup.controllers")).unwrap_or_default();
        controllers.own = controller_list(&loc.own_dir.join("cgroup.controllers")).unwrap_or_default();
        controllers.own_subtree_control =
            controller_list(&loc.own_dir.join("cgroup.subtree_control")).unwrap_or_default();
        if euid == 0 {
            probe = Some(ProbeCgroup::create(&loc.own_dir));
        }
    }
    Facts { kernel, euid, location, mount_options, v1_mounts, controllers, probe }
}

/// v1 controllers (of memory, pids, cpu, cpuacct, blkio) whose hierarchy
/// has a directory of this process's that it may create cgroups in.
/// This process's own cgroups in the memory and pids v1 hierarchies, where
/// they are not the root (which is the whole machine's).
pub(super) fn v1_enclosing() -> Vec<(String, std::path::PathBuf)> {
    crate::cgroup::v1::hierarchies_in(Path::new("/proc/self"))
        .into_iter()
        .filter(|h| h.path != "/")
        .flat_map(|h| {
            let dir = h.own_dir.clone();
            h.controllers.into_iter().filter(|c| c == "memory" || c == "pids").map(move |c| (c, dir.clone()))
        })
        .collect()
}

pub(super) fn v1_writable() -> Vec<String> {
    crate::cgroup::v1::hierarchies_in(Path::new("/proc/self"))
        .into_iter()
        .filter(|h| writable(&h.own_dir))
        .flat_map(|h| h.controllers)
        .collect()
}
