//! One taskstats listener for every step of a process: the sockets, their
//! registration and the thread that reads them are made once (by a
//! [`crate::Runner`], or by a lone step for itself) and each step gets a
//! [`Tracker`] of its own, fed every record and fork event the kernel sends.
//! A listener per step cost each step two sockets, a family lookup and a
//! cpumask registration (three round trips to the kernel), a thread, and a
//! read of every exit on the machine once more per step running.
//!
//! Records reach every tracker (taskstats records carry no cgroup, so
//! membership is decided per step from fork ancestry, as with one step).

use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};
use stepmon_taskstats_parse::netlink::Messages;
use stepmon_taskstats_parse::taskstats::TaskstatsReply;

use super::clock::EventClock;
use super::convert;
use super::cpu_answer::{Answer, ProcessCpu};
pub(super) use super::rounds::Ended;
use super::rounds::{
    BATCH, Counters, READ_AT_MOST, Sockets, Stopping, Watched, drain, read_args, read_connector, storm_pause, to_every,
    wait_for,
};
use super::tracker::Tracker;
use super::{CONNECTOR_BUFFER, drops, registered, socket};

/// How long the thread sleeps while no event comes and no process is due
/// for its arguments. An ask wakes it at once through its pipe (the ask is
/// sent before the byte is written, and the thread drains the pipe before
/// it looks at the asks: no wake-up is lost), so this only bounds an idle
/// sleep. Each idle wake costs the thread CPU: at 100 ms the wakes were a
/// large share of the collector's CPU over a step that does not fork
/// (benches/README.md, "Figures behind code comments").
const POLL: Duration = Duration::from_secs(1);
/// Once a step is told to stop, the thread reads what was queued then, but
/// for this long at most (a marker that never comes, a machine that never
/// stops forking): the machine's other processes keep exiting, and "read
/// until nothing is queued" never ends on a busy machine (seen in the VM
/// tier: a `sleep` step ended by SIGTERM took 81 s to report while a shell
/// polled /proc).
const FINAL_READ: Duration = Duration::from_secs(2);
/// Of that, the connector's fork events: they are sent before the exits
/// they explain, so what the thread has not read yet is a batch at most.
const FINAL_CONNECTOR_READ: Duration = Duration::from_millis(300);
/// A round that read this many datagrams or more is a storm's: the thread
/// then lets events pile up for a [`pause`] before it reads again. After a
/// smaller round it waits [`BATCH`] only: a pause after every round missed
/// the arguments of processes that lived less than a pause (a `cargo
/// build`'s `rustc`s), and no wait at all woke the thread for every event
/// (many times the CPU in an exit storm: benches/README.md, "One listener
/// per process, shared by the steps").
const STORM_ROUND: usize = 64;
/// The bit that marks a step's end marker among the sequence numbers of
/// queries on the listening socket ([`socket::send_marker`]); the step's id
/// is in the bits below it.
const MARKER_BIT: u32 = 0x4000_0000;

/// What a step asks of the thread, which alone owns the trackers: a lock
/// shared with a thread that reads without pause would starve the steps
/// (seen in the VM tier: the step's root was set only after the step had
/// exited, so SIGTERM reached nobody). Each answer comes on a channel of
/// one slot ([`reply_channel`]).
#[derive(Debug)]
enum Ask {
    /// A step is about to spawn: track it from now on (answered once the
    /// thread will hand it every event read from here on).
    Open(u64, mpsc::SyncSender<()>),
    /// The step's main process was spawned (pid, its subreaper's pid, s since the epoch).
    Root(u64, u32, u32, u64),
    /// The step's processes still alive.
    Live(u64, mpsc::SyncSender<Vec<u32>>),
    /// The step's processes that ended from a place in its list of ended
    /// ones on, and those alive ([`Hub::cpu_times`]).
    CpuTimes(u64, usize, mpsc::SyncSender<Answer>),
    /// The step's processes are reaped: read what is queued, then hand its
    /// tracker back.
    Stop(u64, mpsc::SyncSender<Ended>),
    /// The step was dropped before its end: its tracker goes.
    Forget(u64),
}

/// The channel an answer comes on: one slot, which the thread's one send
/// never waits for. An unbounded channel allocates (and zeroes) a block of
/// 31 slots at its first send: for [`Ask::Stop`]'s trackers four pages to
/// fault in at every step's end.
fn reply_channel<T>() -> (mpsc::SyncSender<T>, mpsc::Receiver<T>) {
    mpsc::sync_channel(1)
}

/// The listener every step of a process shares; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Hub {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    asks: Mutex<Option<mpsc::Sender<Ask>>>,
    /// Write end of the pipe that wakes the thread for an ask.
    wake: OwnedFd,
    next_step: AtomicU64,
    /// The step [`Hub::start_for_one_step`] opened, until taken.
    preopened: Mutex<Option<u64>>,
    /// The thread's word on its sockets, until [`Hub::ready`] takes it.
    setting_up: Mutex<Option<mpsc::Receiver<Result<Ready, String>>>>,
    ready: OnceLock<Result<Ready, String>>,
}

/// What the thread's set-up found.
#[derive(Debug)]
struct Ready {
    family: u16,
    delay_accounting: bool,
    /// Why fork events are missing, if they are.
    connector_reason: Option<String>,
    /// How long the thread lets events pile up between rounds, from the
    /// number of CPUs online (`super::pause`).
    pause: Duration,
}

/// The listener's sockets: the taskstats socket registered for every CPU's
/// exits, the proc connector's (or why there is none) and what they are.
fn set_up_sockets() -> Result<(OwnedFd, Option<OwnedFd>, Ready), String> {
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
    let pause = super::pause(super::online_cpus());
    let ready = Ready { family, delay_accounting: super::delay_accounting(), connector_reason, pause };
    Ok((taskstats, connector, ready))
}

impl Hub {
    /// Starts the listener's thread, which makes and registers its sockets
    /// meanwhile; [`Hub::open`] says why taskstats cannot be had here (the
    /// steps then sample procfs). `Err`: no thread could be started.
    pub(crate) fn start() -> Result<Hub, String> {
        Hub::start_with(false)
    }

    /// [`Hub::start`] for a lone step that spawns right after: its step is
    /// opened before the thread starts, so that [`Hub::open`] does not wait
    /// for the thread to come up and answer (the thread's first look at its
    /// asks comes before its first read). Not for a `Runner`: a step opened
    /// long before its spawn would keep every fork of the machine meanwhile.
    pub(crate) fn start_for_one_step() -> Result<Hub, String> {
        Hub::start_with(true)
    }

    fn start_with(preopen: bool) -> Result<Hub, String> {
        let (asks, asked) = mpsc::channel();
        let flags = rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK;
        let (woken, wake) =
            rustix::pipe::pipe_with(flags).map_err(|e| format!("cannot make the taskstats thread's pipe: {e}"))?;
        let next_step = AtomicU64::new(1);
        let preopened = preopen.then(|| {
            let step = next_step.fetch_add(1, Ordering::Relaxed);
            // Nobody waits for its answer: the thread takes it before it reads.
            let (reply, _) = reply_channel();
            let _ = asks.send(Ask::Open(step, reply));
            step
        });
        // As root the sockets are made and registered on the thread, while
        // the caller places the step (three round trips to the kernel in
        // parallel with the cgroups' mkdirs); the first `open` waits for
        // them. Elsewhere the registration is refused at once (it needs
        // CAP_NET_ADMIN): found out here, not on a thread started for nothing.
        let set_up_here = if rustix::process::geteuid().is_root() { None } else { Some(set_up_sockets()?) };
        let (set_up, setting_up) = mpsc::sync_channel(1);
        // Detached: see `Shared`'s drop.
        std::thread::Builder::new()
            .name("stepmon-taskstats".to_owned())
            .spawn(move || {
                let (taskstats, connector, ready) = match set_up_here.map_or_else(set_up_sockets, Ok) {
                    Ok(set) => set,
                    Err(why) => {
                        let _ = set_up.send(Err(why));
                        return;
                    }
                };
                let (family, delay_accounting, pause) = (ready.family, ready.delay_accounting, ready.pause);
                let _ = set_up.send(Ok(ready));
                let sockets = Sockets { taskstats: &taskstats, connector: connector.as_ref(), woken: &woken, family };
                listen(&sockets, &asked, delay_accounting, pause);
            })
            .map_err(|e| format!("cannot start the taskstats thread: {e}"))?;
        Ok(Hub {
            shared: Arc::new(Shared {
                asks: Mutex::new(Some(asks)),
                wake,
                next_step,
                preopened: Mutex::new(preopened),
                setting_up: Mutex::new(Some(setting_up)),
                ready: OnceLock::new(),
            }),
        })
    }

    /// The thread's sockets, once it has made them (waits for that), or why
    /// there are none (the steps then sample procfs).
    fn ready(&self) -> Result<&Ready, &str> {
        let ready = self.shared.ready.get_or_init(|| {
            let setting_up = self.shared.setting_up.lock().ok().and_then(|mut s| s.take());
            setting_up.and_then(|s| s.recv().ok()).unwrap_or_else(|| Err("the taskstats thread has ended".to_owned()))
        });
        ready.as_ref().map_err(String::as_str)
    }

    pub(super) fn family(&self) -> u16 {
        self.ready().map_or(0, |r| r.family)
    }

    pub(super) fn delay_accounting(&self) -> bool {
        self.ready().is_ok_and(|r| r.delay_accounting)
    }

    pub(super) fn connector_reason(&self) -> Option<&str> {
        self.ready().ok().and_then(|r| r.connector_reason.as_deref())
    }

    /// Hands `ask` to the thread and wakes it; false when it has ended.
    fn ask(&self, ask: Ask) -> bool {
        let sent = self.shared.asks.lock().ok().and_then(|asks| asks.as_ref().map(|a| a.send(ask).is_ok()));
        if sent == Some(true) {
            let _ = rustix::io::write(&self.shared.wake, &[1]);
            return true;
        }
        false
    }

    /// Starts tracking a new step; returns once every event read from now
    /// on reaches it (before its spawn, so that its first fork is seen).
    /// `Err`: why there is no listener (no privilege, no taskstats, the
    /// thread has ended).
    pub(super) fn open(&self) -> Result<u64, String> {
        self.ready().map_err(str::to_owned)?;
        if let Some(step) = self.shared.preopened.lock().ok().and_then(|mut p| p.take()) {
            return Ok(step);
        }
        let step = self.shared.next_step.fetch_add(1, Ordering::Relaxed) & u64::from(MARKER_BIT - 1);
        let (reply, opened) = reply_channel();
        if self.ask(Ask::Open(step, reply)) && opened.recv().is_ok() {
            Ok(step)
        } else {
            Err("the taskstats thread has ended".to_owned())
        }
    }

    pub(super) fn set_root(&self, step: u64, pid: u32, subreaper: u32, started: u64) {
        self.ask(Ask::Root(step, pid, subreaper, started));
    }

    /// The step's processes alive as far as the records tell, waiting `wait` at most.
    pub(super) fn live(&self, step: u64, wait: Duration) -> Vec<u32> {
        let (reply, live) = reply_channel();
        if !self.ask(Ask::Live(step, reply)) {
            return Vec::new();
        }
        live.recv_timeout(wait).unwrap_or_default()
    }

    /// The CPU times of the step's processes that ended from `from` (a place
    /// in its list of ended ones) on, the next place, and the pids of those
    /// alive, waiting `wait` at most; `None` without an answer.
    pub(super) fn cpu_times(&self, step: u64, from: usize, wait: Duration) -> Option<Answer> {
        let (reply, answer) = reply_channel();
        if !self.ask(Ask::CpuTimes(step, from, reply)) {
            return None;
        }
        answer.recv_timeout(wait).ok()
    }

    /// Stops tracking a step that will not end through [`Hub::stop`] (its
    /// handle was dropped: a cancelled future).
    pub(super) fn forget(&self, step: u64) {
        self.ask(Ask::Forget(step));
    }

    /// Stops tracking the step once what was queued is read: its tracker
    /// comes on the receiver (the thread reads meanwhile).
    pub(super) fn stop(&self, step: u64) -> Option<mpsc::Receiver<Ended>> {
        let (reply, ended) = reply_channel();
        self.ask(Ask::Stop(step, reply)).then_some(ended)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // The thread ends once its asks are disconnected and no step is
        // tracked: a step opened for a lone step that never started is not.
        if let (Some(step), Ok(asks)) = (self.preopened.get_mut().ok().and_then(Option::take), self.asks.lock())
            && let Some(asks) = asks.as_ref()
        {
            let _ = asks.send(Ask::Forget(step));
        }
        if let Ok(mut asks) = self.asks.lock() {
            asks.take();
        }
        // Not joined: the thread closes its sockets (the taskstats one
        // deregisters its CPUs) and ends on its own. Waiting for that was
        // on the end path of every lone step (`stepmon run`), and a process
        // that exits meanwhile ends it with the process.
        let _ = rustix::io::write(&self.wake, &[1]);
    }
}

/// The thread: reads both sockets, hands every event to every tracked step
/// and answers the steps' asks, until the hub is dropped and no step is left.
fn listen(sockets: &Sockets<'_>, asks: &mpsc::Receiver<Ask>, delay_accounting: bool, pause: Duration) {
    let mut watched: HashMap<u64, Watched> = HashMap::new();
    let mut totals = Counters::default();
    // Drops are counted from /proc/net/netlink only once a socket has
    // overrun (an `ENOBUFS`, which every dropping episode reports): a
    // machine that never overruns never pays for the read.
    let mut congested = false;
    let mut buf = socket::datagram_buffer();
    let mut wakes = [0u8; 64];
    let clock = EventClock::now();
    let me = std::process::id();
    let mut hub_dropped = false;
    loop {
        while matches!(rustix::io::read(sockets.woken, &mut wakes), Ok(n) if n > 0) {}
        loop {
            let ask = match asks.try_recv() {
                Ok(ask) => ask,
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    hub_dropped = true;
                    break;
                }
            };
            match ask {
                Ask::Open(step, opened) => {
                    let tracker = Tracker::new(me);
                    watched.insert(step, Watched { tracker, at_open: totals, stopping: None });
                    let _ = opened.send(());
                }
                Ask::Root(step, pid, subreaper, started) => {
                    if let Some(w) = watched.get_mut(&step) {
                        w.tracker.set_root(pid, subreaper, started, Instant::now());
                    }
                }
                Ask::Live(step, reply) => {
                    let _ = reply.send(watched.get(&step).map(|w| w.tracker.live()).unwrap_or_default());
                }
                Ask::CpuTimes(step, from, reply) => {
                    let answer = watched.get(&step).map(|w| {
                        let (ended, next) = w.tracker.ended_since(from);
                        Answer {
                            ended: ended.iter().map(ProcessCpu::of_record).collect(),
                            next,
                            live: w.tracker.live(),
                        }
                    });
                    let _ = reply.send(answer.unwrap_or_default());
                }
                Ask::Forget(step) => {
                    watched.remove(&step);
                }
                Ask::Stop(step, reply) => {
                    if let Some(w) = watched.get_mut(&step)
                        && w.stopping.is_none()
                    {
                        // The step's processes are reaped: their records are queued.
                        let seq = MARKER_BIT | u32::try_from(step).unwrap_or(0);
                        let marker_read = socket::send_marker(sockets.taskstats, sockets.family, seq).is_err();
                        w.stopping = Some(Stopping { since: Instant::now(), marker_read, reply });
                    }
                }
            }
        }
        // Every step holds the hub: once it is dropped, what is still
        // tracked belongs to nobody.
        if hub_dropped {
            return;
        }
        let first_stop = watched.values().filter_map(|w| w.stopping.as_ref().map(|s| s.since)).min();
        if first_stop.is_none() {
            let mut fds =
                vec![PollFd::new(sockets.woken, PollFlags::IN), PollFd::new(sockets.taskstats, PollFlags::IN)];
            if let Some(c) = sockets.connector {
                fds.push(PollFd::new(c, PollFlags::IN));
            }
            let args_due = watched.values_mut().filter_map(|w| w.tracker.args_due()).min();
            let wait = args_due.map_or(POLL, |due| due.saturating_duration_since(Instant::now()).min(POLL));
            wait_for(&mut fds, wait);
        }
        let until = first_stop.map(|at| at + FINAL_READ);
        let connector_until = first_stop.map(|at| at + FINAL_CONNECTOR_READ);
        // Records first, then fork events: a record is weighed once the
        // connector was read to its end after it, so that every fork event
        // sent before its exit is known (a reused pid is taken for the
        // wrong process otherwise).
        let records = drain(sockets.taskstats, &mut buf, &mut totals.overruns, until, |bytes, _| {
            for m in Messages::new(bytes).flatten() {
                // Multicast records come from port 0; a marker's reply and
                // acknowledgement to this socket's port.
                if m.header.port != 0 {
                    if m.header.seq & MARKER_BIT != 0
                        && m.error().is_some()
                        && let Some(Watched { stopping: Some(stop), .. }) =
                            watched.get_mut(&u64::from(m.header.seq & !MARKER_BIT))
                    {
                        stop.marker_read = true;
                    }
                    continue;
                }
                if watched.is_empty() {
                    continue;
                }
                if let Ok(TaskstatsReply { pid: Some((_, stats)), .. }) = TaskstatsReply::parse(m.payload) {
                    to_every(&mut watched, convert::task(&stats, true, delay_accounting));
                }
            }
        });
        let forks = read_connector(sockets, &mut buf, &mut totals, connector_until, &clock, &mut watched);
        let forks_to_the_end = forks < READ_AT_MOST;
        let now = Instant::now();
        let full = records == READ_AT_MOST || !forks_to_the_end;
        read_args(&mut watched, now, !full);
        congested |= totals.overruns > 0 || totals.connector_overruns > 0;
        let done: Vec<u64> = watched
            .iter()
            .filter(|(_, w)| {
                w.stopping.as_ref().is_some_and(|s| {
                    // A step stops once its processes are reaped, and each
                    // exit record is queued before the exit can be reaped
                    // (taskstats_exit in do_exit, before exit_notify): a
                    // round after the stop that read the socket to its end
                    // read them all. The marker bounds a round that could not.
                    let records_read = s.marker_read || records < READ_AT_MOST || now >= s.since + FINAL_READ;
                    records_read && forks_to_the_end
                })
            })
            .map(|(step, _)| *step)
            .collect();
        if !done.is_empty() && congested {
            totals.drops = drops::of(sockets.taskstats.as_fd());
            totals.connector_drops = sockets.connector.and_then(|c| drops::of(c.as_fd()));
        }
        for step in done {
            let Some(Watched { tracker, at_open, stopping: Some(stopping) }) = watched.remove(&step) else { continue };
            let mut counters = at_open.since(totals);
            if !congested {
                (counters.drops, counters.connector_drops) = (Some(0), Some(0));
            }
            let _ = stopping.reply.send(Ended { counters, tracker });
        }
        if first_stop.is_none() && records + forks > 0 && !full {
            if records + forks >= STORM_ROUND {
                storm_pause(sockets, &mut buf, &mut totals, pause, &clock, &mut watched);
            } else {
                // Let events pile up, unless a step asks meanwhile.
                wait_for(&mut [PollFd::new(sockets.woken, PollFlags::IN)], BATCH);
            }
        }
    }
}
