//! Starting the step directly in its leaf cgroup with
//! `clone3(CLONE_INTO_CGROUP)` (Linux 5.7+), then `execvp`. The crate's only
//! `unsafe` code, with [`super::fork`] and [`super::reap`]: std and rustix
//! cannot create a process in a cgroup.
//!
//! Why not a write to `cgroup.procs` before exec ([`super::fork`]): migrating a task takes `cgroup_threadgroup_rwsem`
//! for writing, which waits for an RCU grace period unless cgroup2 is
//! mounted with `favordynmods` — measured 10–30 ms on an idle host. A child
//! created with `CLONE_INTO_CGROUP` is attached at fork, under the read side
//! only (<https://man7.org/linux/man-pages/man2/clone3.2.html>,
//! <https://docs.kernel.org/admin-guide/cgroup-v2.html#organizing-processes-and-threads>).
//!
//! Like `fork`, without `CLONE_VM`: the child gets a copy of this (multi-
//! threaded) process with only the calling thread, so until `execvp` it may
//! only make async-signal-safe calls on memory prepared before the clone —
//! no allocation, no locks, no panics. Everything it needs ([`Exec`], the
//! fds) is built beforehand. The same pattern as std's own `clone3` spawn
//! (`library/std/src/sys/process/unix/unix.rs`, `do_fork`).
//!
//! The child reports a failure (joining the network namespace, or `execvp`)
//! through a close-on-exec pipe as `[stage: u32][errno: i32]` and exits
//! with 126 (127 if the command was not found); on success the pipe just
//! closes at exec. This is how std reports exec errors, too.
#![allow(unsafe_code)]
// Every unsafe block says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

use std::ffi::{CString, OsString, c_char};
use std::io::{self, Read};
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use rustix::process::Pid;

use super::script::{SHELL, ShellFallback};
use super::{NOT_EXECUTABLE, NOT_FOUND};

/// `struct clone_args` up to `cgroup` (`CLONE_ARGS_SIZE_VER2`, Linux 5.7),
/// from include/uapi/linux/sched.h; every field is an `__aligned_u64`.
#[repr(C)]
#[derive(Debug, Default)]
pub(super) struct CloneArgs {
    pub(super) flags: u64,
    pub(super) pidfd: u64,
    pub(super) child_tid: u64,
    pub(super) parent_tid: u64,
    pub(super) exit_signal: u64,
    pub(super) stack: u64,
    pub(super) stack_size: u64,
    pub(super) tls: u64,
    pub(super) set_tid: u64,
    pub(super) set_tid_size: u64,
    pub(super) cgroup: u64,
}

/// `CLONE_ARGS_SIZE_VER2` of include/uapi/linux/sched.h.
const _: () = assert!(size_of::<CloneArgs>() == 88);

/// `CLONE_INTO_CGROUP` of include/uapi/linux/sched.h (libc's constant is a
/// `c_int` that overflows, and deprecated for it).
pub(super) const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// `CLONE_VM` and `CLONE_VFORK` of include/uapi/linux/sched.h, as the
/// `u64` flags of `struct clone_args`.
pub(super) const CLONE_VM: u64 = 0x100;
pub(super) const CLONE_VFORK: u64 = 0x4000;

/// `clone3` with `args` (which must have `CLONE_VM | CLONE_VFORK` and no
/// stack) on this thread's stack, as vfork(2) does, running `child(setup)`
/// in the child; the raw return value in the caller (the child's PID, or
/// minus the errno), which resumes once the child has exec'd or exited.
///
/// The point: no copy of this process's page tables and no copy-on-write
/// faults afterwards, so a step starts as fast from a builder of many GiB
/// as from a small one (glibc's `posix_spawn` uses `CLONE_VM | CLONE_VFORK`
/// for the same reason). It must be assembly: the child runs on the part of
/// the stack below the caller's, so it may never return from the function
/// that made the system call (its return would pop the caller's frame,
/// which the caller still needs); here it calls `child`, which never
/// returns, from inside the `asm!` block. Rust keeps nothing below the stack
/// pointer across an `asm!` block that may use the stack (no red zone).
///
/// # Safety
/// `args` must be valid as described; `child` must never return and may
/// only make async-signal-safe calls that write nothing but its own stack
/// and the pipe it reports through (the memory is this process's), with
/// every signal blocked in the calling thread.
#[cfg(target_arch = "x86_64")]
pub(super) unsafe fn vfork_clone3(
    args: &CloneArgs,
    child: unsafe extern "C" fn(*const ChildSetup<'_>) -> !,
    setup: *const ChildSetup<'_>,
) -> isize {
    let ret: isize;
    // SAFETY: the system call reads `args` (valid, of the size passed); the
    // child's path calls `child` with 16-byte alignment and never comes back
    // (`ud2` traps if it did); rcx and r11 are clobbered by `syscall`.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            // The child, on the stack below the suspended caller's: keep
            // clear of anything the caller left just below its pointer,
            // align for the call.
            "sub rsp, 256",
            "and rsp, -16",
            "mov rdi, {setup}",
            "call {child}",
            "ud2",
            "2:",
            child = in(reg) child,
            setup = in(reg) setup,
            inlateout("rax") libc::SYS_clone3 as isize => ret,
            in("rdi") std::ptr::from_ref(args),
            in("rsi") size_of::<CloneArgs>(),
            out("rcx") _,
            out("r11") _,
        );
    }
    ret
}

/// Elsewhere: `ENOSYS`, and the caller clones without `CLONE_VM`.
///
/// # Safety
/// None needed; as the x86-64 one for the signature's sake.
#[cfg(not(target_arch = "x86_64"))]
pub(super) unsafe fn vfork_clone3(
    _args: &CloneArgs,
    _child: unsafe extern "C" fn(*const ChildSetup<'_>) -> !,
    _setup: *const ChildSetup<'_>,
) -> isize {
    -(libc::ENOSYS as isize)
}

/// [`child`] for [`vfork_clone3`].
///
/// # Safety
/// As [`child`], with `setup` valid.
pub(super) unsafe extern "C" fn vfork_child(setup: *const ChildSetup<'_>) -> ! {
    // SAFETY: the caller passes the setup it prepared, alive in the
    // suspended parent's frame.
    unsafe { child(&*setup) }
}

/// A NULL-terminated `argv` of C strings, built before the clone because
/// the child must not allocate.
#[derive(Debug)]
struct Argv {
    /// Owns the strings `pointers` point into (moving the `Vec` does not
    /// move their heap buffers).
    _strings: Vec<CString>,
    pointers: Vec<*const c_char>,
}

impl Argv {
    /// `InvalidInput` if an argument contains a NUL byte.
    fn new(args: &[OsString]) -> io::Result<Argv> {
        let strings = args
            .iter()
            .map(|arg| CString::new(arg.as_bytes()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let pointers = strings.iter().map(|s| s.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
        Ok(Argv { _strings: strings, pointers })
    }
}

/// The command, and the shell command line for it should `execvp` fail with
/// `ENOEXEC` ([`super::script`]), as C strings.
#[derive(Debug)]
pub(super) struct Exec {
    /// `argv[0]` is also the program `execvp` looks up in `PATH`.
    argv: Argv,
    /// `/bin/sh PATH-OF-PROGRAM ARGS...`, if the program was found (not
    /// prepared with glibc, whose execvp does the same itself).
    shell: Option<Argv>,
}

impl Exec {
    /// Prepares `command` (program first); `InvalidInput` if it is empty or
    /// an argument contains a NUL byte.
    pub(super) fn new(command: &[OsString]) -> io::Result<Exec> {
        if command.is_empty() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no command given"));
        }
        // glibc's execvp runs the shell itself: no PATH search on every
        // step start for a fallback it would never reach.
        let shell = if cfg!(target_env = "gnu") {
            None
        } else {
            ShellFallback::for_command(command, std::env::var_os("PATH").as_deref())
        };
        Ok(Exec { argv: Argv::new(command)?, shell: shell.map(|s| Argv::new(&s.argv)).transpose()? })
    }
}

impl Exec {
    /// The child's view of this command: `argv`, the shell fallback's, the shell.
    pub(super) fn setup<'a>(&'a self, report: RawFd, netns: Option<RawFd>, v1_tasks: &'a [RawFd]) -> ChildSetup<'a> {
        ChildSetup {
            report,
            netns,
            v1_tasks,
            argv: self.argv.pointers.as_ptr(),
            shell_argv: self.shell.as_ref().map_or(std::ptr::null(), |shell| shell.pointers.as_ptr()),
            shell: SHELL.as_ptr(),
        }
    }
}

/// What the child was doing when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    /// `setns` into the step's network namespace.
    NetNs = 1,
    /// `execvp` of the command.
    Exec = 2,
    /// Writing `0` to a cgroup v1 `tasks` file.
    JoinV1 = 3,
    /// Writing `0` to the cgroup v2 `cgroup.procs` (the fork fallback).
    JoinCgroup = 4,
}

/// A child that could not run the command (it has exited, or is exiting,
/// with 126 or 127; it still has to be waited for).
#[derive(Debug)]
pub(super) struct ChildFailure {
    /// Where it failed.
    pub stage: Stage,
    /// The errno it saw.
    pub error: io::Error,
}

/// A started child.
#[derive(Debug)]
pub(super) struct Spawned {
    /// Its PID (not yet waited for).
    pub pid: Pid,
    /// Read end of the child's report pipe.
    report: std::fs::File,
}

impl Spawned {
    /// Whether the child failed before running the command. Blocks until it
    /// has exec'd or exited, so call it after waiting for the child: the
    /// parent then never waits for the exec on the way to `waitpid` (one
    /// wake-up less on the step's critical path).
    pub(super) fn failure(self) -> Option<ChildFailure> {
        read_report(self.report)
    }
}

/// What the child needs, as raw values it can use without allocating.
pub(super) struct ChildSetup<'a> {
    pub(super) report: RawFd,
    pub(super) netns: Option<RawFd>,
    /// `tasks` files of the step's cgroup v1 hierarchies, to write `0` to.
    pub(super) v1_tasks: &'a [RawFd],
    pub(super) argv: *const *const c_char,
    /// The shell's `argv` for `ENOEXEC`, or null.
    pub(super) shell_argv: *const *const c_char,
    /// [`SHELL`].
    pub(super) shell: *const c_char,
}

/// Starts `exec` in the cgroup whose directory `cgroup` refers to (a cgroup2
/// directory opened with `O_PATH` or for reading; `None`: this process's
/// own cgroup), after joining the network namespace `netns` if given. Returns right after the clone (see
/// [`Spawned::failure`]); stdin, stdout and stderr are inherited.
///
/// An `Err` means no child was created: `ENOSYS` (no clone3, or a seccomp
/// filter that hides it), `EINVAL` (no `CLONE_INTO_CGROUP`, before 5.7),
/// `EPERM`/`EACCES`, `EBUSY`, ... — the caller may fall back.
pub(super) fn spawn(
    cgroup: Option<BorrowedFd<'_>>,
    v1_tasks: &[RawFd],
    netns: Option<BorrowedFd<'_>>,
    exec: &Exec,
) -> io::Result<Spawned> {
    let (read_end, write_end) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let setup = ChildSetup {
        report: write_end.as_raw_fd(),
        netns: netns.map(|fd| fd.as_raw_fd()),
        v1_tasks,
        argv: exec.argv.pointers.as_ptr(),
        shell_argv: exec.shell.as_ref().map_or(std::ptr::null(), |shell| shell.pointers.as_ptr()),
        shell: SHELL.as_ptr(),
    };
    let args = CloneArgs {
        flags: if cgroup.is_some() { CLONE_INTO_CGROUP } else { 0 },
        exit_signal: libc::SIGCHLD.unsigned_abs().into(),
        cgroup: cgroup.map_or(0, |fd| fd.as_raw_fd().unsigned_abs().into()),
        ..CloneArgs::default()
    };

    let mut all = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    let mut previous = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: `sigfillset` initialises the set it is given; `pthread_sigmask`
    // reads that set and writes the previous mask into `previous`. Blocking
    // every signal in this thread across the clone means no signal handler of
    // stepmon's (signal-hook's) can run in the child before it has reset the
    // dispositions (as glibc's posix_spawn does); the mask is restored right
    // after in the parent and cleared in the child.
    let blocked = unsafe {
        libc::sigfillset(all.as_mut_ptr());
        libc::pthread_sigmask(libc::SIG_BLOCK, all.as_ptr(), previous.as_mut_ptr()) == 0
    };

    // SAFETY: clone3 with a valid, fully initialised `clone_args` of the size
    // passed, no CLONE_VM and no stack: like fork, the child continues here on
    // a copy of this thread's stack in its own address space. In the child
    // (return value 0) only `child` runs, which never returns and only makes
    // async-signal-safe calls on memory prepared before the clone (see its
    // docs). The cgroup fd is open for the duration of the call.
    let ret = unsafe { libc::syscall(libc::SYS_clone3, std::ptr::from_ref(&args), size_of::<CloneArgs>()) };
    if ret == 0 {
        // SAFETY: this is the child of the clone3 above, and `setup`'s fds and
        // pointers are valid in it (copied address space and fd table).
        unsafe { child(&setup) }
    }
    // Read errno before anything else can change it.
    let clone_error = io::Error::last_os_error();
    if blocked {
        // SAFETY: `previous` was initialised by the successful
        // `pthread_sigmask` above.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, previous.as_ptr(), std::ptr::null_mut()) };
    }
    drop(write_end);
    let pid = match i32::try_from(ret).ok().and_then(Pid::from_raw) {
        Some(pid) if ret > 0 => pid,
        _ => return Err(clone_error),
    };
    Ok(Spawned { pid, report: std::fs::File::from(read_end) })
}

/// Reads the child's report: nothing (the pipe closed at exec) or 8 bytes.
pub(super) fn read_report(mut pipe: std::fs::File) -> Option<ChildFailure> {
    let mut report = [0u8; 8];
    let mut got = 0;
    while let Some(rest) = report.get_mut(got..).filter(|rest| !rest.is_empty()) {
        match pipe.read(rest) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // The child exists either way; its exit status will tell.
            Err(_) => return None,
        }
    }
    if got == 0 {
        return None;
    }
    let [s0, s1, s2, s3, e0, e1, e2, e3] = report;
    let stage = match u32::from_ne_bytes([s0, s1, s2, s3]) {
        1 => Stage::NetNs,
        3 => Stage::JoinV1,
        4 => Stage::JoinCgroup,
        _ => Stage::Exec,
    };
    let error = if got == report.len() {
        io::Error::from_raw_os_error(i32::from_ne_bytes([e0, e1, e2, e3]))
    } else {
        io::Error::other("the child's error report was cut short")
    };
    Some(ChildFailure { stage, error })
}

/// The child between clone3 and exec: resets the signal state a new program
/// expects, joins the network namespace, execs. Never returns.
///
/// Only async-signal-safe functions (signal-safety(7): `signal`,
/// `sigprocmask`, `execvp` as glibc and std use it after fork, `execv`,
/// `write`, `_exit`; `setns` is a plain system call), on values prepared
/// before the clone: no allocation, no locks, no panics, no unwinding.
///
/// # Safety
/// Must only be called in the child of `clone3` (without `CLONE_VM`), with
/// `setup`'s fds open and `argv` a NULL-terminated array of C strings.
pub(super) unsafe fn child(setup: &ChildSetup<'_>) -> ! {
    // SAFETY: plain libc calls with valid arguments; see the function docs
    // for why each is allowed here.
    unsafe {
        // stepmon catches SIGINT/SIGTERM/SIGHUP (signal-hook) and ignores
        // SIGPIPE (Rust's runtime); exec would reset the caught ones to the
        // default but keep SIGPIPE ignored. Reset all four, as std's spawn
        // does for SIGPIPE, before signals are unblocked.
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
            libc::signal(signal, libc::SIG_DFL);
        }
        let mut empty = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(empty.as_mut_ptr());
        libc::sigprocmask(libc::SIG_SETMASK, empty.as_ptr(), std::ptr::null_mut());
        if let Some(netns) = setup.netns
            && libc::setns(netns, libc::CLONE_NEWNET) != 0
        {
            fail(setup.report, Stage::NetNs, *libc::__errno_location());
        }
        // Into each cgroup v1 hierarchy: "0" moves the writing thread, this
        // process's only one.
        for &tasks in setup.v1_tasks {
            if libc::write(tasks, c"0".as_ptr().cast(), 1) != 1 {
                fail(setup.report, Stage::JoinV1, *libc::__errno_location());
            }
        }
        libc::execvp(*setup.argv, setup.argv);
        let errno = *libc::__errno_location();
        if errno == libc::ENOEXEC && !setup.shell_argv.is_null() {
            // What glibc's execvp does itself (super::script); reached with
            // musl. Should the shell fail too, the command's ENOEXEC is
            // what the user needs to hear about.
            libc::execv(setup.shell, setup.shell_argv);
        }
        fail(setup.report, Stage::Exec, errno)
    }
}

/// Reports `errno` and the stage to the parent and exits (126, or 127 when
/// exec found no such file, as shells do).
///
/// # Safety
/// Only in the child (see [`child`]).
pub(super) unsafe fn fail(report: RawFd, stage: Stage, errno: i32) -> ! {
    let [s0, s1, s2, s3] = (stage as u32).to_ne_bytes();
    let [e0, e1, e2, e3] = errno.to_ne_bytes();
    let message = [s0, s1, s2, s3, e0, e1, e2, e3];
    let status = if stage == Stage::Exec && errno == libc::ENOENT { NOT_FOUND } else { NOT_EXECUTABLE };
    // SAFETY: `write` of a stack buffer (8 bytes < PIPE_BUF: atomic) to the
    // report pipe, then `_exit`, which runs no atexit handlers and flushes
    // nothing (the parent's stdio buffers must not be written twice).
    unsafe {
        libc::write(report, message.as_ptr().cast(), message.len());
        libc::_exit(status)
    }
}
