//! The step's processes one by one, from the kernel's taskstats exit
//! records (<https://docs.kernel.org/accounting/taskstats.html>): a cpumask
//! listener on generic netlink, registered for every CPU before the step
//! starts and read on a thread of its own, and the proc connector's fork
//! events to know which tasks descend from the step ([`tracker`]).
//!
//! The kernel accepts a listener only from a process with `CAP_NET_ADMIN`
//! in the initial user and pid namespaces (kernel/taskstats.c,
//! `add_del_listener`); elsewhere, or without `CONFIG_TASKSTATS`, the
//! step's processes are read from procfs at each sample instead
//! ([`sampled`]) and the document says why and what that misses. Records dropped when
//! the socket's buffer was full are counted from `/proc/net/netlink`
//! ([`drops`]) and from `ENOBUFS`, never hidden.

mod args;
mod convert;
mod delivery;
pub(crate) mod doctor;
mod drops;
mod redact;
mod sampled;
mod socket;
mod tracker;

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::net::RecvFlags;
use stepmon_model::processes::{Keep, Processes};
use stepmon_taskstats_parse::cn_proc::{EventKind, ProcEvent};
use stepmon_taskstats_parse::netlink::Messages;
use stepmon_taskstats_parse::taskstats::TaskstatsReply;

use convert::Task;
use tracker::Tracker;

/// The taskstats socket's receive buffer: an exit record takes about 1.3
/// KiB of socket memory (596 bytes in a 1 KiB-rounded skb plus overhead);
/// 32 MiB holds some 25,000 records, the backlog of a storm while the
/// listener thread waits for a CPU on a loaded 2-core machine.
const TASKSTATS_BUFFER: usize = 32 << 20;
/// The connector's: a fork event per process (and exec and exit events on
/// kernels before 6.6, which cannot filter), 76 bytes each.
const CONNECTOR_BUFFER: usize = 16 << 20;
/// How often the thread looks at the stop flag while no event comes.
const POLL: Duration = Duration::from_millis(100);
/// Records the sockets may queue while the thread pauses: half of what the
/// taskstats buffer holds (above), the connector's holding as many fork events.
const PAUSE_RECORDS: f64 = 12_500.0;
/// The fastest exit storm a CPU makes, processes a second: a C loop of
/// `fork`, `_exit` and `waitpid` makes 3,000-3,300 a second per CPU on the
/// 2-core VM this was measured on; bare metal forks faster, so three times that.
const STORM_PER_CPU: f64 = 10_000.0;

/// After a round that read all that was queued, the thread lets events pile
/// up this long before it reads again (an ask of the main thread ends the
/// wait): a wake-up per batch instead of one per event, sized so that the
/// fastest storm of every CPU fills half the buffers meanwhile (625 ms on 2
/// CPUs). Measured in an exit storm of 20,000 processes: stepmon's CPU
/// 0.076-0.097 s with a 300 ms pause, 0.100-0.134 s with 50 ms.
fn pause() -> Duration {
    let cpus = std::fs::read_dir("/sys/devices/system/cpu").map_or(1, |dir| {
        dir.flatten()
            .filter(|e| {
                e.file_name().to_str().and_then(|n| n.strip_prefix("cpu")).is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .count()
    });
    #[allow(clippy::cast_precision_loss)] // CPU counts far below 2^52
    let seconds = PAUSE_RECORDS / (STORM_PER_CPU * cpus.max(1) as f64);
    Duration::from_secs_f64(seconds).clamp(Duration::from_millis(10), Duration::from_secs(1))
}
/// The most datagrams read from one socket before the thread looks at the
/// main thread's asks again: when the machine's exits come faster than
/// they are read (a slow CPU, a debug build), the queue never empties, and
/// the main thread must still get its answers.
const READ_AT_MOST: usize = 256;
/// How long the main thread waits for the list of the step's live processes.
const LIVE_WAIT: Duration = Duration::from_secs(5);

/// Per-process accounting of one step, or why there is none.
#[derive(Debug)]
pub(crate) enum Session {
    /// Listening.
    Listening(Listener),
    /// Taskstats is unavailable here (the reason is in the document):
    /// procfs read at each sample.
    Sampled(sampled::Sampling),
}

/// The running listener.
#[derive(Debug)]
pub(crate) struct Listener {
    asks: mpsc::Sender<Ask>,
    /// Write end of the pipe that wakes the thread for an ask.
    wake: OwnedFd,
    thread: JoinHandle<(Counters, Tracker)>,
    family: u16,
    delay_accounting: bool,
    connector_reason: Option<String>,
    running: Vec<Task>,
    keep: Keep,
}

/// What the main thread asks of the listener thread, which alone owns the
/// [`Tracker`]: a lock shared with a thread that reads without pause would
/// starve the main thread (seen in the VM tier: the step's root was set
/// only after the step had exited, so SIGTERM reached nobody).
#[derive(Debug)]
enum Ask {
    /// The step's main process was spawned (pid, its subreaper's pid, s since the epoch).
    Root(u32, u32, u64),
    /// The step's processes still alive.
    Live(mpsc::Sender<Vec<u32>>),
    /// The step's processes are reaped: read what is queued and end.
    Stop,
}

/// What the thread counted.
#[derive(Debug, Default)]
struct Counters {
    /// `ENOBUFS` from recv on the taskstats socket.
    overruns: u64,
    /// Same on the connector socket.
    connector_overruns: u64,
    /// `/proc/net/netlink` Drops of the taskstats socket.
    drops: Option<u64>,
    /// Of the connector socket.
    connector_drops: Option<u64>,
}

/// Whether delay accounting is on (`kernel.task_delayacct`, Linux 5.14+;
/// before it, on unless booted with `nodelayacct`, which the file's absence
/// cannot tell: then off, to claim nothing).
fn delay_accounting() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/task_delayacct").is_ok_and(|v| v.trim() == "1")
}

/// Why the listener was refused, in words.
fn refused(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => "taskstats listener refused: needs root (CAP_NET_ADMIN)".to_owned(),
        Some(libc::EINVAL) => {
            "taskstats listener refused: stepmon is not in the initial user and pid namespaces (a container)".to_owned()
        }
        _ => format!("taskstats listener refused: {e}"),
    }
}

/// A generic netlink socket registered as the exit listener of every
/// possible CPU: the socket, the family id and the CPU list; or why not.
fn registered() -> Result<(OwnedFd, u16, String), String> {
    let taskstats = socket::generic().map_err(|e| format!("no generic netlink socket: {e}"))?;
    let family = socket::resolve_family(&taskstats).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOENT) => "the kernel has no taskstats (CONFIG_TASKSTATS off)".to_owned(),
        _ => format!("cannot resolve the TASKSTATS netlink family: {e}"),
    })?;
    socket::enlarge_buffer(&taskstats, TASKSTATS_BUFFER);
    let cpus = std::fs::read_to_string("/sys/devices/system/cpu/possible")
        .map_err(|e| format!("cannot read the possible CPUs: {e}"))?;
    let cpus = cpus.trim().to_owned();
    socket::register_cpumask(&taskstats, family, &cpus).map_err(|e| refused(&e))?;
    if let Some(why) = delivery::silent(&taskstats, Duration::from_millis(500)) {
        let _ = socket::deregister_cpumask(&taskstats, family, &cpus);
        return Err(why);
    }
    Ok((taskstats, family, cpus))
}

impl Session {
    /// Starts listening (before the step is spawned).
    pub(crate) fn start(keep: Keep) -> Session {
        match Listener::start(keep) {
            Ok(listener) => Session::Listening(listener),
            Err(reason) => Session::Sampled(sampled::Sampling::start(keep, reason)),
        }
    }

    /// The step's main process was spawned with this pid by its own
    /// subreaper `subreaper` (to which its orphans are reparented).
    pub(crate) fn set_root(&self, pid: i32, subreaper: i32) {
        match self {
            Session::Listening(l) => {
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
                l.ask(Ask::Root(pid.unsigned_abs(), subreaper.unsigned_abs(), now.map_or(0, |d| d.as_secs())));
            }
            Session::Sampled(s) => s.set_subreaper(subreaper),
        }
    }

    /// Reads the step's processes that are still running (before the kill).
    pub(crate) fn query_running(&mut self) {
        match self {
            Session::Listening(l) => l.query_running(),
            Session::Sampled(s) => s.query_running(),
        }
    }

    /// Stops listening (after the step's processes are reaped) and builds the document.
    pub(crate) fn finish(self) -> Processes {
        match self {
            Session::Listening(l) => l.finish(),
            Session::Sampled(s) => s.finish(),
        }
    }
}

impl Listener {
    fn start(keep: Keep) -> Result<Listener, String> {
        let (taskstats, family, _) = registered()?;
        let (connector, connector_reason) = match socket::connector() {
            Ok(fd) => {
                socket::enlarge_buffer(&fd, CONNECTOR_BUFFER);
                (Some(fd), None)
            }
            Err(e) => (
                None,
                Some(format!(
                    "no proc connector ({e}): processes are the step's by their parent at exit only, a process whose parent exited first is missed"
                )),
            ),
        };
        // The step's own subreaper comes with its root (`Ask::Root`).
        let tracker = Tracker::new(std::process::id());
        let (asks, asked) = mpsc::channel();
        let flags = rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK;
        let (woken, wake) =
            rustix::pipe::pipe_with(flags).map_err(|e| format!("cannot make the taskstats thread's pipe: {e}"))?;
        let delay_accounting = delay_accounting();
        let thread = std::thread::Builder::new()
            .name("stepmon-taskstats".to_owned())
            .spawn(move || {
                let sockets = Sockets { taskstats: &taskstats, connector: connector.as_ref(), woken: &woken, family };
                listen(&sockets, tracker, &asked, delay_accounting)
            })
            .map_err(|e| format!("cannot start the taskstats thread: {e}"))?;
        Ok(Listener { asks, wake, thread, family, delay_accounting, connector_reason, running: Vec::new(), keep })
    }

    /// Hands `ask` to the thread and wakes it.
    fn ask(&self, ask: Ask) {
        if self.asks.send(ask).is_ok() {
            let _ = rustix::io::write(&self.wake, &[1]);
        }
    }

    fn query_running(&mut self) {
        let (reply, live) = mpsc::channel();
        self.ask(Ask::Live(reply));
        let live = live.recv_timeout(LIVE_WAIT).unwrap_or_default();
        let Ok(fd) = socket::generic() else { return };
        for (seq, pid) in (100u32..).zip(live) {
            // ESRCH: it exited meanwhile, and its exit record tells.
            let Ok(reply) = socket::query_pid(&fd, self.family, pid, seq) else { continue };
            for m in Messages::new(&reply).flatten() {
                if let Ok(TaskstatsReply { pid: Some((_, stats)), .. }) = TaskstatsReply::parse(m.payload) {
                    let mut task = convert::task(&stats, false, self.delay_accounting);
                    task.record.args = args::of(task.tgid).unwrap_or_default();
                    self.running.push(task);
                }
            }
        }
    }

    fn finish(self) -> Processes {
        self.ask(Ask::Stop);
        let (counters, tracker) = self.thread.join().unwrap_or_default();
        let (processes, records) = tracker.finish(Instant::now(), self.running);
        let lost = counters.drops.unwrap_or(0).max(counters.overruns);
        let mut doc = Processes::build(processes, self.keep, records, lost);
        doc.delay_accounting = self.delay_accounting;
        if !self.delay_accounting {
            doc.missing.push(
                "block IO, swap-in and reclaim delays: delay accounting is off (kernel.task_delayacct=0); \
                 turn it on with `sysctl kernel.task_delayacct=1` or boot with `delayacct`"
                    .to_owned(),
            );
        }
        doc.missing.extend(self.connector_reason);
        let fork_losses = counters.connector_drops.unwrap_or(0).max(counters.connector_overruns);
        if fork_losses > 0 {
            doc.partial = true;
            doc.missing.push(format!(
                "{fork_losses} proc connector events lost: processes whose parent exited first may be missed"
            ));
        }
        doc
    }
}

/// The sequence number of the taskstats query that marks the end of the
/// records to read once told to stop ([`socket::send_marker`]).
const MARKER_SEQ: u32 = 0x5354_4d4e;
/// Once told to stop, the thread reads what was queued then, but for this
/// long at most (a marker that never comes, a machine that never stops
/// forking): the machine's other processes keep exiting, and "read until
/// nothing is queued" never ends on a busy machine (seen in the VM tier: a
/// `sleep` step ended by SIGTERM took 81 s to report while a shell polled
/// /proc).
const FINAL_READ: Duration = Duration::from_secs(2);
/// Of that, the connector's fork events: they are sent before the exits
/// they explain, so what the thread has not read yet is a batch at most.
const FINAL_CONNECTOR_READ: Duration = Duration::from_millis(300);

/// The thread's file descriptors.
struct Sockets<'a> {
    taskstats: &'a OwnedFd,
    connector: Option<&'a OwnedFd>,
    /// Read end of the pipe the main thread wakes it through.
    woken: &'a OwnedFd,
    /// The `TASKSTATS` family id (for the end marker).
    family: u16,
}

/// Waits until `fds` can be read or `wait` passed (an interruption is a
/// normal return).
fn wait_for(fds: &mut [PollFd<'_>], wait: Duration) {
    let timeout = Timespec::try_from(wait).ok();
    let _ = rustix::event::poll(fds, timeout.as_ref());
}

/// The monotonic clock (`ktime_get_ns`, which stamps connector events,
/// drivers/connector/cn_proc.c) read once beside an [`Instant`] (the same
/// clock on Linux), so that an event's stamp becomes an [`Instant`] without a
/// clock read per event: a fork read after a pause happened up to the pause
/// earlier.
struct EventClock {
    at: Instant,
    ns: u64,
}

impl EventClock {
    fn now() -> EventClock {
        let clock = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        let ns = u64::try_from(clock.tv_sec).unwrap_or(0).saturating_mul(1_000_000_000)
            + u64::try_from(clock.tv_nsec).unwrap_or(0);
        EventClock { at: Instant::now(), ns }
    }

    /// When the event stamped `timestamp_ns` happened, no later than `now`.
    fn happened(&self, timestamp_ns: u64, now: Instant) -> Instant {
        let at = if timestamp_ns >= self.ns {
            self.at + Duration::from_nanos(timestamp_ns - self.ns)
        } else {
            self.at.checked_sub(Duration::from_nanos(self.ns - timestamp_ns)).unwrap_or(self.at)
        };
        at.min(now)
    }
}

/// The thread: reads both sockets and answers the main thread's asks until
/// told to stop, then what was queued up to then.
fn listen(
    sockets: &Sockets<'_>,
    mut tracker: Tracker,
    asks: &mpsc::Receiver<Ask>,
    delay_accounting: bool,
) -> (Counters, Tracker) {
    let mut counters = Counters::default();
    let mut buf = vec![0u8; socket::DATAGRAM];
    // Once stopping: when the final read began, and whether the marker (the
    // end of what was queued at the stop) was read or never sent.
    let mut stopped_at: Option<Instant> = None;
    let mut marker_read = false;
    let mut wakes = [0u8; 64];
    let pause = pause();
    let clock = EventClock::now();
    loop {
        while matches!(rustix::io::read(sockets.woken, &mut wakes), Ok(n) if n > 0) {}
        for ask in asks.try_iter() {
            match ask {
                Ask::Root(pid, subreaper, started) => tracker.set_root(pid, subreaper, started, Instant::now()),
                Ask::Live(reply) => {
                    let _ = reply.send(tracker.live());
                }
                Ask::Stop if stopped_at.is_none() => {
                    // The step's processes are reaped: their records are queued.
                    marker_read = socket::send_marker(sockets.taskstats, sockets.family, MARKER_SEQ).is_err();
                    stopped_at = Some(Instant::now());
                }
                Ask::Stop => {}
            }
        }
        let connector_until = stopped_at.map(|at| at + FINAL_CONNECTOR_READ);
        let until = stopped_at.map(|at| at + FINAL_READ);
        if stopped_at.is_none() {
            let mut fds =
                vec![PollFd::new(sockets.woken, PollFlags::IN), PollFd::new(sockets.taskstats, PollFlags::IN)];
            if let Some(c) = sockets.connector {
                fds.push(PollFd::new(c, PollFlags::IN));
            }
            wait_for(&mut fds, POLL);
        }
        // Records first, then fork events: a record is weighed once the
        // connector was read to its end after it, so that every fork event
        // sent before its exit is known (a reused pid is taken for the
        // wrong process otherwise).
        let records = drain(sockets.taskstats, &mut buf, &mut counters.overruns, until, &mut tracker, |bytes, _, t| {
            for m in Messages::new(bytes).flatten() {
                // Multicast records come from port 0; the marker's reply
                // and acknowledgement to this socket's port.
                if m.header.port != 0 {
                    if m.header.seq == MARKER_SEQ && m.error().is_some() {
                        marker_read = true;
                        return false;
                    }
                    continue;
                }
                if let Ok(TaskstatsReply { pid: Some((_, stats)), .. }) = TaskstatsReply::parse(m.payload) {
                    t.record(convert::task(&stats, true, delay_accounting));
                }
            }
            true
        });
        let forks = sockets.connector.map_or(0, |c| {
            drain(c, &mut buf, &mut counters.connector_overruns, connector_until, &mut tracker, |bytes, now, t| {
                for m in Messages::new(bytes).flatten() {
                    if let Ok(ProcEvent {
                        kind: EventKind::Fork { parent_tgid, child_pid, child_tgid, .. },
                        timestamp_ns,
                        ..
                    }) = ProcEvent::parse(m.payload)
                        && child_pid == child_tgid
                    {
                        t.fork(parent_tgid, child_tgid, clock.happened(timestamp_ns, now));
                    }
                }
                true
            })
        });
        let forks_to_the_end = forks < READ_AT_MOST;
        if forks_to_the_end {
            tracker.forks_read(Instant::now());
        }
        let full = records == READ_AT_MOST || !forks_to_the_end;
        if stopped_at.is_none() && !full {
            // The step's processes that lived until now: their arguments (a
            // process shorter than a pause has none). Only once both queues
            // were read to their end: before that, the members include
            // processes whose records are still queued (in an exit storm,
            // trying their gone /proc entries cost more than the rest).
            for pid in tracker.wanting_args(Instant::now()) {
                if let Some(args) = args::of(pid) {
                    tracker.set_args(pid, args);
                }
            }
        }
        if let Some(until) = until {
            let records_read = marker_read || records == 0 || Instant::now() >= until;
            if records_read && forks_to_the_end {
                break;
            }
        } else if records + forks > 0 && !full {
            // Let events pile up, unless the main thread asks meanwhile.
            wait_for(&mut [PollFd::new(sockets.woken, PollFlags::IN)], pause);
        }
    }
    counters.drops = drops::of(sockets.taskstats.as_fd());
    counters.connector_drops = sockets.connector.and_then(|c| drops::of(c.as_fd()));
    (counters, tracker)
}

/// Reads what is queued on `fd` without blocking, handing each datagram to
/// `each`, until nothing is queued, [`READ_AT_MOST`] were read, `each` says
/// stop, or `until` passed; counts `ENOBUFS`. Returns the datagrams read.
fn drain(
    fd: &OwnedFd,
    buf: &mut [u8],
    overruns: &mut u64,
    until: Option<Instant>,
    tracker: &mut Tracker,
    mut each: impl FnMut(&[u8], Instant, &mut Tracker) -> bool,
) -> usize {
    let mut n = 0;
    while n < READ_AT_MOST {
        if until.is_some_and(|until| Instant::now() >= until) {
            return n;
        }
        match rustix::net::recv(fd, &mut buf[..], RecvFlags::DONTWAIT) {
            Ok((len, _)) => {
                n += 1;
                if !each(&buf[..len], Instant::now(), tracker) {
                    return n;
                }
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
    fn an_events_stamp_becomes_the_instant_it_happened() {
        let clock = super::EventClock::now();
        let later = clock.at + std::time::Duration::from_millis(700);
        assert_eq!(clock.happened(clock.ns + 200_000_000, later), clock.at + std::time::Duration::from_millis(200));
        assert_eq!(clock.happened(clock.ns + 900_000_000, later), later, "never after it was read");
        assert!(clock.happened(clock.ns.saturating_sub(1_000), later) <= clock.at);
    }
}
