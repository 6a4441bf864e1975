//! One process's identity across PID reuse.

/// The start time of process `pid` in clock ticks since boot (field 22,
/// `starttime`, of `/proc/PID/stat`: proc_pid_stat(5)); `None` when the
/// process does not exist or the file does not parse. With the PID it names
/// one process for good: a later process that reuses the PID started later.
/// stepmon-runner names a run's directories by it and stepmon-job the
/// markers of its job records, so `stepmon gc` collects both once that
/// owner is gone.
#[must_use]
pub fn start_ticks(pid: u32) -> Option<u64> {
    let stat = stepmon_fdread::read_path(format!("/proc/{pid}/stat")).ok()?;
    Some(crate::parse::ProcStat::parse(&stat).ok()?.start_ticks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_start_time_and_no_process_has_pid_zero() {
        let own = start_ticks(std::process::id());
        assert!(own.is_some_and(|ticks| ticks > 0), "{own:?}");
        assert_eq!(start_ticks(std::process::id()), own, "the same each time");
        assert_eq!(start_ticks(0), None, "/proc/0 does not exist");
    }
}
