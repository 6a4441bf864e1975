//! The step's largest processes by memory, read when an event needs them
//! (rarely: once per crossing), from procfs: for each process of the
//! step's memory cgroup (`cgroup.procs`), its command (`/proc/PID/stat`)
//! and `RssAnon + RssShmem` (`/proc/PID/status`, what the process itself
//! charges to the cgroup beside its page cache,
//! <https://docs.kernel.org/filesystems/proc.html#proc-pid-status>).

use std::path::Path;

use stepmon_cgroupfs_parse::PidList;
use stepmon_model::event::ProcessMemory;
use stepmon_sysusage::parse::{ProcStat, ProcStatus};

/// One process's command and resident anonymous + shared memory, bytes;
/// `None` when it is gone.
fn of_process(proc_root: &Path, pid: u32) -> Option<ProcessMemory> {
    let dir = proc_root.join(pid.to_string());
    let stat_bytes = stepmon_fdread::read_path(dir.join("stat")).ok()?;
    let command = String::from_utf8_lossy(ProcStat::parse(&stat_bytes).ok()?.comm).into_owned();
    let status = ProcStatus::parse(&stepmon_fdread::read_path(dir.join("status")).ok()?).ok()?;
    let kib = status.rss_anon_kib.unwrap_or(0).saturating_add(status.rss_shmem_kib.unwrap_or(0));
    Some(ProcessMemory::new(pid, command, kib.saturating_mul(1024)))
}

/// The `keep` largest processes listed in `procs` (a `cgroup.procs`),
/// largest first; empty when the list cannot be read.
pub(super) fn by_memory(procs: &Path, proc_root: &Path, keep: usize) -> Vec<ProcessMemory> {
    let Ok(bytes) = stepmon_fdread::read_path(procs) else { return Vec::new() };
    let Ok(pids) = PidList::parse(&bytes) else { return Vec::new() };
    let mut all: Vec<ProcessMemory> = pids.iter().filter_map(|pid| of_process(proc_root, pid)).collect();
    all.sort_by(|a, b| b.rss_bytes.cmp(&a.rss_bytes).then(a.pid.cmp(&b.pid)));
    all.truncate(keep);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_found_with_its_command() {
        let dir = tempfile::tempdir().unwrap();
        let procs = dir.path().join("cgroup.procs");
        std::fs::write(&procs, format!("{}\n4194304\n", std::process::id())).unwrap();
        let largest = by_memory(&procs, Path::new("/proc"), 3);
        assert_eq!(largest.len(), 1, "the PID that does not exist is left out: {largest:?}");
        assert_eq!(largest[0].pid, std::process::id());
        assert!(largest[0].rss_bytes > 0 && !largest[0].command.is_empty(), "{largest:?}");
        assert!(by_memory(&dir.path().join("none"), Path::new("/proc"), 3).is_empty());
    }
}
