//! The cgroup step probe (Linux).

mod absent;
pub mod discover;
mod files;
mod probe;
mod root;
pub mod v1;

pub use probe::CgroupProbe;
pub use v1::{CgroupV1Dirs, CgroupV1Probe};

use std::path::Path;

/// The controllers bound to a cgroup v1 hierarchy on this host (hierarchy
/// column of `<proc_root>/cgroups` ≠ 0), by their cgroup v2 names (v1's
/// `blkio` is `io`). Tells "bound to v1" (hybrid hosts) from "not enabled";
/// a missing or odd file just means "don't know" (empty).
///
/// The host's own (`/proc`) is read once per process: a hierarchy is bound
/// at mount time, and every step's probe and placement asked again (two
/// opens and four reads a step).
#[must_use]
pub fn controllers_on_v1(proc_root: &Path) -> Vec<String> {
    static HOST: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    if proc_root == Path::new("/proc") {
        return HOST.get_or_init(|| read_controllers_on_v1(proc_root)).clone();
    }
    read_controllers_on_v1(proc_root)
}

fn read_controllers_on_v1(proc_root: &Path) -> Vec<String> {
    let Ok(bytes) = stepmon_fdread::read_path(proc_root.join("cgroups")) else { return Vec::new() };
    let text = String::from_utf8_lossy(&bytes);
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let name = fields.next()?;
            let hierarchy: u32 = fields.next()?.parse().ok()?;
            let name = if name == "blkio" { "io" } else { name };
            (hierarchy != 0).then(|| name.to_owned())
        })
        .collect()
}
