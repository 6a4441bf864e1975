//! Who wrote a marker: a process, told apart from a later one that reuses
//! its PID by its start time.

/// The start time of process `pid` in clock ticks since boot (field 22,
/// `starttime`, of `/proc/PID/stat`: proc_pid_stat(5)); `None` when it does
/// not exist (or off Linux). With the PID it is the identity stepmon-runner
/// names a run's directories by (`stepmon_runner::cgroup::placement::
/// start_time`, `stepmon-run.<pid>.<start>`), so a marker and its writer's
/// run directories name the same owner, and `stepmon gc` collects both once
/// that owner is gone.
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    Some(stepmon_sysusage::parse::ProcStat::parse(&stat).ok()?.start_ticks)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_start_time_and_no_process_has_pid_zero() {
        let own = start_time(std::process::id());
        assert!(own.is_some_and(|ticks| ticks > 0), "{own:?}");
        assert_eq!(start_time(std::process::id()), own, "the same each time");
        assert_eq!(start_time(0), None, "/proc/0 does not exist");
    }
}
