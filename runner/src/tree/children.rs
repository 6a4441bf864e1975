//! Who a process's children are: `/proc/PID/task/TID/children`
//! (<https://docs.kernel.org/filesystems/proc.html>, `CONFIG_PROC_CHILDREN`),
//! one file per thread since a child's parent is the thread that forked it
//! (or, for an orphan, the thread of the subreaper it was given to). Where
//! the kernel lacks those files, every `/proc/PID/stat` is read for its
//! parent field instead.

use std::fs;

use stepmon_sysusage::parse::ProcStat;

/// PIDs listed in one `children` file (space-separated decimal numbers).
fn parse_list(text: &str) -> impl Iterator<Item = i32> + '_ {
    text.split_ascii_whitespace().filter_map(|pid| pid.parse().ok())
}

/// The children of `pid`, from its threads' `children` files; `None` when
/// the kernel has no such files.
fn from_task_files(pid: &str) -> Option<Vec<i32>> {
    let mut found = Vec::new();
    let mut any = false;
    let tasks = std::path::PathBuf::from(format!("/proc/{pid}/task"));
    for task in stepmon_fdread::list_dir(&tasks).ok()? {
        let Ok(text) = fs::read_to_string(tasks.join(task.name).join("children")) else { continue };
        any = true;
        found.extend(parse_list(&text));
    }
    any.then_some(found)
}

/// The parent PID in a `/proc/PID/stat` file (field 4).
fn parent_of(stat: &[u8]) -> Option<i32> {
    i32::try_from(ProcStat::parse(stat).ok()?.ppid).ok()
}

/// Every process whose parent is `parent`, by reading each `/proc/PID/stat`.
fn by_scanning(parent: i32) -> Vec<i32> {
    let Ok(entries) = stepmon_fdread::list_dir("/proc") else { return Vec::new() };
    entries
        .iter()
        .filter_map(|entry| entry.name.to_str()?.parse::<i32>().ok())
        .filter(|pid| fs::read(format!("/proc/{pid}/stat")).ok().and_then(|s| parent_of(&s)) == Some(parent))
        .collect()
}

/// The children of process `pid`.
pub(crate) fn of(pid: i32) -> Vec<i32> {
    from_task_files(&pid.to_string()).unwrap_or_else(|| by_scanning(pid))
}

/// `pid`, a child of this process as its own pid namespace numbers it, as
/// the mounted procfs numbers it: the same unless /proc belongs to another
/// pid namespace (`unshare --pid` without `--mount-proc` leaves the host's
/// /proc); then the child of this process whose `NSpid` (proc(5)) ends in
/// `pid`. `None` when it is not found.
pub(crate) fn in_procfs(pid: i32) -> Option<i32> {
    let me = i32::try_from(std::process::id()).ok()?;
    // `/proc/self` links to this process's number in the mounted procfs's
    // pid namespace (a link read, not a `stat` file generated).
    let procfs_me: i32 = fs::read_link("/proc/self").ok()?.to_str()?.parse().ok()?;
    if procfs_me == me {
        return Some(pid);
    }
    let ours = format!("\t{pid}");
    from_task_files("self")?.into_iter().find(|child| {
        fs::read_to_string(format!("/proc/{child}/status")).is_ok_and(|status| {
            status.lines().find_map(|l| l.strip_prefix("NSpid:")).is_some_and(|ns| ns.ends_with(&ours))
        })
    })
}

/// The children of this process.
#[cfg(test)]
pub(crate) fn of_self() -> Vec<i32> {
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    from_task_files("self").unwrap_or_else(|| by_scanning(me))
}

/// `pid` and all its descendants, parents before children.
pub(crate) fn tree_of(pid: i32) -> Vec<i32> {
    let mut out = vec![pid];
    let mut next = 0;
    // Bounded: a fork bomb must not keep this loop going forever.
    while let Some(&current) = out.get(next) {
        next += 1;
        if out.len() > 100_000 {
            break;
        }
        out.extend(of(current));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_stat_lines() {
        assert_eq!(parse_list("12 345 \n").collect::<Vec<_>>(), [12, 345]);
        assert_eq!(parse_list("").count(), 0);
        assert_eq!(parent_of(b"42 (a b) c)) S 7 42 42 0 -1 4194560 120 0 3 0 15 4 0 0 20 0 2 0 9876\n"), Some(7));
        assert_eq!(parent_of(b"garbage"), None);
    }

    #[test]
    fn finds_a_child_both_ways() {
        let _children = crate::CHILDREN_OF_THE_TEST_PROCESS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        assert!(of_self().contains(&pid), "task files: {:?}", of_self());
        let me = i32::try_from(std::process::id()).unwrap();
        assert!(by_scanning(me).contains(&pid));
        assert_eq!(tree_of(pid)[0], pid);
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
