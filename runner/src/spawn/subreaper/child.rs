//! The subreaper's own life, between its fork and its `_exit`: start the
//! command, reap what comes, report each over the pipe, kill what is left
//! when told. Raw system calls only ([`super::super::sys`]: it may share
//! the caller's memory and thread pointer, so glibc's `errno` is not its
//! own), on this stack and memory prepared before the clone.
#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

use std::ffi::CString;
use std::os::fd::RawFd;

use super::super::Mode;
use super::super::clone3::{self, CLONE_INTO_CGROUP, CLONE_VFORK, CLONE_VM, ChildSetup, CloneArgs, Stage};
use super::super::sys;
use super::protocol::{
    DONE, FLAG_ALONE, FLAG_COMM, FLAG_MAIN, NOT_STARTED, REAPED, RECORD, REMEMBER_KILLED, STARTED, WAIT_ALL,
    WAY_CLONE3, WAY_FORK,
};

/// What the subreaper needs, as raw values it can use without allocating.
pub(super) struct SubreaperSetup<'a> {
    pub(super) child: ChildSetup<'a>,
    /// The step's cgroup v2 directory (`O_PATH`) for `CLONE_INTO_CGROUP`.
    pub(super) cgroup: Option<RawFd>,
    /// Its `cgroup.procs` path, for the fork fallback.
    pub(super) procs: Option<&'a CString>,
    pub(super) mode: Mode,
    pub(super) events: RawFd,
    pub(super) control: RawFd,
    /// The fds it keeps (its own, the command's setup's).
    pub(super) keep: &'a [RawFd],
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

    /// A plain `write`; errors are ignored: a caller that went away reads
    /// nothing more.
    fn send(&self, fd: RawFd) {
        // SAFETY: a write of a buffer on this stack, of its size.
        unsafe { sys::write(fd, self.0.as_ptr(), RECORD) };
    }
}

fn timeval_micros(time: libc::timeval) -> u64 {
    let seconds = u64::try_from(time.tv_sec).unwrap_or(0);
    seconds.saturating_mul(1_000_000).saturating_add(u64::try_from(time.tv_usec).unwrap_or(0))
}

/// The subreaper's whole life. Never returns.
///
/// Once it has sent its first event, it touches nothing of `setup` any
/// more (the fds it needs are copied onto its stack first): the caller's
/// `spawn` returns after that event, and `setup` lives in its frame.
///
/// # Safety
/// Only in the child of the clone in [`super::spawn`], with `setup`'s fds
/// open and its pointers valid until its first event.
pub(super) unsafe fn subreaper(setup: &SubreaperSetup<'_>) -> ! {
    let (events, control) = (setup.events, setup.control);
    sys::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
    // SAFETY: `setup` is valid until the first event (see above).
    let (pid, way) = unsafe { start_command(setup) };
    // The command has what it inherits: from here on this process needs its
    // two pipes alone. The rest goes (its copy of the command's report
    // pipe, so that the caller sees end of file at the command's exec; the
    // caller's other steps' pipes, which must see end of file when those
    // steps end; the caller's files): three `close_range` calls where a walk
    // of /proc/self/fd cost each step a getdents and a close per fd.
    if !close_all_but(events, control) {
        close_cloexec_except(setup.keep);
        sys::close(setup.child.report);
    }
    if pid <= 0 {
        let mut record = Record::new(NOT_STARTED);
        record.put(104, &u64::try_from(-pid).unwrap_or(0).to_ne_bytes());
        record.send(events);
        sys::exit(0)
    }
    let mut record = Record::new(STARTED);
    record.put(4, &pid.to_ne_bytes());
    record.put(104, &way.to_ne_bytes());
    record.send(events);
    // Until the command's first process exits: reap whatever comes.
    let last = loop {
        if let Some((reaped, last)) = reap_one(events, pid)
            && reaped == pid
        {
            break last;
        }
    };
    if last {
        // Nothing is left (its record said so): no word to wait for.
        let mut done = Record::new(DONE);
        done.put(104, &0u64.to_ne_bytes());
        done.send(events);
        sys::exit(0)
    }
    let mut word = 0u8;
    // SAFETY: one byte into this stack.
    while unsafe { sys::read(control, &raw mut word, 1) } == -(libc::EINTR as isize) {}
    let killed = if word == WAIT_ALL {
        while reap_one(events, pid).is_some() {}
        0
    } else {
        kill_all(events, pid)
    };
    let mut done = Record::new(DONE);
    done.put(104, &killed.to_ne_bytes());
    done.send(events);
    sys::exit(0)
}

/// Starts the command's first process (clone3 into the cgroup, else fork
/// and a write to `cgroup.procs`, as [`Mode`] allows); its PID and way, or
/// minus the errno.
///
/// # Safety
/// Only in the subreaper, `setup` valid.
unsafe fn start_command(setup: &SubreaperSetup<'_>) -> (i32, u64) {
    let pid = |ret: isize| i32::try_from(ret).unwrap_or(-libc::EOVERFLOW);
    if setup.mode != Mode::Fork {
        let into_cgroup = if setup.cgroup.is_some() { CLONE_INTO_CGROUP } else { 0 };
        let mut args = CloneArgs {
            flags: into_cgroup | CLONE_VM | CLONE_VFORK,
            exit_signal: libc::SIGCHLD.unsigned_abs().into(),
            cgroup: setup.cgroup.map_or(0, |fd| fd.unsigned_abs().into()),
            ..CloneArgs::default()
        };
        // Sharing the memory until the exec, on this stack: a copy of the
        // caller's memory cost each step more, the larger the builder
        // (benches/README.md, "What a large builder costs a step").
        // SAFETY: no stack given and CLONE_VFORK; signals are blocked (the
        // subreaper keeps the caller's blocked mask); the child runs
        // `clone3::child`, whose writes are its stack and the shell slot.
        let ret = unsafe { clone3::clone3_vm(&args, clone3::child_entry, (&raw const setup.child).cast()) };
        if ret > 0 {
            return (pid(ret), WAY_CLONE3);
        }
        // Refused (a seccomp filter, another architecture): a copy.
        args.flags = into_cgroup;
        // SAFETY: a copy; in the child only `clone3::child` runs.
        let ret = unsafe { sys::clone3(&raw const args) };
        if ret == 0 {
            // SAFETY: the child of the clone above, `setup` valid in the copy.
            unsafe { clone3::child(&setup.child) }
        }
        if ret > 0 || setup.mode == Mode::Clone3 {
            return (pid(ret), WAY_CLONE3);
        }
    }
    let procs = match setup.procs {
        Some(path) => {
            // SAFETY: a NUL-terminated path.
            let fd = unsafe { sys::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC) };
            if fd < 0 {
                return (pid(fd), WAY_FORK);
            }
            Some(i32::try_from(fd).unwrap_or(-1))
        }
        None => None,
    };
    // The raw system call, not glibc's fork(): this process is a copy of
    // (or shares) a multi-threaded one made without glibc knowing, and
    // fork()'s atfork handlers take locks (malloc's, stdio's) another thread
    // of the caller may hold — they would never be freed.
    // SAFETY: a copy; in the child only the write and `clone3::child` run.
    let ret = unsafe { sys::fork() };
    if ret == 0 {
        if let Some(procs) = procs {
            // SAFETY: one byte of a static string.
            let written = unsafe { sys::write(procs, c"0".as_ptr().cast(), 1) };
            if written != 1 {
                let errno = if written < 0 { i32::try_from(-written).unwrap_or(libc::EIO) } else { libc::EIO };
                clone3::fail(setup.child.report, Stage::JoinCgroup, errno);
            }
        }
        // SAFETY: the child of the fork above, `setup` valid in the copy.
        unsafe { clone3::child(&setup.child) }
    }
    if let Some(procs) = procs {
        sys::close(procs);
    }
    (pid(ret), WAY_FORK)
}

/// Whether this process has no child at all (`ECHILD`), alive or zombie.
fn no_children() -> bool {
    // SAFETY: an all-zero siginfo_t is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is valid for writes.
    let ret = unsafe { sys::waitid(libc::P_ALL, 0, &raw mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT) };
    ret == -(libc::ECHILD as isize)
}

/// Reaps one child (blocking), reports it; its PID and whether it was the
/// first process and the last one left ([`FLAG_ALONE`]), `None` when there
/// are no children left.
fn reap_one(events: RawFd, main: i32) -> Option<(i32, bool)> {
    // SAFETY: an all-zero siginfo_t is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // WNOWAIT: it stays a zombie, its /proc/PID/stat readable, until wait4.
    loop {
        // SAFETY: `info` is valid for writes.
        let ret = unsafe { sys::waitid(libc::P_ALL, 0, &raw mut info, libc::WEXITED | libc::WNOWAIT) };
        if ret >= 0 {
            break;
        }
        if ret != -(libc::EINTR as isize) {
            return None;
        }
    }
    // SAFETY: waitid filled in a child's exit.
    let pid = unsafe { info.si_pid() };
    let mut record = Record::new(REAPED);
    let mut flags = if pid == main { FLAG_MAIN } else { 0 };
    let mut comm = [0u8; 16];
    if read_comm(pid, &mut comm) {
        flags |= FLAG_COMM;
        record.put(88, &comm);
    }
    let mut status: i32 = 0;
    // SAFETY: an all-zero rusage is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: both are valid for writes.
        let ret = unsafe { sys::wait4(pid, &raw mut status, 0, &raw mut usage) };
        if ret >= 0 {
            break;
        }
        if ret != -(libc::EINTR as isize) {
            return Some((pid, false));
        }
    }
    // Once reaped, no child left means no process left of the step: every
    // orphan of its tree was this process's child before its parent's exit
    // was reapable (exit(2) reparents them first).
    let last = pid == main && no_children();
    if last {
        flags |= FLAG_ALONE;
    }
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
    Some((pid, last))
}

/// Kills every process left (its children, and theirs as they are
/// reparented to it), round after round, reaping each; how many it killed.
fn kill_all(events: RawFd, main: i32) -> u64 {
    let mut killed = [0i32; REMEMBER_KILLED];
    let mut remembered = 0usize;
    let mut count = 0u64;
    loop {
        let mut any = false;
        children(|child| {
            any = true;
            if killed[..remembered].contains(&child) {
                return;
            }
            if sys::kill(child, libc::SIGKILL) == 0 {
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

/// Calls `each` with the PID of every child of this (single-threaded)
/// process, from `/proc/thread-self/children` (proc(5)), zombies included.
fn children(mut each: impl FnMut(i32)) {
    // SAFETY: a NUL-terminated static path.
    let fd = unsafe { sys::open(c"/proc/thread-self/children".as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) };
    let Ok(fd) = i32::try_from(fd) else { return };
    if fd < 0 {
        return;
    }
    let mut buffer = [0u8; 4096];
    let mut number: i32 = 0;
    let mut digits = false;
    loop {
        // SAFETY: into this stack buffer, of its size.
        let n = unsafe { sys::read(fd, buffer.as_mut_ptr(), buffer.len()) };
        if n == -(libc::EINTR as isize) {
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
    sys::close(fd);
}

/// The command name (`comm`) of this process's zombie child `pid`, from
/// `/proc/PID/stat`, into `comm`; `false` where that file is unreadable or
/// describes another process (a procfs of another pid namespace).
fn read_comm(pid: i32, comm: &mut [u8; 16]) -> bool {
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
    // SAFETY: a NUL-terminated path on this stack.
    let fd = unsafe { sys::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    let Ok(fd) = i32::try_from(fd) else { return false };
    if fd < 0 {
        return false;
    }
    let mut stat = [0u8; 512];
    // SAFETY: into this stack buffer, of its size.
    let len = unsafe { sys::read(fd, stat.as_mut_ptr(), stat.len()) };
    sys::close(fd);
    let stat = stat.get(..usize::try_from(len).unwrap_or(0)).unwrap_or_default();
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
    if ppid != sys::getpid() {
        return false;
    }
    let name = stat.get(open + 1..close).unwrap_or_default();
    let name = name.get(..name.len().min(comm.len())).unwrap_or_default();
    comm[..name.len()].copy_from_slice(name);
    true
}

/// Closes every fd above stderr but `a` and `b`; `false` where
/// `close_range` is missing (before Linux 5.9) and nothing was closed.
fn close_all_but(a: RawFd, b: RawFd) -> bool {
    let (Ok(low), Ok(high)) = (u32::try_from(a.min(b)), u32::try_from(a.max(b))) else { return false };
    let ranges = [
        (0, low.saturating_sub(1)),
        (low.saturating_add(1), high.saturating_sub(1)),
        (high.saturating_add(1), u32::MAX),
    ];
    for (first, last) in ranges {
        // stdin, stdout and stderr stay (a pipe may be among them).
        let first = first.max(3);
        if first <= last && sys::close_range(first, last) < 0 {
            return false;
        }
    }
    true
}

/// Closes every inherited close-on-exec fd but `keep`: the caller's other
/// steps' pipes must see end-of-file when those steps end. The others stay
/// for the command to inherit. From `/proc/self/fd` with `getdents64`.
fn close_cloexec_except(keep: &[RawFd]) {
    // SAFETY: a NUL-terminated static path.
    let dir =
        unsafe { sys::open(c"/proc/self/fd".as_ptr().cast(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    let Ok(dir) = i32::try_from(dir) else { return };
    if dir < 0 {
        return;
    }
    let mut buffer = [0u8; 4096];
    loop {
        // SAFETY: into this stack buffer, of its size.
        let n = unsafe { sys::getdents64(dir, buffer.as_mut_ptr(), buffer.len()) };
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
                let flags = sys::fd_flags(fd);
                if flags >= 0 && flags & (libc::FD_CLOEXEC as isize) != 0 {
                    sys::close(fd);
                }
            }
            at += reclen;
        }
    }
    sys::close(dir);
}

/// [`subreaper`] as an entry of [`clone3::clone3_vm`].
///
/// # Safety
/// As [`subreaper`], with `setup` a valid `SubreaperSetup`.
pub(super) unsafe extern "C" fn subreaper_entry(setup: *const std::ffi::c_void) -> ! {
    // SAFETY: the caller passes the setup it prepared, alive in its frame
    // until the first event.
    unsafe { subreaper(&*setup.cast::<SubreaperSetup<'_>>()) }
}
