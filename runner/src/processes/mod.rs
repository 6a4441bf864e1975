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
mod clock;
mod convert;
mod cpu_answer;
mod cpu_times;
mod delivery;
pub(crate) mod doctor;
mod drops;
mod hub;
mod redact;
mod rounds;
mod sampled;
mod socket;
mod tracker;

use std::io;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use stepmon_model::processes::{Keep, Processes};
use stepmon_taskstats_parse::netlink::Messages;
use stepmon_taskstats_parse::taskstats::TaskstatsReply;

use convert::Task;
pub(crate) use cpu_answer::ProcessCpu;
pub(crate) use cpu_times::{CpuTimes, Reading};
pub(crate) use hub::Hub;

/// The taskstats socket's receive buffer: an exit record takes about 1.3
/// KiB of socket memory (596 bytes in a 1 KiB-rounded skb plus overhead);
/// 32 MiB holds some 25,000 records, the backlog of a storm while the
/// listener thread waits for a CPU on a loaded 2-core machine.
const TASKSTATS_BUFFER: usize = 32 << 20;
/// The connector's: a fork event per process (and exec and exit events on
/// kernels before 6.6, which cannot filter), 76 bytes each.
const CONNECTOR_BUFFER: usize = 16 << 20;
/// Records the sockets may queue while the thread pauses: half of what the
/// taskstats buffer holds (above), the connector's holding as many fork events.
const PAUSE_RECORDS: f64 = 12_500.0;
/// The fastest exit storm a CPU makes, processes a second: about three
/// times what a C loop of `fork`, `_exit` and `waitpid` makes per CPU on the
/// 2-core VM this was measured on (benches/README.md, "Fork events only,
/// records weighed after them, pauses sized to the buffers"), as bare metal
/// forks faster.
const STORM_PER_CPU: f64 = 10_000.0;

/// After a round that read all that was queued, the thread lets events pile
/// up this long before it reads again (an ask of the main thread ends the
/// wait): a wake-up per batch instead of one per event, sized so that the
/// fastest storm of every CPU fills half the buffers meanwhile (625 ms on 2
/// CPUs). stepmon's CPU in an exit storm with this pause and with shorter
/// ones: benches/README.md, "Fork events only, records weighed after them,
/// pauses sized to the buffers".
/// `cpus`: the online CPUs ([`online_cpus`]), the ones that fork.
fn pause(cpus: usize) -> Duration {
    #[allow(clippy::cast_precision_loss)] // CPU counts far below 2^52
    let seconds = PAUSE_RECORDS / (STORM_PER_CPU * cpus.max(1) as f64);
    Duration::from_secs_f64(seconds).clamp(Duration::from_millis(10), Duration::from_secs(1))
}
/// The CPUs online now (`/sys/devices/system/cpu/online`, one small file;
/// not `possible`, which a VM ready for CPU hotplug may set far above what
/// runs); 1 when it cannot be read.
fn online_cpus() -> usize {
    std::fs::read_to_string("/sys/devices/system/cpu/online").map_or(1, |list| count_cpus(&list))
}

/// How many CPUs a cpulist names (`0-7`, `0,2-3`: the format of
/// `/sys/devices/system/cpu/{possible,online}`,
/// <https://docs.kernel.org/admin-guide/cputopology.html>); 1 when it
/// cannot be read (the longest pause of [`pause`]'s clamp).
fn count_cpus(cpulist: &str) -> usize {
    let count = cpulist.trim().split(',').try_fold(0usize, |count, range| {
        let (first, last) = range.split_once('-').unwrap_or((range, range));
        let (first, last) = (first.parse::<usize>().ok()?, last.parse::<usize>().ok()?);
        count.checked_add(last.checked_sub(first)?.checked_add(1)?)
    });
    count.unwrap_or(1).max(1)
}

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

/// A step's part of the shared listener ([`Hub`]).
#[derive(Debug)]
pub(crate) struct Listener {
    hub: Hub,
    step: u64,
    /// The step's main process, once spawned (reaped when the live ones are asked for).
    root: Option<u32>,
    running: Vec<Task>,
    keep: Keep,
    /// It was told to stop ([`Session::stop`], [`Listener::finish`]).
    stopped: bool,
    /// Where its tracker comes once it has stopped.
    stopping: Option<std::sync::mpsc::Receiver<hub::Ended>>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        if !self.stopped {
            self.hub.forget(self.step);
        }
    }
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
    // The registration needs CAP_NET_ADMIN (EPERM without it): said
    // without a socket and two round trips to the kernel to find out.
    if rustix::thread::capabilities(None)
        .is_ok_and(|caps| !caps.effective.contains(rustix::thread::CapabilitySet::NET_ADMIN))
    {
        return Err(refused(&io::Error::from_raw_os_error(libc::EPERM)));
    }
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
    /// Starts following the step on `hub` (before the step is spawned), or
    /// sampling procfs when there is no listener (`Err`: why).
    pub(crate) fn start(keep: Keep, hub: &Result<Hub, String>, ticker: &crate::ticker::Ticker) -> Session {
        let opened = match hub {
            Ok(hub) => hub.open().map(|step| (hub, step)),
            Err(reason) => Err(reason.clone()),
        };
        match opened {
            Ok((hub, step)) => Session::Listening(Listener {
                hub: hub.clone(),
                step,
                root: None,
                running: Vec::new(),
                keep,
                stopped: false,
                stopping: None,
            }),
            Err(reason) => Session::Sampled(sampled::Sampling::start(keep, reason, ticker)),
        }
    }

    /// The step's main process was spawned with this pid by its own
    /// subreaper `subreaper` (to which its orphans are reparented).
    pub(crate) fn set_root(&mut self, pid: i32, subreaper: i32) {
        match self {
            Session::Listening(l) => {
                l.root = Some(pid.unsigned_abs());
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
                l.hub.set_root(l.step, pid.unsigned_abs(), subreaper.unsigned_abs(), now.map_or(0, |d| d.as_secs()));
            }
            Session::Sampled(s) => s.set_subreaper(subreaper),
        }
    }

    /// Where the step's processes' CPU times can be read while it runs
    /// (the busiest command of a progress line).
    pub(crate) fn cpu_times(&self) -> CpuTimes {
        match self {
            Session::Listening(l) => CpuTimes::Listening { hub: l.hub.clone(), step: l.step },
            Session::Sampled(s) => CpuTimes::Sampled(s.seen()),
        }
    }

    /// Reads the step's processes that are still running (before the kill).
    pub(crate) fn query_running(&mut self) {
        match self {
            Session::Listening(l) => l.query_running(),
            Session::Sampled(s) => s.query_running(),
        }
    }

    /// Asks the listener to stop once what is queued is read (after the
    /// step's processes are reaped), so that it reads while the caller
    /// takes the final samples; [`Session::finish`] takes its answer.
    pub(crate) fn stop(&mut self) {
        if let Session::Listening(l) = self
            && !l.stopped
        {
            l.stopping = l.hub.stop(l.step);
            l.stopped = true;
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
    fn query_running(&mut self) {
        let mut live = self.hub.live(self.step, LIVE_WAIT);
        // The main process was reaped before this ask: its record tells.
        live.retain(|pid| Some(*pid) != self.root);
        if live.is_empty() {
            return;
        }
        let Ok(fd) = socket::generic() else { return };
        let delay_accounting = self.hub.delay_accounting();
        for (seq, pid) in (100u32..).zip(live) {
            // ESRCH: it exited meanwhile, and its exit record tells.
            let Ok(reply) = socket::query_pid(&fd, self.hub.family(), pid, seq) else { continue };
            for m in Messages::new(&reply).flatten() {
                if let Ok(TaskstatsReply { pid: Some((_, stats)), .. }) = TaskstatsReply::parse(m.payload) {
                    let mut task = convert::task(&stats, false, delay_accounting);
                    task.record.args = args::of(task.tgid).unwrap_or_default();
                    self.running.push(task);
                }
            }
        }
    }

    fn finish(mut self) -> Processes {
        let delay_accounting = self.hub.delay_accounting();
        let stopping = if self.stopped { self.stopping.take() } else { self.hub.stop(self.step) };
        self.stopped = true;
        let ended = stopping.and_then(|ended| ended.recv().ok());
        let Some(hub::Ended { counters, tracker }) = ended else {
            let mut doc = Processes::build(Vec::new(), self.keep, 0, 0);
            doc.partial = true;
            doc.missing.push("the taskstats thread ended before the step: its processes are unknown".to_owned());
            return doc;
        };
        let (processes, records) = tracker.finish(Instant::now(), std::mem::take(&mut self.running));
        let lost = counters.drops.unwrap_or(0).max(counters.overruns);
        let mut doc = Processes::build(processes, self.keep, records, lost);
        doc.delay_accounting = delay_accounting;
        if !delay_accounting {
            doc.missing.push(
                "block IO, swap-in and reclaim delays: delay accounting is off (kernel.task_delayacct=0); \
                 turn it on with `sysctl kernel.task_delayacct=1` or boot with `delayacct`"
                    .to_owned(),
            );
        }
        doc.missing.extend(self.hub.connector_reason().map(str::to_owned));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_cpus_a_cpulist_names() {
        assert_eq!(count_cpus("0-1\n"), 2);
        assert_eq!(count_cpus("0"), 1);
        assert_eq!(count_cpus("0,2-3,8-15"), 11);
        // Unreadable: one CPU, the longest pause.
        assert_eq!(count_cpus(""), 1);
        assert_eq!(count_cpus("3-1"), 1);
        assert_eq!(count_cpus("0-x"), 1);
        assert!(pause(1) > pause(count_cpus("0-63")));
        // /proc/stat has a `cpuN` line for each online CPU (show_stat).
        let stat = std::fs::read_to_string("/proc/stat").unwrap();
        let listed = stat
            .lines()
            .filter(|l| l.strip_prefix("cpu").is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit())))
            .count();
        assert_eq!(online_cpus(), listed, "the online CPUs, as /proc/stat lists them");
    }
}
