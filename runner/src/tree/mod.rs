//! The step's process tree, without any cgroup: this process becomes the
//! child subreaper (`PR_SET_CHILD_SUBREAPER`, prctl(2)), so every orphan of
//! the step — a background job whose shell exited, a daemon that
//! double-forked and called `setsid` — is reparented to it instead of to
//! init. It reaps them all with `wait4` and sums their rusage
//! ([`stepmon_model::source::ProcessTree`]), keeps each one's with its
//! command, read while it was a zombie ([`Reaper::reaped`]), and at the end
//! kills what is left: every descendant it can see through its children.
//!
//! Which children are the step's: every child of this process that it did
//! not already have when the step started. A library caller that starts
//! other children from another thread while a step runs would see them
//! counted (and reaped) as the step's. Several steps running at once in one
//! process cannot tell their orphans apart either: each orphan is reaped by
//! whichever step sees it exit first, and what is left behind is killed
//! only when the last of them ends (a step's own cgroup, where it has one,
//! still kills its own leftovers at its end). Run such steps with cgroups of
//! their own, or one at a time, for exact per-step process trees.
//!
//! Not seen: a process started through another service (a daemon asked to
//! spawn it) is no descendant; children of a parent that ignores `SIGCHLD`
//! are reaped by the kernel and their usage is lost (getrusage(2)).

pub(crate) mod children;

use std::collections::BTreeSet;
use std::io;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};
use stepmon_model::processes::ReapedProcess;
use stepmon_model::source::ProcessTree;
use stepmon_sysusage::parse::ProcStat;

use crate::spawn::{Reaped, wait4};

/// Steps of this process whose [`Reaper`] is alive.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// The most reaped processes a [`Reaper`] keeps one by one; past it, only
/// counted (and summed into its [`ProcessTree`]): a step whose daemons
/// leave 100,000 orphans keeps a bounded list.
const KEEP_REAPED: usize = 10_000;

/// Reaps the step's processes and keeps the sum of their usage.
#[derive(Debug)]
pub struct Reaper {
    /// Children this process had before the step (not the step's).
    before: BTreeSet<i32>,
    /// Whether this process was a subreaper already (left so at the end).
    was_subreaper: bool,
    /// The step's main process, once known.
    main: Option<Pid>,
    main_status: Option<ExitStatus>,
    tree: ProcessTree,
    /// Each process reaped, with its rusage, up to [`KEEP_REAPED`].
    reaped: Vec<ReapedProcess>,
    /// Processes reaped past [`KEEP_REAPED`].
    reaped_not_kept: u64,
}

impl Reaper {
    /// Makes this process the child subreaper and remembers its current
    /// children; call before the step starts.
    pub fn start() -> io::Result<Reaper> {
        let was_subreaper = rustix::process::child_subreaper().map(|p| p.is_some()).unwrap_or(false);
        rustix::process::set_child_subreaper(Pid::from_raw(1))?;
        let before = children::of_self().into_iter().collect();
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        Ok(Reaper {
            before,
            was_subreaper,
            main: None,
            main_status: None,
            tree: ProcessTree::default(),
            reaped: Vec::new(),
            reaped_not_kept: 0,
        })
    }

    /// The step's first process.
    pub fn set_main(&mut self, pid: Pid) {
        self.main = Some(pid);
    }

    /// Adds `reaped` to the sums and the list; `command`: its `comm`, read
    /// while it was a zombie.
    fn add(&mut self, reaped: &Reaped, command: Option<String>) {
        if self.reaped.len() < KEEP_REAPED {
            self.reaped.push(record(reaped, command, self.main == Some(reaped.pid)));
        } else {
            self.reaped_not_kept += 1;
        }
        let r = reaped.rusage;
        let t = &mut self.tree;
        #[allow(clippy::cast_precision_loss)] // µs counts far below 2^53
        {
            t.user_seconds += r.user_micros as f64 / 1e6;
            t.system_seconds += r.system_micros as f64 / 1e6;
        }
        t.max_rss_bytes = t.max_rss_bytes.max(r.max_rss_kib.saturating_mul(1024));
        t.block_read_bytes = t.block_read_bytes.saturating_add(r.in_blocks.saturating_mul(512));
        t.block_write_bytes = t.block_write_bytes.saturating_add(r.out_blocks.saturating_mul(512));
        t.voluntary_context_switches += r.voluntary_switches;
        t.involuntary_context_switches += r.involuntary_switches;
        t.minor_faults += r.minor_faults;
        t.major_faults += r.major_faults;
        t.processes_reaped += 1;
    }

    /// Reaps the main process (blocking) and returns its status.
    pub fn wait_main(&mut self) -> io::Result<ExitStatus> {
        let pid = self.main.ok_or_else(|| io::Error::other("no step process to wait for"))?;
        // Its command while it is a zombie; if waitid fails, wait4 says why.
        let command = if exited(pid, false).unwrap_or(false) { command_of(pid) } else { None };
        let reaped = wait4(pid, false)?.ok_or_else(|| io::Error::other("wait4 returned no status"))?;
        self.add(&reaped, command);
        self.main_status = Some(reaped.status);
        Ok(reaped.status)
    }

    /// [`Reaper::wait_main`] without blocking: `None` while it runs.
    pub fn try_wait_main(&mut self) -> io::Result<Option<ExitStatus>> {
        let pid = self.main.ok_or_else(|| io::Error::other("no step process to wait for"))?;
        let command = match exited(pid, true) {
            Ok(false) => return Ok(None),
            Ok(true) => command_of(pid),
            Err(_) => None, // wait4 says why
        };
        let Some(reaped) = wait4(pid, true)? else { return Ok(None) };
        self.add(&reaped, command);
        self.main_status = Some(reaped.status);
        Ok(Some(reaped.status))
    }

    /// The step's children of this process now (orphans reparented to it),
    /// without the main process.
    fn orphans(&self) -> Vec<Pid> {
        children::of_self()
            .into_iter()
            .filter(|pid| !self.before.contains(pid) && self.main.is_none_or(|m| m.as_raw_nonzero().get() != *pid))
            .filter_map(Pid::from_raw)
            .collect()
    }

    /// Reaps every orphan of the step that has exited (never blocks) and
    /// returns those still running.
    pub fn reap_exited(&mut self) -> Vec<Pid> {
        let mut running = Vec::new();
        for pid in self.orphans() {
            match exited(pid, true) {
                Ok(true) => {}
                Ok(false) => {
                    running.push(pid);
                    continue;
                }
                // ECHILD: reaped meanwhile by another step's reaper.
                Err(_) => continue,
            }
            // Still a zombie, its command can be read: the pid is not
            // reused before it is reaped.
            let command = command_of(pid);
            match wait4(pid, true) {
                Ok(Some(reaped)) => self.add(&reaped, command),
                Ok(None) => running.push(pid),
                // ECHILD: reaped meanwhile by another step's reaper.
                Err(_) => {}
            }
        }
        running
    }

    /// Waits until every orphan of the step has exited, reaping each
    /// (`--wait-all` without a cgroup).
    pub fn wait_all(&mut self) {
        let mut pause = Duration::from_millis(1);
        loop {
            if self.reap_exited().is_empty() {
                return;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    /// Kills every descendant of the step that this process can see (its
    /// orphans and their descendants), round after round until none is
    /// left or `timeout` passes, reaping them. Returns how many it signalled.
    pub fn kill_leftovers(&mut self, timeout: Duration) -> u64 {
        if ACTIVE.load(Ordering::SeqCst) > 1 {
            // Another step runs: its processes are children of this process
            // too and cannot be told from this step's orphans.
            let _ = self.reap_exited();
            return 0;
        }
        let start = Instant::now();
        let mut signalled: BTreeSet<i32> = BTreeSet::new();
        loop {
            let orphans = self.reap_exited();
            if orphans.is_empty() || start.elapsed() > timeout {
                break;
            }
            // Children first, then each one's descendants: killing a parent
            // reparents its children to this process, where the next round
            // finds them.
            for pid in orphans.iter().flat_map(|pid| children::tree_of(pid.as_raw_nonzero().get())) {
                if let Some(p) = Pid::from_raw(pid) {
                    let _ = rustix::process::kill_process(p, Signal::KILL);
                    signalled.insert(pid);
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let killed = u64::try_from(signalled.len()).unwrap_or(u64::MAX);
        self.tree.leftovers_killed += killed;
        killed
    }

    /// The sums so far.
    #[must_use]
    pub fn tree(&self) -> ProcessTree {
        self.tree
    }

    /// Each process reaped so far with its `wait4` rusage (which includes
    /// the descendants it waited for, getrusage(2)), in reaping order, at
    /// most 10,000; [`Reaper::reaped_not_kept`] counts the rest.
    #[must_use]
    pub fn reaped(&self) -> &[ReapedProcess] {
        &self.reaped
    }

    /// Processes reaped but not kept in [`Reaper::reaped`] (past 10,000).
    #[must_use]
    pub fn reaped_not_kept(&self) -> u64 {
        self.reaped_not_kept
    }
}

/// Whether the child `pid` has exited (blocking until it has unless
/// `nohang`), leaving it a zombie (`WNOWAIT`, waitid(2)): its
/// `/proc/PID/stat` still describes it until [`wait4`] reaps it.
fn exited(pid: Pid, nohang: bool) -> io::Result<bool> {
    let mut options = WaitIdOptions::EXITED | WaitIdOptions::NOWAIT;
    if nohang {
        options |= WaitIdOptions::NOHANG;
    }
    loop {
        match rustix::process::waitid(WaitId::Pid(pid), options) {
            Ok(status) => return Ok(status.is_some()),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// The command name (`comm`) of this process's zombie child `pid` from
/// `/proc/PID/stat`; `None` where that file describes another process: a
/// procfs of another pid namespace (`unshare --pid` without `--mount-proc`
/// leaves the host's /proc, where our child's pid names someone else),
/// told by its parent not being this process as that procfs sees it.
fn command_of(pid: Pid) -> Option<String> {
    let stat_of = |name: &str| stepmon_fdread::read_path(format!("/proc/{name}/stat")).ok();
    let me = stat_of("self")?;
    let me = ProcStat::parse(&me).ok()?.pid;
    let bytes = stat_of(&pid.as_raw_nonzero().to_string())?;
    let stat = ProcStat::parse(&bytes).ok().filter(|s| s.ppid == me)?;
    Some(String::from_utf8_lossy(stat.comm).into_owned())
}

/// The document's record of one reaped process.
fn record(reaped: &Reaped, command: Option<String>, main: bool) -> ReapedProcess {
    use std::os::unix::process::ExitStatusExt;
    let r = reaped.rusage;
    let mut p = ReapedProcess::default();
    p.pid = reaped.pid.as_raw_nonzero().get().unsigned_abs();
    p.command = command;
    p.main = main;
    #[allow(clippy::cast_precision_loss)] // µs counts far below 2^53
    {
        p.user_seconds = r.user_micros as f64 / 1e6;
        p.system_seconds = r.system_micros as f64 / 1e6;
    }
    p.cpu_seconds = p.user_seconds + p.system_seconds;
    p.max_rss_bytes = r.max_rss_kib.saturating_mul(1024);
    p.block_read_bytes = r.in_blocks.saturating_mul(512);
    p.block_write_bytes = r.out_blocks.saturating_mul(512);
    p.minor_faults = r.minor_faults;
    p.major_faults = r.major_faults;
    p.voluntary_switches = r.voluntary_switches;
    p.involuntary_switches = r.involuntary_switches;
    p.exit_status = reaped.status.into_raw().cast_unsigned();
    p
}

impl Drop for Reaper {
    fn drop(&mut self) {
        if ACTIVE.fetch_sub(1, Ordering::SeqCst) > 1 {
            return; // another step still needs the subreaper attribute
        }
        if !self.was_subreaper {
            let _ = rustix::process::set_child_subreaper(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spawns `sh -c SCRIPT` as the step's main process (reaped by the reaper's wait4).
    fn main_process(reaper: &mut Reaper, script: &str) -> Pid {
        #[allow(clippy::zombie_processes)]
        let child = std::process::Command::new("sh").args(["-c", script]).spawn().unwrap();
        let pid = Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
        reaper.set_main(pid);
        pid
    }

    #[test]
    fn each_reaped_process_is_kept_with_its_command_rusage_and_status() {
        let _children = crate::CHILDREN_OF_THE_TEST_PROCESS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut reaper = Reaper::start().unwrap();
        // dd touches its 64 MiB buffer; sh waits for it, so sh's rusage has
        // dd's max RSS. The background sleep outlives sh: an orphan.
        let pid =
            main_process(&mut reaper, "dd if=/dev/zero of=/dev/null bs=64M count=1 status=none; sleep 0.2 & exit 3");
        let status = reaper.wait_main().unwrap();
        assert_eq!(status.code(), Some(3));
        reaper.wait_all();
        let reaped = reaper.reaped();
        assert_eq!(reaped.len(), 2, "{reaped:#?}");
        let main = &reaped[0];
        assert_eq!(
            (main.pid, main.main, main.command.as_deref()),
            (pid.as_raw_nonzero().get().unsigned_abs(), true, Some("sh"))
        );
        assert_eq!(main.exit_status, 3 << 8, "the wait status");
        assert!(main.max_rss_bytes >= 64 << 20, "dd's 64 MiB buffer, waited for by sh: {main:#?}");
        assert!(main.max_rss_bytes < 1 << 30, "{main:#?}");
        assert!(main.cpu_seconds >= main.user_seconds && main.minor_faults > 0, "{main:#?}");
        let orphan = &reaped[1];
        assert_eq!((orphan.main, orphan.command.as_deref(), orphan.exit_status), (false, Some("sleep"), 0));
        assert!(orphan.max_rss_bytes > 0 && orphan.max_rss_bytes < main.max_rss_bytes, "{orphan:#?}");
        assert_eq!(reaper.reaped_not_kept(), 0);
        let tree = reaper.tree();
        assert_eq!(tree.processes_reaped, 2);
        assert_eq!(tree.max_rss_bytes, main.max_rss_bytes);
    }

    #[test]
    fn past_the_bound_reaped_processes_are_only_counted() {
        let _children = crate::CHILDREN_OF_THE_TEST_PROCESS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut reaper = Reaper::start().unwrap();
        main_process(&mut reaper, "exit 0");
        reaper.wait_main().unwrap();
        let kept = reaper.reaped[0].clone();
        reaper.reaped = vec![kept; KEEP_REAPED];
        main_process(&mut reaper, "exit 1");
        assert_eq!(reaper.wait_main().unwrap().code(), Some(1));
        assert_eq!((reaper.reaped().len(), reaper.reaped_not_kept()), (KEEP_REAPED, 1));
        assert_eq!(reaper.tree().processes_reaped, 2, "still summed");
    }
}
