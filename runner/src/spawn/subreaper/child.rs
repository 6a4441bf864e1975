//! The subreaper's own life, between its fork and its `_exit`: start the
//! command, reap what comes, report each over the pipe, kill what is left
//! when told. Async-signal-safe system calls only (see the parent module).
#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

use std::ffi::CString;
use std::os::fd::RawFd;

use super::super::Mode;
use super::super::clone3::{self, CLONE_INTO_CGROUP, CLONE_VFORK, CLONE_VM, ChildSetup, CloneArgs, Stage};
use super::{
    DONE, FLAG_COMM, FLAG_MAIN, NOT_STARTED, REAPED, RECORD, REMEMBER_KILLED, STARTED, WAIT_ALL, WAY_CLONE3, WAY_FORK,
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
/// Only in the child of the fork in [`super::spawn`], with `setup`'s fds open and
/// its pointers valid (copied address space).
pub(super) unsafe fn subreaper(setup: &SubreaperSetup<'_>) -> ! {
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
            let into_cgroup = if setup.cgroup.is_some() { CLONE_INTO_CGROUP } else { 0 };
            let mut args = CloneArgs {
                flags: into_cgroup | CLONE_VM | CLONE_VFORK,
                exit_signal: libc::SIGCHLD.unsigned_abs().into(),
                cgroup: setup.cgroup.map_or(0, |fd| fd.unsigned_abs().into()),
                ..CloneArgs::default()
            };
            // Sharing this process's memory until the exec: this process is
            // a copy of the caller's, and copying it again cost as much as
            // its first copy (per step, with a builder of 1 GiB: tens of ms).
            let ret = clone3::vfork_clone3(&args, clone3::vfork_child, &raw const setup.child);
            if ret > 0 {
                return (i32::try_from(ret).unwrap_or(-libc::EOVERFLOW), WAY_CLONE3);
            }
            // Refused (a seccomp filter, another architecture): as fork.
            args.flags = into_cgroup;
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
        // The raw system call, not glibc's fork(): this process is a copy
        // of a multi-threaded one made without glibc knowing, and fork()'s
        // atfork handlers take locks (malloc's, stdio's) another thread of
        // the caller may have held at the copy — they would never be freed.
        let pid = i32::try_from(libc::syscall(
            libc::SYS_clone,
            libc::c_ulong::from(libc::SIGCHLD.unsigned_abs()),
            0usize,
            0usize,
            0usize,
            0usize,
        ))
        .unwrap_or(-1);
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
