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
/// earliest: a forked child runs its parent's program until it execs.
const ARGS_AFTER: Duration = Duration::from_millis(50);
/// And read once more this long after the first read, if the process is
/// still alive: on a loaded machine a child may not have exec'd 50 ms after
/// its fork, and the first read got its parent's arguments (`cargo`'s for a
/// `rustc`: seen in CI, where the advice then had no largest input).
const ARGS_AGAIN_AFTER: Duration = Duration::from_millis(250);

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
    /// Members whose arguments were not asked for yet, with when they were
    /// forked (oldest first).
    fresh: VecDeque<(Instant, u32)>,
    /// Members whose arguments were read once, with when to read them again
    /// (oldest first).
    again: VecDeque<(Instant, u32)>,
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
        self.fresh.push_back((now, root));
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
            self.fresh.push_back((now, child));
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

    /// Members forked [`ARGS_AFTER`] ago or more and still alive, whose
    /// arguments are worth reading now (once each).
    pub(super) fn wanting_args(&mut self, now: Instant) -> Vec<u32> {
        let mut wanting = Vec::new();
        while let Some(&(at, pid)) = self.fresh.front() {
            if now.duration_since(at) < ARGS_AFTER {
                break;
            }
            self.fresh.pop_front();
            if self.members.contains(&pid) && !self.args.contains_key(&pid) {
                wanting.push(pid);
                self.again.push_back((now + ARGS_AGAIN_AFTER, pid));
            }
        }
        while let Some(&(due, pid)) = self.again.front() {
            if now < due {
                break;
            }
            self.again.pop_front();
            if self.members.contains(&pid) && !wanting.contains(&pid) {
                wanting.push(pid);
            }
        }
        wanting
    }

    /// When the oldest member still waiting is due for its arguments.
    pub(super) fn args_due(&self) -> Option<Instant> {
        let first = self.fresh.front().map(|&(at, _)| at + ARGS_AFTER);
        let again = self.again.front().map(|&(due, _)| due);
        first.into_iter().chain(again).min()
    }

    /// The arguments read of a live member.
    pub(super) fn set_args(&mut self, tgid: u32, args: Vec<String>) {
        if self.members.contains(&tgid) {
            self.args.insert(tgid, args);
        }
    }

    /// Processes of the step still alive, as far as the records tell.
    pub(super) fn live(&self) -> Vec<u32> {
        self.members.iter().copied().collect()
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
mod tests {
    use super::*;

    fn task(pid: u32, tgid: u32, ppid: u32, cpu: f64) -> Task {
        let mut record = ProcessRecord::default();
        record.pid = tgid;
        record.ppid = ppid;
        record.threads = 1;
        record.cpu_seconds = cpu;
        Task { pid, tgid, ppid, record }
    }

    /// A record read with the connector read to its end after it.
    fn exit(t: &mut Tracker, task: Task, now: Instant) {
        t.record(task);
        t.forks_read(now);
    }

    #[test]
    fn the_roots_own_fork_event_read_after_it_was_set_keeps_it() {
        let now = Instant::now();
        let mut t = Tracker::new(1);
        t.set_root(100, 1, 0, now);
        t.fork(1, 100, now);
        t.fork(100, 101, now);
        exit(&mut t, task(101, 101, 100, 1.0), now);
        exit(&mut t, task(100, 100, 1, 1.0), now);
        assert_eq!(t.finish(now, Vec::new()).1, 2);
    }

    #[test]
    fn a_process_starts_at_its_fork_event_and_ends_its_elapsed_time_later() {
        let now = Instant::now();
        let mut t = Tracker::new(1);
        // The root's spawn read before the root was set: its stamp is kept.
        t.fork(1, 100, now);
        t.set_root(100, 1, 0, now + Duration::from_millis(400));
        t.fork(100, 101, now + Duration::from_millis(120));
        let mut child = task(101, 101, 100, 1.0);
        child.record.elapsed_seconds = 0.250;
        exit(&mut t, child, now + Duration::from_secs(2));
        let mut root = task(100, 100, 1, 1.0);
        root.record.elapsed_seconds = 0.5;
        exit(&mut t, root, now + Duration::from_secs(2));
        // No fork event: only the whole-second start.
        t.fork(100, 102, now);
        t.forked.remove(&102);
        exit(&mut t, task(102, 102, 100, 0.0), now);
        let start = t.wall_time(now).unwrap();
        let (done, _) = t.finish(now, Vec::new());
        let of = |pid: u32| done.iter().find(|p| p.pid == pid).unwrap();
        let ms = |p: &ProcessRecord| {
            let at = |t: Option<Timestamp>| t.unwrap().duration_since(start).as_millis();
            (at(p.start), at(p.end), p.lifetime)
        };
        assert_eq!(ms(of(100)), (0, 500, Some(Lifetime::ForkEvent)));
        assert_eq!(ms(of(101)), (120, 370, Some(Lifetime::ForkEvent)));
        assert_eq!((of(102).start, of(102).lifetime), (None, None));
    }

    #[test]
    fn args_read_while_it_ran_are_kept_when_they_are_of_the_program_that_exited() {
        let now = Instant::now();
        let mut t = Tracker::new(1);
        t.set_root(100, 1, 0, now);
        t.fork(100, 101, now);
        t.fork(100, 102, now);
        t.fork(100, 103, now);
        exit(&mut t, task(103, 103, 100, 1.0), now);
        assert!(t.wanting_args(now).is_empty(), "not right after the fork");
        let later = now + ARGS_AFTER;
        assert_eq!(t.wanting_args(later), [100, 101, 102], "the exited one is not asked for");
        assert!(t.wanting_args(later).is_empty(), "asked once");
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        t.set_args(101, args(&["/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus", "-quiet", "foo.cpp"]));
        // Read before its exec: the shell's arguments.
        t.set_args(102, args(&["sh", "-c", "ld -o x"]));
        let mut cc = task(101, 101, 100, 1.0);
        cc.record.command = "cc1plus".to_owned();
        let mut ld = task(102, 102, 100, 1.0);
        ld.record.command = "ld".to_owned();
        exit(&mut t, cc, now);
        exit(&mut t, ld, now);
        let (done, _) = t.finish(now, Vec::new());
        let of = |pid: u32| done.iter().find(|p| p.pid == pid).map(|p| p.args.clone()).unwrap();
        assert_eq!(of(101).len(), 3);
        assert!(of(102).is_empty(), "not the args of the program that exited");
        assert!(ran(&args(&["/bin/bash", "./build-all.sh"]), "build-all.sh"), "a script");
    }

    #[test]
    fn args_are_read_again_once_in_case_the_first_read_came_before_the_exec() {
        let now = Instant::now();
        let mut t = Tracker::new(1);
        t.set_root(100, 1, 0, now);
        t.fork(100, 101, now);
        let first = now + ARGS_AFTER;
        assert_eq!(t.wanting_args(first), [100, 101]);
        // The parent's arguments, read before the child's exec.
        t.set_args(101, vec!["cargo".to_owned()]);
        assert_eq!(t.args_due(), Some(first + ARGS_AGAIN_AFTER));
        assert!(t.wanting_args(first + ARGS_AGAIN_AFTER / 2).is_empty());
        assert_eq!(t.wanting_args(first + ARGS_AGAIN_AFTER), [100, 101], "read once more");
        assert!(t.wanting_args(first + ARGS_AGAIN_AFTER * 4).is_empty(), "and no more");
        assert_eq!(t.args_due(), None);
    }

    #[test]
    fn a_step_pid_taken_by_another_process_before_its_record_came_is_not_the_steps_any_more() {
        let now = Instant::now();
        let mut t = Tracker::new(1);
        t.set_root(100, 1, 0, now);
        t.fork(100, 300, now);
        // 300 exits, its record is still queued; another process gets pid
        // 300 and forks 301, which exits.
        t.fork(700, 300, now);
        t.fork(300, 301, now);
        exit(&mut t, task(301, 301, 300, 5.0), now);
        exit(&mut t, task(300, 300, 100, 1.0), now);
        let (done, records) = t.finish(now, Vec::new());
        assert_eq!((done.len(), records), (1, 1), "{done:?}");
        assert_eq!(done[0].cpu_seconds, 1.0);
    }

    #[test]
    fn a_record_is_weighed_only_after_the_fork_events_sent_before_it() {
        let now = Instant::now();
        let mut t = Tracker::new(1);
        t.set_root(100, 1, 0, now);
        t.fork(100, 300, now);
        // 301 (child of another process that took pid 300) is read before
        // the fork events that say so.
        t.record(task(301, 301, 300, 5.0));
        t.fork(700, 300, now);
        t.fork(300, 301, now);
        t.forks_read(now);
        exit(&mut t, task(300, 300, 100, 1.0), now);
        let (done, records) = t.finish(now, Vec::new());
        assert_eq!((done.len(), records), (1, 1), "{done:?}");
    }

    #[test]
    fn a_process_started_well_before_the_step_is_not_the_steps() {
        let now = Instant::now();
        let mut t = Tracker::new(1);
        t.set_root(100, 1, 1_000, now);
        t.fork(100, 101, now);
        let mut old = task(101, 101, 100, 1.0);
        old.record.start_unix_seconds = 1_000 - STARTED_BEFORE_THE_STEP - 1;
        let mut new = task(102, 102, 100, 1.0);
        new.record.start_unix_seconds = 999;
        exit(&mut t, old, now);
        exit(&mut t, new, now);
        let (done, _) = t.finish(now, Vec::new());
        assert_eq!(done.iter().map(|p| p.pid).collect::<Vec<_>>(), [102]);
    }

    #[test]
    fn descendants_are_kept_and_others_are_not() {
        let now = Instant::now();
        let mut t = Tracker::new(1);
        t.fork(1, 100, now); // the spawn, before the root is known
        t.set_root(100, 1, 0, now);
        t.fork(100, 101, now);
        t.fork(101, 102, now);
        t.fork(555, 556, now); // someone else's
        exit(&mut t, task(102, 102, 101, 1.0), now);
        exit(&mut t, task(556, 556, 555, 9.0), now);
        exit(&mut t, task(101, 101, 100, 1.0), now);
        exit(&mut t, task(100, 100, 1, 1.0), now);
        let (done, records) = t.finish(now, Vec::new());
        assert_eq!(records, 3);
        assert_eq!(done.iter().map(|p| p.pid).collect::<Vec<_>>(), [102, 101, 100]);
    }

    #[test]
    fn a_record_before_its_fork_event_waits_for_it() {
        let now = Instant::now();
        let mut t = Tracker::new(1);
        t.set_root(100, 1, 0, now);
        // 201's parent 200 is not known yet either: both wait.
        exit(&mut t, task(201, 201, 200, 1.0), now);
        t.fork(100, 200, now);
        assert_eq!(t.records, 1, "decided by its parent");
        let (done, _) = t.finish(now, Vec::new());
        assert_eq!(done.len(), 1);
    }

    #[test]
    fn a_reused_pid_outside_the_step_is_not_counted() {
        let now = Instant::now();
        let mut t = Tracker::new(1);
        t.set_root(100, 1, 0, now);
        t.fork(100, 300, now);
        exit(&mut t, task(300, 300, 100, 1.0), now);
        // pid 300 reused by an unrelated process.
        t.fork(700, 300, now);
        exit(&mut t, task(300, 300, 700, 5.0), now);
        let (done, records) = t.finish(now + UNDECIDED_FOR * 2, Vec::new());
        assert_eq!((done.len(), records), (1, 1));
        assert_eq!(done[0].cpu_seconds, 1.0);
    }

    #[test]
    fn threads_fold_into_their_process_before_and_after_the_leader() {
        let now = Instant::now();
        let mut t = Tracker::new(1);
        t.set_root(100, 1, 0, now);
        exit(&mut t, task(101, 100, 1, 2.0), now); // a thread
        exit(&mut t, task(100, 100, 1, 1.0), now); // the leader
        exit(&mut t, task(102, 100, 1, 4.0), now); // a thread outliving it
        let (done, records) = t.finish(now, Vec::new());
        assert_eq!((done.len(), records), (1, 3));
        assert_eq!((done[0].threads, done[0].cpu_seconds), (3, 7.0));
    }

    #[test]
    fn a_waiting_record_of_another_process_is_not_claimed_by_a_step_process_reusing_its_pid() {
        let now = Instant::now();
        let mut t = Tracker::new(1);
        t.set_root(100, 1, 0, now);
        // Another process (parent 700) exited with pid 300; its record waits.
        exit(&mut t, task(300, 300, 700, 5.0), now);
        // The step forks a process that gets pid 300 again, which exits.
        t.fork(100, 300, now);
        exit(&mut t, task(300, 300, 100, 1.0), now);
        let (done, records) = t.finish(now, Vec::new());
        assert_eq!((done.len(), records), (1, 1), "{done:?}");
        assert_eq!(done[0].cpu_seconds, 1.0);
    }

    #[test]
    fn without_fork_events_records_are_decided_by_their_parents() {
        let now = Instant::now();
        let mut t = Tracker::new(1);
        t.set_root(100, 1, 0, now);
        // 102's parent 101 was the root's child; 102's record comes first.
        exit(&mut t, task(102, 102, 101, 1.0), now);
        exit(&mut t, task(101, 101, 100, 1.0), now);
        assert_eq!(t.records, 2);
    }

    #[test]
    fn orphans_reparented_to_the_subreaper_are_the_steps() {
        let now = Instant::now();
        // 42: the step's own subreaper, named with its root; 7: the caller,
        // whose other children are not the step's.
        let mut t = Tracker::new(7);
        t.set_root(100, 42, 0, now);
        exit(&mut t, task(900, 900, 42, 1.0), now);
        assert_eq!(t.records, 1);
        exit(&mut t, task(901, 901, 7, 1.0), now);
        assert_eq!(t.records, 1, "a child of the caller's is not the step's");
    }

    #[test]
    fn a_running_process_counts_once() {
        let now = Instant::now();
        let mut t = Tracker::new(1);
        t.set_root(100, 1, 0, now);
        t.fork(100, 101, now);
        let mut running = task(101, 101, 100, 0.5);
        running.record.running_at_end = true;
        exit(&mut t, task(100, 100, 1, 1.0), now);
        let (done, _) = t.finish(now, vec![running.clone(), task(100, 100, 1, 1.0)]);
        assert_eq!(done.len(), 2, "the exited root once, the running child from its query");
        assert!(done.iter().any(|p| p.pid == 101 && p.running_at_end));
    }
}
