//! How a run's cgroups and scopes are named, and whose they are: each name
//! carries its owner's PID and start time, so that `gc` (and every run)
//! tells a dead owner's leftovers from a live one's. Used by the placement
//! of a run's cgroups, their v1 twins, the systemd scopes and `doctor`'s
//! probe; it uses none of them.

/// Prefix of every run parent; `gc` only ever touches directories named so.
pub(crate) const RUN_PREFIX: &str = "stepmon-run.";

/// The start time of `pid` in clock ticks since boot: with the PID it
/// identifies a process across PID reuse
/// ([`stepmon_sysusage::probe::start_ticks`]).
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    stepmon_sysusage::probe::start_ticks(pid)
}

/// This process's [`start_time`], read once (a builder named every step's
/// directories with a read of /proc/PID/stat, and the sweep of earlier
/// runs' directories read it again for each of this run's own); a forked
/// child has a PID of its own, and reads its own.
fn own_start_time() -> Option<u64> {
    static OWN: std::sync::OnceLock<(u32, Option<u64>)> = std::sync::OnceLock::new();
    let pid = std::process::id();
    match OWN.get_or_init(|| (pid, start_time(pid))) {
        &(own, start) if own == pid => start,
        _ => start_time(pid),
    }
}

/// A new name for this process's run directories: `stepmon-run.<pid>.<start>`
/// for its first step, `stepmon-run.<pid>.<start>.<n>` for the n-th after it
/// (a library caller may run several steps at once, or one after another
/// while the last one's directories are still going away).
#[must_use]
pub(crate) fn run_name() -> String {
    static STEPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let pid = std::process::id();
    let start = own_start_time().unwrap_or(0);
    match STEPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) {
        0 => format!("{RUN_PREFIX}{pid}.{start}"),
        n => format!("{RUN_PREFIX}{pid}.{start}.{n}"),
    }
}

/// Whether the owner a run directory's `name` encodes is gone (not this
/// PID with this start time any more); `None` for other names.
#[must_use]
pub(crate) fn owner_gone(name: &str) -> Option<bool> {
    let (pid, start) = owner_of(name)?;
    let now = if pid == std::process::id() { own_start_time() } else { start_time(pid) };
    Some(now != Some(start))
}

/// The owner (pid, start time) encoded in a run parent's name.
pub(crate) fn owner_of(name: &str) -> Option<(u32, u64)> {
    let mut fields = name.strip_prefix(RUN_PREFIX)?.split('.');
    let (pid, start) = (fields.next()?, fields.next()?);
    // A step number may follow ([`run_name`]).
    if fields.next().is_some_and(|n| n.parse::<u64>().is_err()) || fields.next().is_some() {
        return None;
    }
    Some((pid.parse().ok()?, start.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_names_are_unique_per_step_and_name_their_owner() {
        let (first, second) = (run_name(), run_name());
        assert_ne!(first, second, "two steps of one process share no directory");
        let me = (std::process::id(), start_time(std::process::id()).unwrap());
        assert_eq!(owner_of(&first), Some(me));
        assert_eq!(owner_of(&second), Some(me));
        assert_eq!(owner_gone(&second), Some(false));
        assert_eq!(owner_of("stepmon-run.12.34.5"), Some((12, 34)));
        assert_eq!(owner_of("stepmon-run.12.34.x"), None);
        assert_eq!(owner_of("stepmon-run.12.34.5.6"), None);
        assert_eq!(owner_of("stepmon-supervisor"), None);
    }
}
