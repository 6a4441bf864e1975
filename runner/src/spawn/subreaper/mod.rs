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
//! how many it killed. When that first process was the last of the tree (no
//! child left once it was reaped), its record says so and the subreaper
//! ends at once: the caller says nothing ([`Kept::left_nothing`]). It lives
//! in the caller's cgroup, not the step's, so it is never counted as the
//! step's, and it is no descendant of the step's first process, so the
//! taskstats session does not count it either.
//!
//! It is made with `clone3(CLONE_VM)` on a stack of its own (x86-64): it
//! shares the caller's memory, as a thread would, but is a process of its
//! own (its own fd table, signal mask and children), and it starts the
//! command with `CLONE_VM | CLONE_VFORK` on its stack, as `posix_spawn`
//! does. A copy (fork) made each step pay for the caller's page tables, and
//! the caller for copy-on-write faults while the step ran, more the larger
//! the caller (benches/README.md, "What a large builder costs a step"). Where
//! that clone is refused (another architecture, a seccomp filter) it is a
//! copy, as before. Either way it makes only raw system calls
//! (`spawn::sys`: glibc's `errno` would be the calling thread's) on memory
//! prepared before the clone — no allocation, no locks, no panics — and
//! never returns into Rust. It closes the close-on-exec fds it inherited
//! (other steps' pipes would otherwise never see end-of-file) and keeps the
//! others, which the command inherits as it would from
//! `std::process::Command` (a jobserver's pipe, for one). The step's own
//! pipes ([`super::Launch::stdio`]) are close-on-exec too: the command's
//! child moves its ends onto fds 0–2, and the subreaper's copies go with
//! the rest, so a reader sees end of file when the step's processes are
//! done with them.
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
use std::sync::{Mutex, MutexGuard, PoisonError};

use rustix::process::{Pid, PidfdFlags, Signal};

mod child;
mod protocol;

use super::clone3::{self, CLONE_VM, CloneArgs, Exec};
use super::reap::{Reaped, Rusage};
use super::sys;
use super::{Launch, Mode, SpawnError, Target};
use child::{SubreaperSetup, subreaper, subreaper_entry};
use protocol::{
    DONE, FLAG_ALONE, FLAG_COMM, FLAG_MAIN, KILL, NOT_STARTED, REAPED, RECORD, STARTED, WAIT_ALL, WAY_FORK,
};

/// What the step's subreaper reports.
#[derive(Debug)]
pub(crate) enum Event {
    /// A process of the step was reaped.
    Reaped {
        /// Its PID, status and rusage (with the descendants it waited for).
        reaped: Reaped,
        /// Its command name, read while it was a zombie.
        command: Option<String>,
        /// Whether it is the command's first process.
        main: bool,
        /// The first process, and no other process of the step was left
        /// once it was reaped: the subreaper ends without the caller's word.
        last: bool,
    },
    /// Every process of the step is gone; `killed` of them were killed.
    Done {
        /// Leftovers signalled with SIGKILL.
        killed: u64,
    },
}

/// A step started under its own subreaper.
#[derive(Debug)]
pub(crate) struct Kept {
    subreaper: Pid,
    /// The command's first process (a child of the subreaper).
    pub(crate) pid: Pid,
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
    /// The working directory the command was to enter.
    dir: Option<PathBuf>,
    /// `clone3` or `fork`.
    pub(crate) way: &'static str,
    done: bool,
    /// The step left nothing behind its first process ([`FLAG_ALONE`]).
    left_nothing: bool,
    /// Dropped after the subreaper is reaped (fields drop after `drop`).
    _stack: Option<Stack>,
}

impl Kept {
    /// The fd that becomes readable when an event is ready (or the
    /// subreaper is gone).
    #[must_use]
    pub(crate) fn events_fd(&self) -> BorrowedFd<'_> {
        self.events.as_fd()
    }

    /// The next event, if a whole one is ready (never blocks). End of file
    /// before [`Event::Done`] is an error (the subreaper was killed).
    pub(crate) fn try_event(&mut self) -> io::Result<Option<Event>> {
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
                        if let Event::Reaped { last: true, .. } = event {
                            // It reads no word from the caller: none is written.
                            self.control = None;
                            self.left_nothing = true;
                        }
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
    pub(crate) fn next_event(&mut self) -> io::Result<Event> {
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

    /// Whether the command's first process was the last of the step's
    /// tree: nothing is left to read, kill or wait for.
    #[must_use]
    pub(crate) fn left_nothing(&self) -> bool {
        self.left_nothing
    }

    /// Tells the subreaper the command's first process has exited: kill
    /// what is left (`wait_all`: wait for it instead). Idempotent.
    pub(crate) fn end(&mut self, wait_all: bool) {
        if let Some(mut control) = self.control.take() {
            // EPIPE: the subreaper is gone already; its events say so.
            let _ = control.write_all(&[if wait_all { WAIT_ALL } else { KILL }]);
        }
    }

    /// Sends `signal` to the command's first process while it runs.
    pub(crate) fn signal_main(&self, signal: Signal) -> io::Result<()> {
        match &self.pidfd {
            Some(pidfd) => rustix::process::pidfd_send_signal(pidfd, signal).map_err(Into::into),
            // Before Linux 5.3: the subreaper has not reaped it before the
            // caller read its event, so the PID is still its.
            None => rustix::process::kill_process(self.pid, signal).map_err(Into::into),
        }
    }

    /// The subreaper's PID (not the step's: it sits between).
    #[must_use]
    pub(crate) fn subreaper_pid(&self) -> Pid {
        self.subreaper
    }

    /// Once the command's first process has exited: why it could not run
    /// the command, if it could not (not found, not executable, namespace
    /// or cgroup not joined, working directory not entered, streams not
    /// set up).
    pub(crate) fn failure(&mut self) -> Option<crate::RunError> {
        let failure = clone3::read_report(self.report.take()?)?;
        Some(super::not_started(
            failure.stage,
            failure.error,
            &self.program,
            self.namespace.as_deref(),
            self.dir.as_deref(),
        ))
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
                last: flags & FLAG_ALONE != 0,
            })
        }
        DONE => Ok(Event::Done { killed: extra }),
        other => Err(io::Error::other(format!("the subreaper sent an unexpected event (kind {other})"))),
    }
}

/// Starts `command` at `target`, as `launch` says, under a subreaper of
/// its own (see the module docs). A command that cannot run (not found, not
/// executable, its directory) is not an error: its first process exits 127
/// or 126 and [`Kept::failure`] says why.
pub(crate) fn spawn(
    target: Target<'_>,
    command: &[OsString],
    launch: &Launch<'_>,
    mode: Mode,
) -> Result<Kept, SpawnError> {
    let setup_error = |what: &'static str| move |error: io::Error| SpawnError { what, error };
    let mut exec = Exec::new(command, launch).map_err(setup_error("cannot start the step"))?;
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
    // Sharing this process's memory, on a stack of its own: a copy (fork)
    // cost every step the copy of the caller's page tables and the caller
    // copy-on-write faults for as long as the step ran (benches/README.md,
    // "What a large builder costs a step").
    let stack = Stack::new();
    let ret = match &stack {
        Some(stack) => {
            let args = CloneArgs {
                flags: CLONE_VM,
                exit_signal: libc::SIGCHLD.unsigned_abs().into(),
                stack: stack.base as u64,
                stack_size: stack.len as u64,
                ..CloneArgs::default()
            };
            // SAFETY: signals are blocked in this thread; the stack stays
            // mapped until the subreaper is reaped (it moves into `Kept`,
            // whose drop reaps it, or it is reaped below); `subreaper` makes
            // raw system calls only and reads `setup`, which lives in this
            // frame, only until its first event, which this function waits
            // for before it returns.
            unsafe { clone3::clone3_vm(&args, subreaper_entry, (&raw const setup).cast()) }
        }
        None => -(libc::ENOMEM as isize),
    };
    let ret = if ret >= 0 {
        ret
    } else {
        let args = CloneArgs { exit_signal: libc::SIGCHLD.unsigned_abs().into(), ..CloneArgs::default() };
        // SAFETY: clone3 like fork (no CLONE_VM, no stack), with a valid
        // `clone_args`; where refused (before 5.3, or hidden by seccomp) the
        // legacy clone, the same. In the child only `subreaper` runs, which
        // never returns (its docs).
        unsafe {
            let mut ret = sys::clone3(&raw const args);
            if ret < 0 {
                ret = sys::fork();
            }
            if ret == 0 {
                subreaper(&setup)
            }
            ret
        }
    };
    let error = io::Error::from_raw_os_error(i32::try_from(-ret).unwrap_or(libc::EINVAL));
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
    let nonblocking = rustix::fs::fcntl_setfl(&events, rustix::fs::OFlags::NONBLOCK);
    let kept = Kept {
        subreaper,
        pid,
        pidfd: rustix::process::pidfd_open(pid, PidfdFlags::empty()).ok(),
        events,
        partial: Vec::with_capacity(RECORD),
        control: Some(File::from(control_write)),
        report: Some(File::from(report_read)),
        program: command.first().cloned().unwrap_or_default(),
        namespace: target.netns_path.map(std::path::Path::to_path_buf),
        dir: launch.dir.map(std::path::Path::to_path_buf),
        way: if extra == WAY_FORK { "fork" } else { "clone3" },
        done: false,
        left_nothing: false,
        _stack: stack,
    };
    match nonblocking {
        Ok(()) => Ok(kept),
        // Dropping it kills the step and reaps the subreaper.
        Err(e) => Err(SpawnError { what: "the subreaper's pipe", error: e.into() }),
    }
}

/// The subreaper's stack while it shares the caller's memory: mapped before
/// the clone, given back when dropped, which must be after the subreaper was
/// reaped (a field of [`Kept`], whose drop reaps it first). Its lowest page
/// is a guard page: an overflow kills the subreaper, not the caller.
#[derive(Debug)]
struct Stack {
    base: usize,
    len: usize,
}

/// The stacks of reaped subreapers, for the next steps' (at most
/// [`Stack::SPARE_AT_MOST`]; the mapping and its guard page stay as they
/// were). Unmapping one is a TLB shootdown, an interrupt of each other CPU
/// that runs a thread of this process at that moment (the listener's, the
/// sampler's), which every `stepmon run` paid, measured side by side
/// (benches/README.md, "The code's layout, and fresh pages"). A process
/// that ends unmaps them with the rest of its memory.
static SPARE: Mutex<Vec<usize>> = Mutex::new(Vec::new());

fn spare() -> MutexGuard<'static, Vec<usize>> {
    SPARE.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Stack {
    /// 64 KiB: the subreaper's deepest path (killing leftovers) uses some
    /// 12 KiB, and the command's child runs below it until its exec.
    const LEN: usize = 64 * 1024;
    const GUARD: usize = 4096;
    /// At most this many spare stacks are kept: that many steps of a
    /// builder (`-j4` on a small machine) start without a `mmap` each; the
    /// stacks of more are unmapped.
    const SPARE_AT_MOST: usize = 4;

    fn new() -> Option<Stack> {
        let len = Stack::LEN + Stack::GUARD;
        if let Some(base) = spare().pop() {
            return Some(Stack { base, len });
        }
        // SAFETY: a new private anonymous mapping; nothing else refers to it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        // SAFETY: the lowest page of the mapping just made.
        if unsafe { libc::mprotect(base, Stack::GUARD, libc::PROT_NONE) } != 0 {
            // SAFETY: the mapping just made, which nothing uses (not a
            // `Stack`: without its guard page it is no one's spare).
            unsafe { libc::munmap(base, len) };
            return None;
        }
        Some(Stack { base: base as usize, len })
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        let mut spare = spare();
        if spare.len() < Stack::SPARE_AT_MOST {
            spare.push(self.base);
            return;
        }
        drop(spare);
        // SAFETY: the mapping made in `new`, used by no one any more (see
        // the type's docs).
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reaped_subreapers_stacks_are_kept_for_the_next_steps_up_to_a_bound() {
        let stacks: Vec<Stack> = (0..Stack::SPARE_AT_MOST + 2).filter_map(|_| Stack::new()).collect();
        assert_eq!(stacks.len(), Stack::SPARE_AT_MOST + 2);
        drop(stacks);
        // Other tests' steps take and give back stacks meanwhile: only the
        // bound holds whatever they do.
        let kept = spare().len();
        assert!(kept <= Stack::SPARE_AT_MOST, "{kept} spare stacks kept");
        // A kept stack serves the next step: a command runs on it.
        let command: Vec<OsString> = ["sh", "-c", "exit 3"].iter().map(Into::into).collect();
        for _ in 0..3 {
            let mut kept = spawn(Target::default(), &command, &Launch::default(), Mode::Auto).unwrap();
            let status = loop {
                if let Event::Reaped { reaped, main: true, .. } = kept.next_event().unwrap() {
                    break reaped.status;
                }
            };
            assert_eq!(status.code(), Some(3));
        }
    }
}
