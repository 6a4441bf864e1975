//! A step's own subreaper: a small process forked for each step that is
//! the child subreaper (`PR_SET_CHILD_SUBREAPER`, prctl(2)) of that step
//! alone and starts its command. Every orphan of the step — a background job
//! whose shell exited, a daemon that double-forked — is reparented to it,
//! never to the caller's process, so steps running at once in one process
//! never see, reap or kill each other's processes, and the caller's own
//! children are never touched (no process-wide subreaper, no `wait(-1)`).
//!
//! It reaps each process it gets with `wait4` (reading its `comm` while it is
//! a zombie) and reports it to the caller over a pipe as a fixed-size
//! [`Event`]; once the command's first process has exited and the caller
//! says so, it kills what is left (or waits for it, `--wait-all`) and reports
//! how many it killed. It lives in the caller's cgroup, not the step's, so
//! it is never counted as the step's, and it is no descendant of the step's
//! first process, so the taskstats session does not count it either.
//!
//! Like the clone3 child of the direct spawn, it is a copy of a multi-threaded process
//! made without `exec`: it makes only async-signal-safe system calls
//! (signal-safety(7)) on memory prepared before the fork — no allocation, no
//! locks, no panics — and never returns into Rust. It closes the
//! close-on-exec fds it inherited (other steps' pipes would otherwise never
//! see end-of-file) and keeps the others, which the command inherits as it
//! would from `std::process::Command` (a jobserver's pipe, for one).
#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

use std::ffi::{CString, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;

use rustix::process::{Pid, PidfdFlags, Signal};

use super::clone3::{self, CLONE_INTO_CGROUP, ChildSetup, CloneArgs, Exec, Stage};
use super::reap::{Reaped, Rusage};
use super::{Mode, SpawnError, Target};

/// One event on the pipe: `[kind u32][pid i32][status i32][flags u32]
/// [rusage 9×u64][comm 16 bytes][extra u64]`, native-endian; 112 bytes,
/// below `PIPE_BUF`, so each write is atomic (pipe(7)).
const RECORD: usize = 112;
const STARTED: u32 = 1;
const NOT_STARTED: u32 = 2;
const REAPED: u32 = 3;
const DONE: u32 = 4;
/// `flags`: the reaped process is the command's first one.
const FLAG_MAIN: u32 = 1;
/// `flags`: `comm` holds its command name.
const FLAG_COMM: u32 = 2;
/// `extra` of [`STARTED`]: how the command's process was created.
const WAY_CLONE3: u64 = 1;
const WAY_FORK: u64 = 2;
/// What the caller writes once the command's first process has exited.
const KILL: u8 = b'k';
const WAIT_ALL: u8 = b'w';
/// The most distinct processes whose kill is remembered (to count each
/// once); past it each signal counts.
const REMEMBER_KILLED: usize = 1024;

/// What the step's subreaper reports.
#[derive(Debug)]
pub enum Event {
    /// A process of the step was reaped.
    Reaped {
        /// Its PID, status and rusage (with the descendants it waited for).
        reaped: Reaped,
        /// Its command name, read while it was a zombie.
        command: Option<String>,
        /// Whether it is the command's first process.
        main: bool,
    },
    /// Every process of the step is gone; `killed` of them were killed.
    Done {
        /// Leftovers signalled with SIGKILL.
        killed: u64,
    },
}

/// A step started under its own subreaper.
#[derive(Debug)]
pub struct Kept {
    subreaper: Pid,
    /// The command's first process (a child of the subreaper).
    pub pid: Pid,
    /// A pidfd of it: signals reach it, not a later process of the same PID.
    pidfd: Option<OwnedFd>,
    /// The subreaper's events (non-blocking).
    events: File,
    /// Bytes of a partly read event.
    partial: Vec<u8>,
    /// Where the caller says kill or wait; `None` once said.
    control: Option<File>,
    /// The command's exec report (nothing, or why exec failed).
    report: Option<File>,
    program: OsString,
    namespace: Option<PathBuf>,
    /// `clone3` or `fork`.
    pub way: &'static str,
    done: bool,
}

impl Kept {
    /// The fd that becomes readable when an event is ready (or the
    /// subreaper is gone).
    #[must_use]
    pub fn events_fd(&self) -> BorrowedFd<'_> {
        self.events.as_fd()
    }

    /// The next event, if a whole one is ready (never blocks). End of file
    /// before [`Event::Done`] is an error (the subreaper was killed).
    pub fn try_event(&mut self) -> io::Result<Option<Event>> {
        let mut buffer = [0u8; RECORD];
        loop {
            let want = RECORD - self.partial.len();
            match (&self.events).read(&mut buffer[..want]) {
                Ok(0) => return Err(io::Error::other("the step's subreaper exited before reporting its end")),
                Ok(n) => {
                    self.partial.extend_from_slice(&buffer[..n]);
                    if self.partial.len() == RECORD {
                        let record = std::mem::take(&mut self.partial);
                        let event = decode(&record)?;
                        self.done |= matches!(event, Event::Done { .. });
                        return Ok(Some(event));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The next event, blocking until there is one.
    pub fn next_event(&mut self) -> io::Result<Event> {
        loop {
            if let Some(event) = self.try_event()? {
                return Ok(event);
            }
            let mut fds = [rustix::event::PollFd::new(&self.events, rustix::event::PollFlags::IN)];
            match rustix::event::poll(&mut fds, None) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Tells the subreaper the command's first process has exited: kill
    /// what is left (`wait_all`: wait for it instead). Idempotent.
    pub fn end(&mut self, wait_all: bool) {
        if let Some(mut control) = self.control.take() {
            // EPIPE: the subreaper is gone already; its events say so.
            let _ = control.write_all(&[if wait_all { WAIT_ALL } else { KILL }]);
        }
    }

    /// Sends `signal` to the command's first process while it runs.
    pub fn signal_main(&self, signal: Signal) -> io::Result<()> {
        match &self.pidfd {
            Some(pidfd) => rustix::process::pidfd_send_signal(pidfd, signal).map_err(Into::into),
            // Before Linux 5.3: the subreaper has not reaped it before the
            // caller read its event, so the PID is still its.
            None => rustix::process::kill_process(self.pid, signal).map_err(Into::into),
        }
    }

    /// The subreaper's PID (not the step's: it sits between).
    #[must_use]
    pub fn subreaper_pid(&self) -> Pid {
        self.subreaper
    }

    /// Once the command's first process has exited: what to say if it
    /// could not run the command (not found, not executable, namespace or
    /// cgroup not joined).
    #[must_use]
    pub fn failure_message(&mut self) -> Option<String> {
        let failure = clone3::read_report(self.report.take()?)?;
        Some(match (failure.stage, &self.namespace) {
            (Stage::NetNs, Some(path)) => {
                format!("cannot join the network namespace {}: {}", path.display(), failure.error)
            }
            (Stage::JoinV1, _) => format!("cannot join the step's cgroup v1 hierarchies: {}", failure.error),
            (Stage::JoinCgroup, _) => format!("cannot move the step into its cgroup: {}", failure.error),
            _ => format!("cannot run {}: {}", self.program.to_string_lossy(), failure.error),
        })
    }
}

impl Drop for Kept {
    /// A step dropped before its end: its processes are killed and the
    /// subreaper reaped, so nothing of it outlives its handle.
    fn drop(&mut self) {
        self.end(false);
        if !self.done {
            // Read on until the subreaper is done, so that it never blocks on
            // a full pipe; its end of file ends this too.
            let _ = rustix::fs::fcntl_setfl(&self.events, rustix::fs::OFlags::empty());
            loop {
                match self.next_event() {
                    Ok(Event::Done { .. }) | Err(_) => break,
                    Ok(Event::Reaped { .. }) => {}
                }
            }
        }
        while let Err(rustix::io::Errno::INTR) =
            rustix::process::waitpid(Some(self.subreaper), rustix::process::WaitOptions::empty())
        {}
    }
}

fn decode(record: &[u8]) -> io::Result<Event> {
    let u32_at = |at: usize| record.get(at..at + 4).and_then(|b| b.try_into().ok()).map_or(0, u32::from_ne_bytes);
    let u64_at = |at: usize| record.get(at..at + 8).and_then(|b| b.try_into().ok()).map_or(0, u64::from_ne_bytes);
    let kind = u32_at(0);
    let pid = u32_at(4).cast_signed();
    let status = u32_at(8).cast_signed();
    let flags = u32_at(12);
    let rusage = Rusage {
        user_micros: u64_at(16),
        system_micros: u64_at(24),
        max_rss_kib: u64_at(32),
        in_blocks: u64_at(40),
        out_blocks: u64_at(48),
        voluntary_switches: u64_at(56),
        involuntary_switches: u64_at(64),
        minor_faults: u64_at(72),
        major_faults: u64_at(80),
    };
    let comm = record.get(88..104).unwrap_or_default();
    let extra = u64_at(104);
    match kind {
        REAPED => {
            let pid = Pid::from_raw(pid).ok_or_else(|| io::Error::other("the subreaper reported PID 0"))?;
            let command = (flags & FLAG_COMM != 0).then(|| {
                let end = comm.iter().position(|b| *b == 0).unwrap_or(comm.len());
                String::from_utf8_lossy(&comm[..end]).into_owned()
            });
            Ok(Event::Reaped {
                reaped: Reaped { pid, status: ExitStatus::from_raw(status), rusage },
                command,
                main: flags & FLAG_MAIN != 0,
            })
        }
        DONE => Ok(Event::Done { killed: extra }),
        other => Err(io::Error::other(format!("the subreaper sent an unexpected event (kind {other})"))),
    }
}

/// What the subreaper needs, as raw values it can use without allocating.
struct SubreaperSetup<'a> {
    child: ChildSetup<'a>,
    /// The step's cgroup v2 directory (`O_PATH`) for `CLONE_INTO_CGROUP`.
    cgroup: Option<RawFd>,
    /// Its `cgroup.procs` path, for the fork fallback.
    procs: Option<&'a CString>,
    mode: Mode,
    events: RawFd,
    control: RawFd,
    /// The fds it keeps (its own, the command's setup's).
    keep: &'a [RawFd],
}

/// Starts `command` at `target` under a subreaper of its own (see the
/// module docs). A command that cannot run (not found, not executable) is
/// not an error: its first process exits 127 or 126 and
/// [`Kept::failure_message`] says why.
pub fn spawn(target: Target<'_>, command: &[OsString], mode: Mode) -> Result<Kept, SpawnError> {
    let setup_error = |what: &'static str| move |error: io::Error| SpawnError { what, error };
    let exec = Exec::new(command).map_err(setup_error("cannot start the step"))?;
    let cloexec = rustix::pipe::PipeFlags::CLOEXEC;
    let (events_read, events_write) =
        rustix::pipe::pipe_with(cloexec).map_err(|e| SpawnError { what: "cannot create a pipe", error: e.into() })?;
    let (control_read, control_write) =
        rustix::pipe::pipe_with(cloexec).map_err(|e| SpawnError { what: "cannot create a pipe", error: e.into() })?;
    let (report_read, report_write) =
        rustix::pipe::pipe_with(cloexec).map_err(|e| SpawnError { what: "cannot create a pipe", error: e.into() })?;
    let cgroup = match target.cgroup {
        Some(dir) => Some(
            rustix::fs::open(
                dir,
                rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .map_err(|e| SpawnError { what: "cannot open the step's cgroup", error: e.into() })?,
        ),
        None => None,
    };
    let procs =
        target.cgroup.map(|dir| CString::new(dir.join("cgroup.procs").as_os_str().as_bytes())).transpose().map_err(
            |e| SpawnError { what: "the step's cgroup path", error: io::Error::new(io::ErrorKind::InvalidInput, e) },
        )?;
    let v1: Vec<RawFd> = target.v1_tasks.iter().map(AsRawFd::as_raw_fd).collect();
    let netns = target.netns.map(|fd| fd.as_raw_fd());
    let mut keep: Vec<RawFd> = vec![events_write.as_raw_fd(), control_read.as_raw_fd(), report_write.as_raw_fd()];
    keep.extend(cgroup.as_ref().map(AsRawFd::as_raw_fd));
    keep.extend(netns);
    keep.extend(&v1);
    keep.sort_unstable();
    let setup = SubreaperSetup {
        child: exec.setup(report_write.as_raw_fd(), netns, &v1),
        cgroup: cgroup.as_ref().map(AsRawFd::as_raw_fd),
        procs: procs.as_ref(),
        mode,
        events: events_write.as_raw_fd(),
        control: control_read.as_raw_fd(),
        keep: &keep,
    };

    let mut all = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    let mut previous = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: as in clone3::spawn: every signal is blocked in this thread
    // across the fork (the child keeps them blocked: it never runs a
    // handler of the caller's); the mask is restored right after in the parent.
    let blocked = unsafe {
        libc::sigfillset(all.as_mut_ptr());
        libc::pthread_sigmask(libc::SIG_BLOCK, all.as_ptr(), previous.as_mut_ptr()) == 0
    };
    let args = CloneArgs { exit_signal: libc::SIGCHLD.unsigned_abs().into(), ..CloneArgs::default() };
    // SAFETY: clone3 like fork (no CLONE_VM, no stack), with a valid
    // `clone_args` of the size passed. In the child only `subreaper` runs,
    // which never returns and makes only async-signal-safe calls on memory
    // prepared above (its docs). Without clone3 (before 5.3, or hidden by
    // seccomp) plain `fork`, the same.
    let ret = unsafe {
        let mut ret = libc::syscall(libc::SYS_clone3, std::ptr::from_ref(&args), size_of::<CloneArgs>());
        if ret < 0 {
            ret = libc::c_long::from(libc::fork());
        }
        if ret == 0 {
            subreaper(&setup)
        }
        ret
    };
    let error = io::Error::last_os_error();
    if blocked {
        // SAFETY: `previous` was initialised by the successful pthread_sigmask.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, previous.as_ptr(), std::ptr::null_mut()) };
    }
    drop((events_write, control_read, report_write, cgroup));
    let subreaper = match i32::try_from(ret).ok().and_then(Pid::from_raw) {
        Some(pid) if ret > 0 => pid,
        _ => return Err(SpawnError { what: "cannot fork the step's subreaper", error }),
    };
    let mut events = File::from(events_read);
    // Its first event: the command's process, or why there is none.
    let mut first = [0u8; RECORD];
    let read = events.read_exact(&mut first);
    let reap_subreaper = || {
        let _ = rustix::process::waitpid(Some(subreaper), rustix::process::WaitOptions::empty());
    };
    if let Err(error) = read {
        reap_subreaper();
        return Err(SpawnError { what: "the step's subreaper exited at once", error });
    }
    let word = |at: usize| first.get(at..at + 4).and_then(|b| b.try_into().ok()).map_or(0, u32::from_ne_bytes);
    let extra = first.get(104..112).and_then(|b| b.try_into().ok()).map_or(0, u64::from_ne_bytes);
    let pid = match (word(0), Pid::from_raw(word(4).cast_signed())) {
        (STARTED, Some(pid)) => pid,
        (NOT_STARTED, _) => {
            reap_subreaper();
            let errno = i32::try_from(extra).unwrap_or(libc::EINVAL);
            return Err(SpawnError {
                what: if mode == Mode::Clone3 { "cannot start the step with clone3" } else { "cannot start the step" },
                error: io::Error::from_raw_os_error(errno),
            });
        }
        _ => {
            reap_subreaper();
            return Err(SpawnError { what: "the step's subreaper", error: io::Error::other("unexpected first event") });
        }
    };
    rustix::fs::fcntl_setfl(&events, rustix::fs::OFlags::NONBLOCK)
        .map_err(|e| SpawnError { what: "the subreaper's pipe", error: e.into() })?;
    Ok(Kept {
        subreaper,
        pid,
        pidfd: rustix::process::pidfd_open(pid, PidfdFlags::empty()).ok(),
        events,
        partial: Vec::with_capacity(RECORD),
        control: Some(File::from(control_write)),
        report: Some(File::from(report_read)),
        program: command.first().cloned().unwrap_or_default(),
        namespace: target.netns_path.map(std::path::Path::to_path_buf),
        way: if extra == WAY_FORK { "fork" } else { "clone3" },
        done: false,
    })
}

/// An event built on the stack (see [`RECORD`]).
struct Record([u8; RECORD]);

impl Record {
    fn new(kind: u32) -> Record {
        let mut record = Record([0; RECORD]);
        record.put(0, &kind.to_ne_bytes());
        record
    }

    fn put(&mut self, at: usize, bytes: &[u8]) {
        if let Some(slot) = self.0.get_mut(at..at + bytes.len()) {
            slot.copy_from_slice(bytes);
        }
    }

    /// # Safety
    /// Only in the subreaper (a plain `write`; errors are ignored: a caller
    /// that went away reads nothing more).
    unsafe fn send(&self, fd: RawFd) {
        // SAFETY: a write of a buffer on this stack, of its size.
        unsafe { libc::write(fd, self.0.as_ptr().cast(), RECORD) };
    }
}

fn timeval_micros(time: libc::timeval) -> u64 {
    let seconds = u64::try_from(time.tv_sec).unwrap_or(0);
    seconds.saturating_mul(1_000_000).saturating_add(u64::try_from(time.tv_usec).unwrap_or(0))
}

/// The subreaper's whole life. Never returns.
///
/// # Safety
/// Only in the child of the fork in [`spawn`], with `setup`'s fds open and
/// its pointers valid (copied address space).
unsafe fn subreaper(setup: &SubreaperSetup<'_>) -> ! {
    // SAFETY: async-signal-safe system calls only, on memory prepared before
    // the fork and on this stack (see the module docs).
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        close_cloexec_except(setup.keep);
        let (pid, way) = start_command(setup);
        // Its copy of the command's report pipe: the caller sees end of file
        // at the command's exec.
        libc::close(setup.child.report);
        if pid <= 0 {
            let mut record = Record::new(NOT_STARTED);
            record.put(104, &u64::try_from(-pid).unwrap_or(0).to_ne_bytes());
            record.send(setup.events);
            libc::_exit(0)
        }
        let mut record = Record::new(STARTED);
        record.put(4, &pid.to_ne_bytes());
        record.put(104, &way.to_ne_bytes());
        record.send(setup.events);
        // Until the command's first process exits: reap whatever comes.
        while reap_one(setup.events, pid) != Some(pid) {}
        let mut word = 0u8;
        while libc::read(setup.control, std::ptr::from_mut(&mut word).cast(), 1) < 0
            && *libc::__errno_location() == libc::EINTR
        {}
        let killed = if word == WAIT_ALL {
            while reap_one(setup.events, pid).is_some() {}
            0
        } else {
            kill_all(setup.events, pid)
        };
        let mut done = Record::new(DONE);
        done.put(104, &killed.to_ne_bytes());
        done.send(setup.events);
        libc::_exit(0)
    }
}

/// Starts the command's first process (clone3 into the cgroup, else fork
/// and a write to `cgroup.procs`, as [`Mode`] allows); its PID and way, or
/// minus the errno.
///
/// # Safety
/// Only in the subreaper.
unsafe fn start_command(setup: &SubreaperSetup<'_>) -> (i32, u64) {
    // SAFETY: see `subreaper`; the children run `clone3::child` only.
    unsafe {
        if setup.mode != Mode::Fork {
            let args = CloneArgs {
                flags: if setup.cgroup.is_some() { CLONE_INTO_CGROUP } else { 0 },
                exit_signal: libc::SIGCHLD.unsigned_abs().into(),
                cgroup: setup.cgroup.map_or(0, |fd| fd.unsigned_abs().into()),
                ..CloneArgs::default()
            };
            let ret = libc::syscall(libc::SYS_clone3, std::ptr::from_ref(&args), size_of::<CloneArgs>());
            if ret == 0 {
                clone3::child(&setup.child)
            }
            if ret > 0 {
                return (i32::try_from(ret).unwrap_or(-libc::EOVERFLOW), WAY_CLONE3);
            }
            if setup.mode == Mode::Clone3 {
                return (-*libc::__errno_location(), WAY_CLONE3);
            }
        }
        let procs = match setup.procs {
            Some(path) => {
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return (-*libc::__errno_location(), WAY_FORK);
                }
                Some(fd)
            }
            None => None,
        };
        let pid = libc::fork();
        if pid == 0 {
            if let Some(procs) = procs
                && libc::write(procs, c"0".as_ptr().cast(), 1) != 1
            {
                clone3::fail(setup.child.report, Stage::JoinCgroup, *libc::__errno_location());
            }
            clone3::child(&setup.child)
        }
        let error = *libc::__errno_location();
        if let Some(procs) = procs {
            libc::close(procs);
        }
        if pid < 0 { (-error, WAY_FORK) } else { (pid, WAY_FORK) }
    }
}

/// Reaps one child (blocking), reports it; its PID, `None` when there are
/// no children left.
///
/// # Safety
/// Only in the subreaper.
unsafe fn reap_one(events: RawFd, main: i32) -> Option<i32> {
    // SAFETY: see `subreaper`: waitid, open/read/close of procfs, wait4 and
    // write, on this stack.
    unsafe {
        let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::zeroed();
        // WNOWAIT: it stays a zombie, its /proc/PID/stat readable, until wait4.
        while libc::waitid(libc::P_ALL, 0, info.as_mut_ptr(), libc::WEXITED | libc::WNOWAIT) != 0 {
            if *libc::__errno_location() != libc::EINTR {
                return None;
            }
        }
        let pid = info.assume_init().si_pid();
        let mut record = Record::new(REAPED);
        let mut flags = if pid == main { FLAG_MAIN } else { 0 };
        let mut comm = [0u8; 16];
        if read_comm(pid, &mut comm) {
            flags |= FLAG_COMM;
            record.put(88, &comm);
        }
        let mut status: libc::c_int = 0;
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        while libc::wait4(pid, &raw mut status, 0, usage.as_mut_ptr()) < 0 {
            if *libc::__errno_location() != libc::EINTR {
                return Some(pid);
            }
        }
        let usage = usage.assume_init();
        record.put(4, &pid.to_ne_bytes());
        record.put(8, &status.to_ne_bytes());
        record.put(12, &flags.to_ne_bytes());
        let fields = [
            timeval_micros(usage.ru_utime),
            timeval_micros(usage.ru_stime),
            u64::try_from(usage.ru_maxrss).unwrap_or(0),
            u64::try_from(usage.ru_inblock).unwrap_or(0),
            u64::try_from(usage.ru_oublock).unwrap_or(0),
            u64::try_from(usage.ru_nvcsw).unwrap_or(0),
            u64::try_from(usage.ru_nivcsw).unwrap_or(0),
            u64::try_from(usage.ru_minflt).unwrap_or(0),
            u64::try_from(usage.ru_majflt).unwrap_or(0),
        ];
        for (i, field) in fields.iter().enumerate() {
            record.put(16 + i * 8, &field.to_ne_bytes());
        }
        record.send(events);
        Some(pid)
    }
}

/// Kills every process left (its children, and theirs as they are
/// reparented to it), round after round, reaping each; how many it killed.
///
/// # Safety
/// Only in the subreaper.
unsafe fn kill_all(events: RawFd, main: i32) -> u64 {
    let mut killed = [0i32; REMEMBER_KILLED];
    let mut remembered = 0usize;
    let mut count = 0u64;
    // SAFETY: see `subreaper`; `children` reads procfs into this stack.
    unsafe {
        loop {
            let mut any = false;
            children(|child| {
                any = true;
                if killed[..remembered].contains(&child) {
                    return;
                }
                if libc::kill(child, libc::SIGKILL) == 0 {
                    count += 1;
                    if let Some(slot) = killed.get_mut(remembered) {
                        *slot = child;
                        remembered += 1;
                    }
                }
            });
            if !any || reap_one(events, main).is_none() {
                return count;
            }
        }
    }
}

/// Calls `each` with the PID of every child of this (single-threaded)
/// process, from `/proc/thread-self/children` (proc(5)), zombies included.
///
/// # Safety
/// Only in the subreaper.
unsafe fn children(mut each: impl FnMut(i32)) {
    // SAFETY: open/read/close into a stack buffer.
    unsafe {
        let fd = libc::open(c"/proc/thread-self/children".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return;
        }
        let mut buffer = [0u8; 4096];
        let mut number: i32 = 0;
        let mut digits = false;
        loop {
            let n = libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len());
            if n < 0 && *libc::__errno_location() == libc::EINTR {
                continue;
            }
            let Ok(n) = usize::try_from(n) else { break };
            if n == 0 {
                break;
            }
            for &byte in buffer.get(..n).unwrap_or_default() {
                if byte.is_ascii_digit() {
                    number = number.saturating_mul(10).saturating_add(i32::from(byte - b'0'));
                    digits = true;
                } else if digits {
                    each(number);
                    (number, digits) = (0, false);
                }
            }
        }
        if digits {
            each(number);
        }
        libc::close(fd);
    }
}

/// The command name (`comm`) of this process's zombie child `pid`, from
/// `/proc/PID/stat`, into `comm`; `false` where that file is unreadable or
/// describes another process (a procfs of another pid namespace).
///
/// # Safety
/// Only in the subreaper.
unsafe fn read_comm(pid: i32, comm: &mut [u8; 16]) -> bool {
    let mut path = [0u8; 32];
    let prefix = b"/proc/";
    path[..prefix.len()].copy_from_slice(prefix);
    let mut at = prefix.len();
    let mut digits = [0u8; 10];
    let mut n = 0;
    let mut rest = pid.unsigned_abs();
    loop {
        digits[n] = b'0' + u8::try_from(rest % 10).unwrap_or(0);
        n += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for digit in digits[..n].iter().rev() {
        path[at] = *digit;
        at += 1;
    }
    path[at..at + 5].copy_from_slice(b"/stat");
    // SAFETY: open/read/close of a NUL-terminated path on this stack.
    let (stat, len) = unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let mut stat = [0u8; 512];
        let len = libc::read(fd, stat.as_mut_ptr().cast(), stat.len());
        libc::close(fd);
        (stat, usize::try_from(len).unwrap_or(0))
    };
    let stat = stat.get(..len).unwrap_or_default();
    let (Some(open), Some(close)) = (stat.iter().position(|b| *b == b'('), stat.iter().rposition(|b| *b == b')'))
    else {
        return false;
    };
    // "PID (COMM) STATE PPID ...": its parent must be this process.
    let mut ppid: i32 = 0;
    for &byte in stat.get(close + 4..).unwrap_or_default() {
        if !byte.is_ascii_digit() {
            break;
        }
        ppid = ppid.saturating_mul(10).saturating_add(i32::from(byte - b'0'));
    }
    // SAFETY: getpid is async-signal-safe.
    if ppid != unsafe { libc::getpid() } {
        return false;
    }
    let name = stat.get(open + 1..close).unwrap_or_default();
    let name = name.get(..name.len().min(comm.len())).unwrap_or_default();
    comm[..name.len()].copy_from_slice(name);
    true
}

/// Closes every inherited close-on-exec fd but `keep`: the caller's other
/// steps' pipes must see end-of-file when those steps end. The others stay
/// for the command to inherit. From `/proc/self/fd` with `getdents64`.
///
/// # Safety
/// Only in the subreaper.
unsafe fn close_cloexec_except(keep: &[RawFd]) {
    // SAFETY: open, getdents64 into a stack buffer, fcntl, close.
    unsafe {
        let dir = libc::open(c"/proc/self/fd".as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC);
        if dir < 0 {
            return;
        }
        let mut buffer = [0u8; 4096];
        loop {
            let n = libc::syscall(libc::SYS_getdents64, dir, buffer.as_mut_ptr(), buffer.len());
            let Ok(n) = usize::try_from(n) else { break };
            if n == 0 {
                break;
            }
            // struct linux_dirent64: ino u64, off i64, reclen u16, type u8, name.
            let mut at = 0;
            while at + 19 < n {
                let reclen = usize::from(u16::from_ne_bytes([buffer[at + 16], buffer[at + 17]]));
                if reclen == 0 {
                    break;
                }
                let mut fd: i32 = 0;
                let mut digits = false;
                for &byte in buffer.get(at + 19..at + reclen).unwrap_or_default() {
                    if !byte.is_ascii_digit() {
                        break;
                    }
                    fd = fd.saturating_mul(10).saturating_add(i32::from(byte - b'0'));
                    digits = true;
                }
                if digits && fd != dir && fd > 2 && keep.binary_search(&fd).is_err() {
                    let flags = libc::fcntl(fd, libc::F_GETFD);
                    if flags >= 0 && flags & libc::FD_CLOEXEC != 0 {
                        libc::close(fd);
                    }
                }
                at += reclen;
            }
        }
        libc::close(dir);
    }
}
