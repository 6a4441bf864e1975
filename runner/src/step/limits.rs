//! The step's limits (`--memory-max`, `--cpus`, `--pids-max`, …) written
//! to its cgroup v2, or to its v1 cgroups where v2 lacks the controller.

use std::path::Path;

use crate::cgroup::placement::RunCgroups;
use crate::cgroup::v1::V1Cgroups;
use crate::error::{RunError, RunErrorKind};
use crate::options::Limits;

/// A limit in the step's v1 hierarchy where its cgroup v2 lacks the
/// controller: directory, file and value (`memory.limit_in_bytes`,
/// `pids.max`, `cpu.cfs_quota_us` for the v2 files `memory.max`,
/// `pids.max`, `cpu.max`).
pub(super) fn v1_limit<'a>(
    v1: Option<&'a V1Cgroups>,
    controller: &str,
    value: &str,
) -> Option<(&'a Path, &'static str, String)> {
    let v1 = v1?;
    match controller {
        "memory" => Some((v1.dir_of("memory")?, "memory.limit_in_bytes", value.to_owned())),
        "pids" => Some((v1.dir_of("pids")?, "pids.max", value.to_owned())),
        // `QUOTA PERIOD` of cpu.max; the v1 period is the same 100 ms default.
        "cpu" => Some((v1.dir_of("cpu")?, "cpu.cfs_quota_us", value.split_whitespace().next()?.to_owned())),
        _ => None,
    }
}

/// Writes the requested limits into the step's cgroup (which stepmon owns):
/// the cgroup v2 file where the controller is enabled there, else its v1
/// equivalent.
pub(super) fn apply_limits(
    limits: &Limits,
    cgroups: Option<&RunCgroups>,
    v1: Option<&V1Cgroups>,
    no_cgroup: Option<&str>,
) -> Result<(), RunError> {
    let mut writes: Vec<(&str, &str, String)> = Vec::new();
    if let Some(bytes) = limits.memory_max {
        writes.push(("memory", "memory.max", bytes.to_string()));
    }
    if let Some(cores) = limits.cpus {
        if !(cores > 0.0 && cores.is_finite()) {
            return Err(RunError::new(
                RunErrorKind::InvalidOptions,
                format!("the CPU limit must be a positive number of cores, got {cores}"),
            ));
        }
        // The kernel's default period is 100 ms; quota = cores × period.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let quota = (cores * 100_000.0).round().max(1000.0) as u64;
        writes.push(("cpu", "cpu.max", format!("{quota} 100000")));
    }
    if let Some(n) = limits.pids_max {
        writes.push(("pids", "pids.max", n.to_string()));
    }
    for (controller, file, value) in writes {
        if let Some(cgroups) = cgroups.filter(|c| c.enabled.contains(&controller)) {
            std::fs::write(cgroups.leaf.join(file), &value)
                .map_err(|e| RunError::cgroup(&format!("cannot set {file} to {value}"), &e))?;
            continue;
        }
        if let Some((dir, v1_file, v1_value)) = v1_limit(v1, controller, &value) {
            std::fs::write(dir.join(v1_file), &v1_value)
                .map_err(|e| RunError::cgroup(&format!("cannot set {v1_file} to {v1_value}"), &e))?;
            continue;
        }
        let why = match cgroups {
            Some(c) => {
                c.not_enabled.iter().find(|n| n.controller == controller).map_or_else(String::new, |n| n.reason.clone())
            }
            None => format!("the step has no cgroup of its own: {}", no_cgroup.unwrap_or("")),
        };
        return Err(RunError::new(
            RunErrorKind::Placement,
            format!("cannot set {file}: the {controller} controller is not available ({why})"),
        ));
    }
    Ok(())
}
