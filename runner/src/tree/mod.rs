//! The step's process tree, without any cgroup: this process becomes the
//! child subreaper (`PR_SET_CHILD_SUBREAPER`, prctl(2)), so every orphan of
//! the step — a background job whose shell exited, a daemon that
//! double-forked and called `setsid` — is reparented to it instead of to
//! init. It reaps them all with `wait4` and sums their rusage
//! ([`stepmon_report::source::ProcessTree`]), and at the end kills what is
//! left: every descendant it can see through its children.
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

use rustix::process::{Pid, Signal};
use stepmon_report::source::ProcessTree;

use crate::spawn::{Reaped, wait4};

/// Steps of this process whose [`Reaper`] is alive.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

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
}

impl Reaper {
    /// Makes this process the child subreaper and remembers its current
    /// children; call before the step starts.
    pub fn start() -> io::Result<Reaper> {
        let was_subreaper = rustix::process::child_subreaper().map(|p| p.is_some()).unwrap_or(false);
        rustix::process::set_child_subreaper(Pid::from_raw(1))?;
        let before = children::of_self().into_iter().collect();
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        Ok(Reaper { before, was_subreaper, main: None, main_status: None, tree: ProcessTree::default() })
    }

    /// The step's first process.
    pub fn set_main(&mut self, pid: Pid) {
        self.main = Some(pid);
    }

    fn add(&mut self, reaped: &Reaped) {
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
        let reaped = wait4(pid, false)?.ok_or_else(|| io::Error::other("wait4 returned no status"))?;
        self.add(&reaped);
        self.main_status = Some(reaped.status);
        Ok(reaped.status)
    }

    /// [`Reaper::wait_main`] without blocking: `None` while it runs.
    pub fn try_wait_main(&mut self) -> io::Result<Option<ExitStatus>> {
        let pid = self.main.ok_or_else(|| io::Error::other("no step process to wait for"))?;
        let Some(reaped) = wait4(pid, true)? else { return Ok(None) };
        self.add(&reaped);
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
            match wait4(pid, true) {
                Ok(Some(reaped)) => self.add(&reaped),
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
