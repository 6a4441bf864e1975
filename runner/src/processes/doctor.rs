//! What `stepmon doctor` says about per-process accounting: whether the
//! kernel accepts a taskstats listener from this process (tried: registered
//! and deregistered at once), and whether delay accounting is on.

/// Whether per-process records are available: `Ok(detail)` or `Err((reason, hint))`.
pub(crate) fn taskstats() -> Result<String, (String, Option<String>)> {
    match super::registered() {
        Ok((fd, family, cpus)) => {
            let _ = super::socket::deregister_cpumask(&fd, family, &cpus);
            Ok(format!("taskstats exit records of every process (listener on CPUs {cpus})"))
        }
        Err(reason) => {
            let reason = format!(
                "{reason}; falls back to /proc/PID/{{stat,status,io}} at each sample ({}) and the wait4 rusage \
                 of the processes stepmon reaps (the step's main process and its orphans, each with the \
                 descendants it waited for)",
                stepmon_model::processes::SAMPLED
            );
            let hint = if !rustix::process::geteuid().is_root() {
                Some("run stepmon as root in the initial namespaces for per-process records".to_owned())
            } else if reason.contains("initial network namespace") {
                Some("run it in the host's network namespace (docker run --network=host)".to_owned())
            } else {
                None
            };
            Err((reason, hint))
        }
    }
}

/// Whether delay accounting is on: `Ok(detail)` or `Err((reason, hint))`.
pub(crate) fn delay_accounting() -> Result<String, (String, Option<String>)> {
    if super::delay_accounting() {
        Ok("kernel.task_delayacct=1: per-process block IO, swap-in and reclaim delays".to_owned())
    } else {
        Err((
            "kernel.task_delayacct is 0 (or absent): no per-process block IO, swap-in or reclaim delays".to_owned(),
            Some("sysctl kernel.task_delayacct=1, or boot with delayacct (stepmon never changes it)".to_owned()),
        ))
    }
}
