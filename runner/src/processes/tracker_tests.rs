//! The tracker's unit tests (runner/src/processes/tracker.rs).

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
    t.set_args(101, args(&["/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus", "-quiet", "foo.cpp"]), later);
    // Read before its exec: the shell's arguments.
    t.set_args(102, args(&["sh", "-c", "ld -o x"]), later);
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
fn args_equal_to_the_parents_are_read_again_in_case_the_child_had_not_exec_d() {
    let now = Instant::now();
    let mut t = Tracker::new(1);
    t.set_root(100, 1, 0, now);
    t.fork(100, 101, now);
    t.fork(100, 102, now);
    let first = now + ARGS_AFTER;
    assert_eq!(t.wanting_args(first), [100, 101, 102]);
    let cargo = vec!["cargo".to_owned(), "build".to_owned()];
    t.set_args(100, cargo.clone(), first);
    // Read before its exec: the parent's arguments.
    t.set_args(101, cargo.clone(), first);
    assert_eq!(t.args_due(), Some(first + ARGS_AFTER), "102 was gone: only 101 is read again");
    assert!(t.wanting_args(first + ARGS_AFTER / 2).is_empty());
    assert_eq!(t.wanting_args(first + ARGS_AFTER), [101]);
    t.set_args(101, vec!["rustc".to_owned()], first + ARGS_AFTER);
    let mut rustc = task(101, 101, 100, 1.0);
    rustc.record.command = "rustc".to_owned();
    exit(&mut t, rustc, first + ARGS_AFTER);
    // A child that never execs keeps its parent's arguments after the tries.
    t.fork(100, 103, first);
    let mut at = first + ARGS_AFTER;
    for _ in 0..ARGS_TRIES {
        assert_eq!(t.wanting_args(at), [103]);
        t.set_args(103, cargo.clone(), at);
        at += ARGS_AFTER;
    }
    assert_eq!(t.wanting_args(at), [103]);
    t.set_args(103, cargo.clone(), at);
    assert_eq!(t.args_due(), None, "taken as its own");
    let mut worker = task(103, 103, 100, 1.0);
    worker.record.command = "cargo".to_owned();
    exit(&mut t, worker, at);
    let (done, _) = t.finish(at, Vec::new());
    let of = |pid: u32| done.iter().find(|p| p.pid == pid).map(|p| p.args.clone()).unwrap();
    assert_eq!(of(101), ["rustc"]);
    assert_eq!(of(103), cargo);
}

#[test]
fn a_member_gone_before_it_was_due_is_not_waited_for() {
    let now = Instant::now();
    let mut t = Tracker::new(1);
    t.set_root(100, 1, 0, now);
    assert_eq!(t.wanting_args(now + ARGS_AFTER), [100]);
    t.fork(100, 103, now + ARGS_AFTER);
    exit(&mut t, task(103, 103, 100, 1.0), now + ARGS_AFTER);
    assert_eq!(t.args_due(), None, "103 exited: no wake-up for it");
    assert!(t.few_members());
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

#[test]
fn the_ended_ones_are_handed_out_once_each_from_a_place_on() {
    let now = Instant::now();
    let mut t = Tracker::new(1);
    t.set_root(100, 1, 0, now);
    t.fork(100, 101, now);
    t.fork(100, 102, now);
    let (ended, next) = t.ended_since(0);
    assert_eq!((ended.len(), next), (0, 0));
    assert_eq!(t.live().len(), 3);
    exit(&mut t, task(101, 101, 100, 1.5), now);
    let (ended, next) = t.ended_since(0);
    assert_eq!((ended.iter().map(|p| (p.pid, p.cpu_seconds)).collect::<Vec<_>>(), next), (vec![(101, 1.5)], 1));
    let mut live = t.live();
    live.sort_unstable();
    assert_eq!(live, [100, 102], "ended, not alive");
    exit(&mut t, task(556, 556, 555, 9.0), now); // someone else's
    exit(&mut t, task(102, 102, 100, 0.5), now);
    let (ended, next) = t.ended_since(1);
    assert_eq!((ended.iter().map(|p| p.pid).collect::<Vec<_>>(), next), (vec![102], 2));
    assert!(t.ended_since(2).0.is_empty() && t.ended_since(7).0.is_empty(), "past the end: none");
}
