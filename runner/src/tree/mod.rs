//! The step's process tree, without any cgroup: each step is started by a
//! subreaper of its own ([`crate::spawn::subreaper`]), so every orphan of
//! the step — a background job whose shell exited, a daemon that
//! double-forked and called `setsid` — is reparented to it, reaped there
//! with `wait4`, and reported to this process. [`Reaper`] sums their rusage
//! ([`stepmon_model::source::ProcessTree`]) and keeps each one's with its
//! command, read while it was a zombie ([`Reaper::reaped`]); at the step's
//! end the subreaper kills what is left and says how many.
//!
//! Steps running at once in one process each have their own subreaper: their
//! orphans are never mixed, and no child of the caller's own is ever reaped.
//!
//! Not seen: a process started through another service (a daemon asked to
//! spawn it) is no descendant; children of a parent that ignores `SIGCHLD`
//! are reaped by the kernel and their usage is lost (getrusage(2)).

pub(crate) mod children;

use std::process::ExitStatus;

use stepmon_model::processes::ReapedProcess;
use stepmon_model::source::ProcessTree;

use crate::spawn::Reaped;
use crate::spawn::subreaper::Event;

/// Where a step is after an [`Event`] of its subreaper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Progress {
    /// Its first process runs.
    Running,
    /// Its first process has exited (this event).
    MainExited,
    /// Every process of it is gone.
    Done,
}

/// The most reaped processes a [`Reaper`] keeps one by one; past it, only
/// counted (and summed into its [`ProcessTree`]): a step whose daemons
/// leave 100,000 orphans keeps a bounded list.
const KEEP_REAPED: usize = 10_000;

/// What the step's subreaper reaped: the sum of their usage and each one.
#[derive(Debug, Default)]
pub(crate) struct Reaper {
    main_status: Option<ExitStatus>,
    tree: ProcessTree,
    /// Each process reaped, with its rusage, up to [`KEEP_REAPED`].
    reaped: Vec<ReapedProcess>,
    /// Processes reaped past [`KEEP_REAPED`].
    reaped_not_kept: u64,
}

impl Reaper {
    /// Nothing reaped yet.
    #[must_use]
    pub(crate) fn new() -> Reaper {
        Reaper::default()
    }

    /// Adds `reaped` to the sums and the list; `command`: its `comm`, read
    /// while it was a zombie; `main`: the step's first process.
    pub(crate) fn add(&mut self, reaped: &Reaped, command: Option<String>, main: bool) {
        if main {
            self.main_status = Some(reaped.status);
        }
        if self.reaped.len() < KEEP_REAPED {
            self.reaped.push(record(reaped, command, main));
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

    /// Takes one event of the step's subreaper.
    pub(crate) fn absorb(&mut self, event: Event) -> Progress {
        match event {
            Event::Reaped { reaped, command, main, .. } => {
                self.add(&reaped, command, main);
                if main { Progress::MainExited } else { Progress::Running }
            }
            Event::Done { killed } => {
                self.add_killed(killed);
                Progress::Done
            }
        }
    }

    /// Leftovers the subreaper killed at the step's end.
    pub(crate) fn add_killed(&mut self, killed: u64) {
        self.tree.leftovers_killed += killed;
    }

    /// The exit status of the step's first process, once reaped.
    #[must_use]
    pub(crate) fn main_status(&self) -> Option<ExitStatus> {
        self.main_status
    }

    /// The sums so far.
    #[must_use]
    pub(crate) fn tree(&self) -> ProcessTree {
        self.tree
    }

    /// Each process reaped so far with its `wait4` rusage (which includes
    /// the descendants it waited for, getrusage(2)), in reaping order, at
    /// most 10,000; [`Reaper::reaped_not_kept`] counts the rest.
    #[must_use]
    pub(crate) fn reaped(&self) -> &[ReapedProcess] {
        &self.reaped
    }

    /// Processes reaped but not kept in [`Reaper::reaped`] (past 10,000).
    #[must_use]
    pub(crate) fn reaped_not_kept(&self) -> u64 {
        self.reaped_not_kept
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spawn::subreaper;
    use crate::spawn::{Mode, Target};

    /// Runs `sh -c SCRIPT` under its own subreaper to its end (`wait_all`:
    /// its orphans waited for, else killed), every event into a [`Reaper`].
    fn run(script: &str, wait_all: bool) -> (Reaper, u32) {
        let command: Vec<std::ffi::OsString> = ["sh", "-c", script].iter().map(Into::into).collect();
        let mut kept =
            subreaper::spawn(Target::default(), &command, &crate::spawn::Launch::default(), Mode::Auto).unwrap();
        let pid = kept.pid.as_raw_nonzero().get().unsigned_abs();
        let mut reaper = Reaper::new();
        loop {
            match reaper.absorb(kept.next_event().unwrap()) {
                Progress::Running => {}
                Progress::MainExited => kept.end(wait_all),
                Progress::Done => return (reaper, pid),
            }
        }
    }

    #[test]
    fn each_reaped_process_is_kept_with_its_command_rusage_and_status() {
        // dd touches its 64 MiB buffer; sh waits for it, so sh's rusage has
        // dd's max RSS. The background sleep outlives sh: an orphan.
        let (reaper, pid) = run("dd if=/dev/zero of=/dev/null bs=64M count=1 status=none; sleep 0.2 & exit 3", true);
        assert_eq!(reaper.main_status().and_then(|s| s.code()), Some(3));
        let reaped = reaper.reaped();
        assert_eq!(reaped.len(), 2, "{reaped:#?}");
        let main = &reaped[0];
        assert_eq!((main.pid, main.main, main.command.as_deref()), (pid, true, Some("sh")));
        assert_eq!(main.exit_status, 3 << 8, "the wait status");
        assert!(main.max_rss_bytes >= 64 << 20, "dd's 64 MiB buffer, waited for by sh: {main:#?}");
        assert!(main.max_rss_bytes < 1 << 30, "{main:#?}");
        assert!(main.cpu_seconds >= main.user_seconds && main.minor_faults > 0, "{main:#?}");
        let orphan = &reaped[1];
        assert_eq!((orphan.main, orphan.command.as_deref(), orphan.exit_status), (false, Some("sleep"), 0));
        assert!(orphan.max_rss_bytes > 0 && orphan.max_rss_bytes < main.max_rss_bytes, "{orphan:#?}");
        assert_eq!(reaper.reaped_not_kept(), 0);
        let tree = reaper.tree();
        assert_eq!((tree.processes_reaped, tree.leftovers_killed), (2, 0));
        assert_eq!(tree.max_rss_bytes, main.max_rss_bytes);
    }

    #[test]
    fn leftovers_are_killed_and_counted_at_the_end() {
        // Two orphans, one of them with a child of its own: the step's first
        // process exits only once that child exists (the inner shell says so
        // through a file), so three are left at its end.
        let ready = std::env::temp_dir().join(format!("stepmon-tree-test-{}", std::process::id()));
        let _ = std::fs::remove_file(&ready);
        let script = format!(
            "sleep 30 & sh -c 'sleep 30 & : > {f}; wait' & while [ ! -e {f} ]; do sleep 0.01; done; exit 0",
            f = ready.display()
        );
        let (reaper, _) = run(&script, false);
        let _ = std::fs::remove_file(&ready);
        let tree = reaper.tree();
        assert_eq!(tree.leftovers_killed, 3, "{:#?}", reaper.reaped());
        assert_eq!(tree.processes_reaped, 4, "{:#?}", reaper.reaped());
        assert!(reaper.reaped().iter().filter(|p| !p.main).all(|p| p.exit_status == 9), "{:#?}", reaper.reaped());
    }

    #[test]
    fn a_step_that_leaves_nothing_ends_without_a_word_from_the_caller() {
        // The first process is the last of its tree: its record says so and
        // the subreaper ends on its own (a caller that waited would hang, so
        // the step runs on a thread and is given 10 s).
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let command: Vec<std::ffi::OsString> = ["sh", "-c", "exit 4"].iter().map(Into::into).collect();
            let mut kept =
                subreaper::spawn(Target::default(), &command, &crate::spawn::Launch::default(), Mode::Auto).unwrap();
            let mut reaper = Reaper::new();
            let mut left_nothing = None;
            loop {
                match reaper.absorb(kept.next_event().unwrap()) {
                    Progress::Running => {}
                    Progress::MainExited => left_nothing = Some(kept.left_nothing()),
                    Progress::Done => break,
                }
            }
            let _ = done.send((left_nothing, reaper.main_status().and_then(|s| s.code()), reaper.tree()));
        });
        let (left_nothing, code, tree) = finished.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        assert_eq!((left_nothing, code), (Some(true), Some(4)));
        assert_eq!((tree.processes_reaped, tree.leftovers_killed), (1, 0));
        // With an orphan it waits for the word, and kills it.
        let command: Vec<std::ffi::OsString> = ["sh", "-c", "sleep 30 & exit 0"].iter().map(Into::into).collect();
        let mut kept =
            subreaper::spawn(Target::default(), &command, &crate::spawn::Launch::default(), Mode::Auto).unwrap();
        let mut reaper = Reaper::new();
        loop {
            match reaper.absorb(kept.next_event().unwrap()) {
                Progress::Running => {}
                Progress::MainExited => {
                    assert!(!kept.left_nothing());
                    kept.end(false);
                }
                Progress::Done => break,
            }
        }
        assert_eq!(reaper.tree().leftovers_killed, 1);
    }

    #[test]
    fn past_the_bound_reaped_processes_are_only_counted() {
        let (mut reaper, _) = run("exit 0", false);
        let kept = reaper.reaped[0].clone();
        reaper.reaped = vec![kept; KEEP_REAPED];
        let (second, _) = run("exit 1", false);
        let one = &second.reaped()[0];
        let reaped = Reaped {
            pid: rustix::process::Pid::from_raw(i32::try_from(one.pid).unwrap()).unwrap(),
            status: std::os::unix::process::ExitStatusExt::from_raw(i32::try_from(one.exit_status).unwrap()),
            rusage: crate::spawn::Rusage::default(),
        };
        reaper.add(&reaped, one.command.clone(), true);
        assert_eq!(reaper.main_status().and_then(|s| s.code()), Some(1));
        assert_eq!((reaper.reaped().len(), reaper.reaped_not_kept()), (KEEP_REAPED, 1));
        assert_eq!(reaper.tree().processes_reaped, 2, "still summed");
    }
}
