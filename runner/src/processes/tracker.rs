//! Which tasks are the step's, from the two event streams: a process is
//! the step's when it descends from the step's main process (fork events of
//! the proc connector), or, when its fork event was missed, when its parent
//! at exit (`ac_ppid`) is one of the step's or this process (the child
//! subreaper, see `crate::tree`). Taskstats exit records carry no cgroup,
//! and a listener cannot filter by one.
//!
//! Pids are reused (`pid_max` is often 32768): a process is keyed by its
//! tgid while it lives and by (tgid, start) once its leader's record came;
//! a fork event of a reused pid starts a new process, and a fork event of
//! another process taking a pid of the step says that the step's process
//! of that pid is over, even before its record is read. The sockets are
//! not ordered with each other: a record is weighed only once the
//! connector was read to its end after it ([`Tracker::forks_read`]), so the
//! fork events sent before its exit are known, and a record whose
//! membership is still not known waits (a few seconds at most) for the
//! fork event that would decide it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use stepmon_model::processes::{Lifetime, ProcessRecord};

use super::convert::Task;

/// How long a record of a task not (yet) known as the step's waits for
/// its fork event before it is taken as another process's.
const UNDECIDED_FOR: Duration = Duration::from_secs(3);
/// A process that started this long before the step's main process was
/// spawned is not the step's, whatever its parent: `ac_btime` is the exit
/// time less the elapsed time in whole seconds (kernel/tsacct.c), so a
/// process of the step may read up to a second early.
const STARTED_BEFORE_THE_STEP: u64 = 2;
/// A process's arguments are read this long after its fork at the
/// earliest: a process shorter than this is not worth a read of `/proc` (an
/// exit storm's).
const ARGS_AFTER: Duration = Duration::from_millis(50);
/// How often arguments equal to the parent's are read again, each
/// [`ARGS_AFTER`] after the last, before they are taken as the child's: a
/// forked child runs its parent's program until it execs, and on a loaded
/// machine a `rustc` had not exec'd 50 ms after its fork (the read got
/// `cargo`'s arguments, the exit record's command then rejected them, and
/// the advice had no largest input). A child that never execs (a subshell,
/// a forked worker) has its parent's arguments after these reads.
const ARGS_TRIES: u8 = 4;
/// A step with more live processes than this is in an exit storm of its
/// own: in a round that could not read the queues to their end its members
/// include many whose records are still queued, and reading their gone
/// `/proc` entries would cost more than the rest of the round.
const FEW_MEMBERS: usize = 64;

/// A member whose arguments are to be read.
#[derive(Debug, Clone, Copy)]
struct Due {
    /// From when (its fork, or the last read, plus [`ARGS_AFTER`]).
    at: Instant,
    pid: u32,
    /// Its parent (tgid) at its fork.
    parent: u32,
    /// Reads that got its parent's arguments.
    tries: u8,
}

/// The step's processes as the events came.
#[derive(Debug, Default)]
pub(super) struct Tracker {
    /// The step's main process, once spawned.
    root: Option<u32>,
    /// When it was spawned, s since the epoch.
    root_started: u64,
    /// The step's own subreaper (the process that spawned the root): the
    /// step's orphans are reparented to it.
    subreaper: u32,
    /// Live processes (tgids) of the step.
    members: HashSet<u32>,
    /// Processes of the step whose pid another process took (its fork
    /// event came) before their own record was read: that record is the
    /// step's, but threads outliving it can no longer be told from the
    /// new process's.
    superseded: HashSet<u32>,
    /// Forks seen before the root was known: (parent tgid, child tgid, when).
    early_forks: Vec<(u32, u32, Instant)>,
    /// When each live member was forked (its fork event's stamp): its
    /// record's sub-second start.
    forked: HashMap<u32, Instant>,
    /// The wall clock read beside an [`Instant`], to place fork instants.
    wall: Option<(Instant, Timestamp)>,
    /// Records read since the connector was last read to its end.
    unweighed: Vec<Task>,
    /// Records not decided yet, with when they came (oldest first).
    undecided: VecDeque<(Instant, Task)>,
    /// How many undecided records name each pid as their tgid or parent:
    /// a new member is only worth a retry when it is among them (the
    /// machine's other processes fill `undecided` under load).
    undecided_ids: HashMap<u32, u32>,
    /// Threads of a live process whose leader's record has not come.
    open: HashMap<u32, ProcessRecord>,
    /// Processes whose leader's record came: index in `done` by tgid (for
    /// threads that outlive their leader).
    closed: HashMap<u32, usize>,
    /// Finished processes.
    done: Vec<ProcessRecord>,
    /// Members whose arguments are to be read, from when (oldest first).
    fresh: VecDeque<Due>,
    /// Of them, those the last [`Tracker::wanting_args`] asked for and not
    /// set yet.
    asked: HashMap<u32, Due>,
    /// Arguments read of live members, by tgid.
    args: HashMap<u32, Vec<String>>,
    /// Records of the step's tasks that arrived.
    pub(super) records: u64,
}

impl Tracker {
    pub(super) fn new(subreaper: u32) -> Tracker {
        Tracker { subreaper, wall: Some((Instant::now(), Timestamp::now())), ..Tracker::default() }
    }

    /// The wall-clock time of `at`.
    fn wall_time(&self, at: Instant) -> Option<Timestamp> {
        let (anchor, unix) = self.wall?;
        let offset = if at >= anchor {
            SignedDuration::try_from(at - anchor).ok()?
        } else {
            -SignedDuration::try_from(anchor - at).ok()?
        };
        unix.checked_add(offset).ok()
    }

    /// Sets the sub-second start and end of `record` from its fork event:
    /// the end is the start plus `ac_etime`, both counted from the task's
    /// `start_time` (kernel/tsacct.c), so the connector's read delay does
    /// not enter.
    fn place(&self, record: &mut ProcessRecord, forked: Option<Instant>) {
        let Some(start) = forked.and_then(|at| self.wall_time(at)) else { return };
        let Ok(elapsed) = SignedDuration::try_from_secs_f64(record.elapsed_seconds.max(0.0)) else { return };
        record.start = Some(start);
        record.end = start.checked_add(elapsed).ok();
        record.lifetime = record.end.map(|_| Lifetime::ForkEvent);
    }

    /// The step's main process was spawned `started` (s since the epoch).
    pub(super) fn set_root(&mut self, root: u32, subreaper: u32, started: u64, now: Instant) {
        self.root = Some(root);
        self.subreaper = subreaper;
        self.root_started = started;
        self.members.insert(root);
        self.fresh.push_back(Due { at: now + ARGS_AFTER, pid: root, parent: subreaper, tries: 0 });
        for (parent, child, at) in std::mem::take(&mut self.early_forks) {
            self.fork(parent, child, at);
        }
        self.retry(now, false);
    }

    /// A new process `child` of `parent` (threads are not forks here).
    pub(super) fn fork(&mut self, parent: u32, child: u32, now: Instant) {
        if self.root.is_none() {
            self.early_forks.push((parent, child, now));
            return;
        }
        if Some(child) == self.root && parent == self.subreaper {
            // The spawn of the root itself, read before or after it was set.
            self.forked.insert(child, now);
            return;
        }
        // A reused pid: whatever had it before is over.
        self.closed.remove(&child);
        self.args.remove(&child);
        self.forked.remove(&child);
        if self.members.contains(&parent) {
            self.members.insert(child);
            self.forked.insert(child, now);
            self.fresh.push_back(Due { at: now + ARGS_AFTER, pid: child, parent, tries: 0 });
            self.superseded.remove(&child);
            if self.undecided_ids.contains_key(&child) {
                self.retry(now, false);
            }
        } else if self.members.remove(&child) {
            // Another process took the pid of one of the step's whose
            // record is not read yet: the new one and its children are not
            // the step's (seen: 20,005 processes counted for 20,003).
            self.superseded.insert(child);
        }
    }

    /// Members due for their arguments by `now` and still alive, whose
    /// arguments are worth reading now.
    pub(super) fn wanting_args(&mut self, now: Instant) -> Vec<u32> {
        // Those asked for before and not set are gone.
        self.asked.clear();
        let mut wanting = Vec::new();
        while let Some(&due) = self.fresh.front() {
            if now < due.at {
                break;
            }
            self.fresh.pop_front();
            if self.members.contains(&due.pid) && !self.args.contains_key(&due.pid) {
                wanting.push(due.pid);
                self.asked.insert(due.pid, due);
            }
        }
        wanting
    }

    /// When the oldest member still waiting is due for its arguments (those
    /// that exited meanwhile are forgotten: in a storm they are most).
    pub(super) fn args_due(&mut self) -> Option<Instant> {
        while let Some(due) = self.fresh.front() {
            if self.members.contains(&due.pid) && !self.args.contains_key(&due.pid) {
                break;
            }
            self.fresh.pop_front();
        }
        self.fresh.front().map(|due| due.at)
    }

    /// Whether the step has few enough live processes that reading their
    /// arguments is cheap even while the queues are not read to their end
    /// (an exit storm of other processes must not keep a `rustc`'s
    /// arguments from being read, see [`FEW_MEMBERS`]).
    pub(super) fn few_members(&self) -> bool {
        self.members.len() <= FEW_MEMBERS
    }

    /// The arguments read of a live member at `now`; when they are its
    /// parent's, it may not have exec'd yet: read again later
    /// ([`ARGS_TRIES`]).
    pub(super) fn set_args(&mut self, tgid: u32, args: Vec<String>, now: Instant) {
        if !self.members.contains(&tgid) {
            return;
        }
        if let Some(due) = self.asked.remove(&tgid)
            && due.tries < ARGS_TRIES
            && self.args.get(&due.parent) == Some(&args)
        {
            self.fresh.push_back(Due { at: now + ARGS_AFTER, tries: due.tries + 1, ..due });
            return;
        }
        self.args.insert(tgid, args);
    }

    /// Processes of the step still alive, as far as the records tell.
    pub(super) fn live(&self) -> Vec<u32> {
        self.members.iter().copied().collect()
    }

    /// The processes that ended from place `from` of the list of ended ones
    /// on (in the order their records were weighed), and the next place.
    pub(super) fn ended_since(&self, from: usize) -> (&[ProcessRecord], usize) {
        (self.done.get(from..).unwrap_or_default(), self.done.len())
    }

    /// An exit record, weighed at the next [`Tracker::forks_read`].
    pub(super) fn record(&mut self, task: Task) {
        self.unweighed.push(task);
    }

    /// The connector was read to its end: every fork event sent before the
    /// exits read so far is known, and their records are weighed.
    pub(super) fn forks_read(&mut self, now: Instant) {
        let mut unweighed = std::mem::take(&mut self.unweighed);
        for task in unweighed.drain(..) {
            self.weigh(task, now);
        }
        // Keep the allocation for the next batch.
        self.unweighed = unweighed;
    }

    /// Decides a record, or lets it wait for the fork event that would.
    fn weigh(&mut self, task: Task, now: Instant) {
        let decides = task.tgid;
        match self.take(task) {
            // It may be the parent of records that came before it.
            None => {
                if self.undecided_ids.contains_key(&decides) {
                    self.retry(now, false);
                }
            }
            Some(task) => {
                *self.undecided_ids.entry(task.tgid).or_default() += 1;
                *self.undecided_ids.entry(task.ppid).or_default() += 1;
                self.undecided.push_back((now, task));
            }
        }
        while self.undecided.front().is_some_and(|(at, _)| now.duration_since(*at) > UNDECIDED_FOR) {
            if let Some((_, old)) = self.undecided.pop_front() {
                self.forget(old.tgid, old.ppid);
            }
        }
    }

    /// Removes an undecided record from the id counts.
    fn forget(&mut self, tgid: u32, ppid: u32) {
        for id in [tgid, ppid] {
            if let Some(n) = self.undecided_ids.get_mut(&id) {
                *n -= 1;
                if *n == 0 {
                    self.undecided_ids.remove(&id);
                }
            }
        }
    }

    /// Accounts `task` if it is the step's, else hands it back.
    fn take(&mut self, task: Task) -> Option<Task> {
        if self.root.is_none()
            || task.record.start_unix_seconds.saturating_add(STARTED_BEFORE_THE_STEP) < self.root_started
        {
            return Some(task);
        }
        let leader = task.pid == task.tgid;
        // A process of the step has, when it exits, a parent of the step
        // or this process (orphans are reparented to the subreaper). The
        // tgid alone is not enough: a record of another process may wait
        // undecided while the step forks a new process with its reused pid
        // (seen: 20,031 `true`s counted for 20,000 beside a fork loop).
        let parent_is_the_steps = self.members.contains(&task.ppid)
            || self.closed.contains_key(&task.ppid)
            || (task.ppid == self.subreaper && task.ppid != 0);
        let live = self.members.contains(&task.tgid);
        let superseded = self.superseded.contains(&task.tgid);
        let member = (live && Some(task.tgid) == self.root) || (parent_is_the_steps && (leader || live || superseded));
        if member {
            self.records += 1;
            if leader {
                let mut process = task.record;
                if let Some(args) = self.args.remove(&task.tgid).filter(|a| ran(a, &process.command)) {
                    process.args = args;
                }
                if let Some(threads) = self.open.remove(&task.tgid) {
                    process.add_thread(&threads);
                }
                let forked = self.forked.remove(&task.tgid);
                self.place(&mut process, forked);
                self.members.remove(&task.tgid);
                if !self.superseded.remove(&task.tgid) {
                    self.closed.insert(task.tgid, self.done.len());
                }
                self.done.push(process);
            } else {
                match self.open.get_mut(&task.tgid) {
                    Some(p) => p.add_thread(&task.record),
                    None => {
                        self.open.insert(task.tgid, task.record);
                    }
                }
            }
            return None;
        }
        // A thread that outlived its leader.
        if !leader && let Some(&at) = self.closed.get(&task.tgid) {
            self.records += 1;
            if let Some(p) = self.done.get_mut(at) {
                p.add_thread(&task.record);
            }
            return None;
        }
        Some(task)
    }

    /// Retries the undecided records; with `all` (or once they are too old)
    /// drops those still not the step's.
    pub(super) fn retry(&mut self, now: Instant, all: bool) {
        let mut keep = VecDeque::with_capacity(self.undecided.len());
        while let Some((at, task)) = self.undecided.pop_front() {
            let old = all || now.duration_since(at) > UNDECIDED_FOR;
            let (tgid, ppid) = (task.tgid, task.ppid);
            match self.take(task) {
                Some(task) if !old => keep.push_back((at, task)),
                _ => self.forget(tgid, ppid),
            }
        }
        self.undecided = keep;
    }

    /// The processes: finished ones, then threads whose leader's record
    /// never came (lost), then `running` (queried before the kill) for
    /// processes without an exit record.
    pub(super) fn finish(mut self, now: Instant, running: Vec<Task>) -> (Vec<ProcessRecord>, u64) {
        self.forks_read(now);
        self.retry(now, true);
        let mut out = std::mem::take(&mut self.done);
        out.extend(std::mem::take(&mut self.open).into_values());
        for mut task in running {
            let exited =
                out.iter().any(|p| p.pid == task.tgid && p.start_unix_seconds == task.record.start_unix_seconds);
            if !exited {
                self.place(&mut task.record, self.forked.get(&task.tgid).copied());
                out.push(task.record);
            }
        }
        (out, self.records)
    }
}

/// Whether `args` are those of the program that exited as `command`
/// (`ac_comm`, the executable's file name cut to 15 bytes): arguments read
/// before the exec are its parent's. argv\[1\] for a script, whose
/// argv\[0\] is its interpreter.
fn ran(args: &[String], command: &str) -> bool {
    !command.is_empty()
        && args.iter().take(2).any(|a| a.rsplit('/').next().is_some_and(|name| name.starts_with(command)))
}

#[cfg(test)]
#[path = "tracker_tests.rs"]
mod tests;
