//! What the listener's thread ([`super::hub`]) does in a round: read its
//! sockets without blocking, hand every record and fork event to every
//! tracked step, read the arguments that are due, and wait between rounds.

use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::net::RecvFlags;
use stepmon_taskstats_parse::cn_proc::{EventKind, ProcEvent};
use stepmon_taskstats_parse::netlink::Messages;

use super::clock::EventClock;
use super::convert::Task;
use super::tracker::Tracker;
use super::{args, socket};

/// The most datagrams read from one socket before the thread looks at the
/// steps' asks again: when the machine's exits come faster than they are
/// read (a slow CPU, a debug build), the queue never empties, and the steps
/// must still get their answers.
pub(super) const READ_AT_MOST: usize = 256;
/// The wait after a small round: a process's arguments are read within
/// this much of when they are due (50 ms after its fork), and a storm that
/// the rounds do not show yet wakes the thread ten times a second at most.
pub(super) const BATCH: Duration = Duration::from_millis(100);
/// What the kernel could not deliver while a step ran.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Counters {
    /// `ENOBUFS` from recv on the taskstats socket.
    pub(super) overruns: u64,
    /// Same on the connector socket.
    pub(super) connector_overruns: u64,
    /// `/proc/net/netlink` Drops of the taskstats socket.
    pub(super) drops: Option<u64>,
    /// Of the connector socket.
    pub(super) connector_drops: Option<u64>,
}

impl Counters {
    /// What happened between `self` (at a step's start) and `now`.
    pub(super) fn since(self, now: Counters) -> Counters {
        Counters {
            overruns: now.overruns - self.overruns,
            connector_overruns: now.connector_overruns - self.connector_overruns,
            drops: now.drops.zip(self.drops).map(|(n, s)| n.saturating_sub(s)),
            connector_drops: now.connector_drops.zip(self.connector_drops).map(|(n, s)| n.saturating_sub(s)),
        }
    }
}

/// A stopped step's tracker and what was lost meanwhile.
#[derive(Debug)]
pub(super) struct Ended {
    pub(super) counters: Counters,
    pub(super) tracker: Tracker,
}

/// The thread's file descriptors.
pub(super) struct Sockets<'a> {
    pub(super) taskstats: &'a OwnedFd,
    pub(super) connector: Option<&'a OwnedFd>,
    /// Read end of the pipe the steps wake it through.
    pub(super) woken: &'a OwnedFd,
    /// The `TASKSTATS` family id (for the end markers).
    pub(super) family: u16,
}

/// Waits until `fds` can be read or `wait` passed (an interruption is a
/// normal return); whether one can be read.
pub(super) fn wait_for(fds: &mut [PollFd<'_>], wait: Duration) -> bool {
    let timeout = Timespec::try_from(wait).ok();
    rustix::event::poll(fds, timeout.as_ref()).is_ok_and(|ready| ready > 0)
}

/// A step being tracked.
pub(super) struct Watched {
    pub(super) tracker: Tracker,
    /// The thread's counters when the step was opened.
    pub(super) at_open: Counters,
    pub(super) stopping: Option<Stopping>,
}

/// A step told to stop: its records are read to the end marker.
pub(super) struct Stopping {
    pub(super) since: Instant,
    pub(super) marker_read: bool,
    pub(super) reply: mpsc::SyncSender<Ended>,
}

/// Hands `each` a tracker at a time, the last one by value (a record is
/// cloned for every step but one: most often there is one).
pub(super) fn to_every(watched: &mut HashMap<u64, Watched>, task: Task) {
    let n = watched.len();
    for (i, w) in watched.values_mut().enumerate() {
        if i + 1 == n {
            w.tracker.record(task);
            return;
        }
        w.tracker.record(task.clone());
    }
}

/// Reads the connector's queued fork events into every tracker (see
/// [`drain`]) and, when it was read to its end, has them weigh the records
/// read before ([`Tracker::forks_read`]); returns the datagrams read.
pub(super) fn read_connector(
    sockets: &Sockets<'_>,
    buf: &mut [MaybeUninit<u8>],
    totals: &mut Counters,
    until: Option<Instant>,
    clock: &EventClock,
    watched: &mut HashMap<u64, Watched>,
) -> usize {
    let Some(connector) = sockets.connector else {
        // No fork events: what was read before is weighed as it is.
        for w in watched.values_mut() {
            w.tracker.forks_read(Instant::now());
        }
        return 0;
    };
    let read = drain(connector, buf, &mut totals.connector_overruns, until, |bytes, now| {
        for m in Messages::new(bytes).flatten() {
            let Ok(ProcEvent { kind, timestamp_ns, .. }) = ProcEvent::parse(m.payload) else { continue };
            if let EventKind::Fork { parent_tgid, child_pid, child_tgid, .. } = kind
                && child_pid == child_tgid
            {
                let at = clock.happened(timestamp_ns, now);
                for w in watched.values_mut() {
                    w.tracker.fork(parent_tgid, child_tgid, at);
                }
            }
        }
    });
    if read < READ_AT_MOST {
        let now = Instant::now();
        for w in watched.values_mut() {
            w.tracker.forks_read(now);
        }
    }
    read
}

/// Reads the arguments of the running steps' processes that are due for
/// them (a process shorter than [`BATCH`] may have none). `all` false when
/// the queues were not read to their end: then only of steps with few live
/// processes, as a step's own exit storm has many members whose records
/// are still queued, and trying their gone /proc entries cost more than the
/// rest (another process's storm must not cost a step its arguments).
pub(super) fn read_args(watched: &mut HashMap<u64, Watched>, now: Instant, all: bool) {
    for w in watched.values_mut().filter(|w| w.stopping.is_none() && (all || w.tracker.few_members())) {
        for pid in w.tracker.wanting_args(now) {
            if let Some(args) = args::of(pid) {
                w.tracker.set_args(pid, args, now);
            }
        }
    }
}

/// The wait after a storm's round: a [`pause`](super::pause) for the records to pile up,
/// ended by a step's ask. Meanwhile, while a step with few processes runs,
/// the connector alone is read every [`BATCH`] and their arguments with it:
/// a `rustc` of 0.4 s beside another step's exit storm began and ended
/// within one pause, and its fork event, read after the pause, came too
/// late for its arguments (seen in CI: a `cargo build` advised without
/// its largest crate while a test of 20,000 processes ran).
pub(super) fn storm_pause(
    sockets: &Sockets<'_>,
    buf: &mut [MaybeUninit<u8>],
    totals: &mut Counters,
    pause: Duration,
    clock: &EventClock,
    watched: &mut HashMap<u64, Watched>,
) {
    let until = Instant::now() + pause;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let few =
            sockets.connector.is_some() && watched.values().any(|w| w.stopping.is_none() && w.tracker.few_members());
        let wait = if few { left.min(BATCH) } else { left };
        if wait.is_zero() || wait_for(&mut [PollFd::new(sockets.woken, PollFlags::IN)], wait) {
            return;
        }
        if !few {
            continue;
        }
        read_connector(sockets, buf, totals, None, clock, watched);
        read_args(watched, Instant::now(), false);
    }
}

/// Reads what is queued on `fd` without blocking, handing each datagram to
/// `each`, until nothing is queued, [`READ_AT_MOST`] were read, or `until`
/// passed; counts `ENOBUFS`. Returns the datagrams read.
pub(super) fn drain(
    fd: &OwnedFd,
    buf: &mut [MaybeUninit<u8>],
    overruns: &mut u64,
    until: Option<Instant>,
    mut each: impl FnMut(&[u8], Instant),
) -> usize {
    let mut n = 0;
    while n < READ_AT_MOST {
        if until.is_some_and(|until| Instant::now() >= until) {
            return n;
        }
        match rustix::net::recv(fd, &mut buf[..], RecvFlags::DONTWAIT) {
            Ok(((bytes, _), _)) => {
                n += 1;
                each(bytes, Instant::now());
            }
            Err(e) if socket::is_overrun(&e.into()) => *overruns += 1,
            Err(_) => return n,
        }
    }
    n
}

#[cfg(test)]
mod tests {
    #[test]
    fn counters_of_a_step_are_what_changed_while_it_ran() {
        let at_open = super::Counters { overruns: 2, connector_overruns: 0, drops: Some(10), connector_drops: None };
        let now = super::Counters { overruns: 5, connector_overruns: 1, drops: Some(17), connector_drops: Some(3) };
        let since = at_open.since(now);
        assert_eq!(
            (since.overruns, since.connector_overruns, since.drops, since.connector_drops),
            (3, 1, Some(7), None)
        );
    }
}
