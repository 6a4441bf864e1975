//! Starting the step directly in its leaf cgroup with
//! `clone3(CLONE_INTO_CGROUP)` (Linux 5.7+), then `execvp`. Unsafe code
//! with the rest of the spawn module: std and rustix cannot create a
//! process in a cgroup.
//!
//! Why not a write to `cgroup.procs` before exec (the subreaper's fork
//! fallback): migrating a task takes `cgroup_threadgroup_rwsem`
//! for writing, which waits for an RCU grace period unless cgroup2 is
//! mounted with `favordynmods` (milliseconds a step: benches/README.md,
//! "Figures behind code comments"). A child
//! created with `CLONE_INTO_CGROUP` is attached at fork, under the read side
//! only (<https://man7.org/linux/man-pages/man2/clone3.2.html>,
//! <https://docs.kernel.org/admin-guide/cgroup-v2.html#organizing-processes-and-threads>).
//!
//! The step's subreaper clones with [`clone3_vm`] (shared memory, as
//! `posix_spawn`), or like `fork` without `CLONE_VM` where that is refused
//! (`sys::clone3`). Either way, until its exec the child makes only raw
//! system calls ([`super::sys`]) on memory prepared before the clone — no
//! allocation, no locks, no panics, no `errno`. Everything it needs
//! ([`Exec`]: the arguments, the files to try, the environment; the fds) is
//! built beforehand, as std's own spawn does
//! (`library/std/src/sys/process/unix/unix.rs`).
//!
//! The child reports a failure (joining the network namespace, moving the
//! step's streams onto fds 0–2, taking the ids it is to run with, entering
//! its working directory, or `execvp`) through a close-on-exec pipe as `[stage: u32][errno: i32]` and exits
//! with 126 (127 if the command was not found); on success the pipe just
//! closes at exec. This is how std reports exec errors, too.
#![allow(unsafe_code)]
// Every unsafe block says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

use std::ffi::{CString, OsString, c_char, c_void};
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use super::script::SHELL;
use super::sys;
use super::{Launch, NOT_EXECUTABLE, NOT_FOUND};

/// The clone's arguments ([`sys::CloneArgs`]), for the subreaper's clones too.
pub(super) use super::sys::CloneArgs;

/// `CLONE_INTO_CGROUP` of include/uapi/linux/sched.h (libc's constant is a
/// `c_int` that overflows, and deprecated for it).
pub(super) const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// `CLONE_VM` and `CLONE_VFORK` of include/uapi/linux/sched.h, as the
/// `u64` flags of `struct clone_args`.
pub(super) const CLONE_VM: u64 = 0x100;
pub(super) const CLONE_VFORK: u64 = 0x4000;

/// `clone3` with `args` and `CLONE_VM`, running `entry(arg)` in the child;
/// the raw return value in the caller (the child's PID, or minus the
/// errno). With no stack in `args` and `CLONE_VFORK`, the child runs on
/// this thread's stack as vfork(2) does and the caller resumes once it has
/// exec'd or exited; with a stack of its own, the child runs beside the
/// caller (the step's subreaper).
///
/// The point: no copy of this process's page tables and no copy-on-write
/// faults afterwards, so a step starts as fast from a builder of many GiB
/// as from a small one (glibc's `posix_spawn` uses `CLONE_VM | CLONE_VFORK`
/// for the same reason). It must be assembly: a child on the caller's
/// stack may never return from the function that made the system call (its
/// return would pop the caller's frame, which the caller still needs), and
/// a child on a new stack has no frame to return to; here it calls `entry`,
/// which never returns, from inside the `asm!` block. Rust keeps nothing
/// below the stack pointer across an `asm!` block that may use the stack
/// (no red zone).
///
/// # Safety
/// `args` must be valid as described, a stack in it mapped for as long as
/// the child runs; `entry` must never return and may only make raw system
/// calls ([`super::sys`]) on memory that stays valid meanwhile, writing
/// nothing but its own stack and what its docs name; every signal must be
/// blocked in the calling thread (no handler of the caller's may run in the
/// child).
#[cfg(target_arch = "x86_64")]
pub(super) unsafe fn clone3_vm(
    args: &CloneArgs,
    entry: unsafe extern "C" fn(*const c_void) -> !,
    arg: *const c_void,
) -> isize {
    let ret: isize;
    // SAFETY: the system call reads `args` (valid, of the size passed); the
    // child's path calls `entry` with 16-byte alignment and never comes back
    // (`ud2` traps if it did); rcx and r11 are clobbered by `syscall`.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            // The child: keep clear of anything the caller left just below
            // its stack pointer, align for the call.
            "sub rsp, 256",
            "and rsp, -16",
            "mov rdi, {arg}",
            "call {entry}",
            "ud2",
            "2:",
            entry = in(reg) entry,
            arg = in(reg) arg,
            inlateout("rax") libc::SYS_clone3 as isize => ret,
            in("rdi") std::ptr::from_ref(args),
            in("rsi") size_of::<CloneArgs>(),
            out("rcx") _,
            out("r11") _,
        );
    }
    ret
}

/// Elsewhere: `ENOSYS`, and the caller clones a copy (fork).
///
/// # Safety
/// None needed; as the x86-64 one for the signature's sake.
#[cfg(not(target_arch = "x86_64"))]
pub(super) unsafe fn clone3_vm(
    _args: &CloneArgs,
    _entry: unsafe extern "C" fn(*const c_void) -> !,
    _arg: *const c_void,
) -> isize {
    -(libc::ENOSYS as isize)
}

/// [`child`] as an entry of [`clone3_vm`].
///
/// # Safety
/// As [`child`], with `setup` a valid `ChildSetup`.
pub(super) unsafe extern "C" fn child_entry(setup: *const c_void) -> ! {
    // SAFETY: the caller passes the setup it prepared, alive in the
    // suspended parent's frame.
    unsafe { child(&*setup.cast::<ChildSetup<'_>>()) }
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

/// The command as the child execs it without allocating: its arguments,
/// the files to try in turn (its program looked up in the step's `PATH` as
/// `execvp` does), its environment (this process's unless the step sets its
/// own), its working directory, its fds 0–2, and the shell's command line
/// for a file without a `#!` line ([`super::script`]), all as C strings and
/// raw fds.
///
/// The lookup is done here, before the clone, rather than by `execvp` in the
/// child: the child may share this process's memory ([`clone3_vm`]) and
/// must not touch glibc's `errno` nor read an environment another thread
/// may be changing.
#[derive(Debug)]
pub(super) struct Exec {
    argv: Argv,
    /// `PATH-DIR/program` for each directory of `PATH`, or the program
    /// itself when it has a `/`.
    candidates: Argv,
    /// `NAME=VALUE` of each variable.
    envp: Argv,
    /// `/bin/sh`, a slot for the file, then `argv[1..]`, NULL: the child
    /// writes the file that failed with `ENOEXEC` into the slot.
    shell_argv: Vec<*const c_char>,
    /// The directory to enter before the exec.
    chdir: Option<CString>,
    /// What fds 0, 1 and 2 become (`-1`: kept), each 3 or above.
    stdio: [RawFd; 3],
    /// Copies of the caller's stdio fds that were themselves 0, 1 or 2:
    /// the child moves each source in turn, and one of those would be
    /// overwritten before its own move.
    _moved: Vec<OwnedFd>,
    /// The ids and umask the child takes (`launch.credentials`).
    credentials: Option<crate::action::Credentials>,
    /// Whether the child drops the supplementary groups of this (root)
    /// process: a uid given without groups, as std's spawn does.
    drop_groups: bool,
}

impl Exec {
    /// Prepares `command` (program first) as `launch` says; `InvalidInput`
    /// if it is empty or an argument, variable or the directory contains a
    /// NUL byte.
    pub(super) fn new(command: &[OsString], launch: &Launch<'_>) -> io::Result<Exec> {
        let Some(program) = command.first() else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "no command given"));
        };
        let argv = Argv::new(command)?;
        let candidates: Vec<OsString> = if program.is_empty() {
            Vec::new()
        } else if program.as_bytes().contains(&b'/') {
            vec![program.clone()]
        } else {
            let path = launch.path();
            let path = path.as_deref().unwrap_or(std::ffi::OsStr::new(super::lookup::DEFAULT_PATH));
            std::env::split_paths(path).map(|dir| dir.join(program).into_os_string()).collect()
        };
        let pair = |(name, value): (&OsString, &OsString)| {
            let mut pair = name.clone();
            pair.push("=");
            pair.push(value);
            pair
        };
        let envp: Vec<OsString> = match launch.env {
            Some(env) => env.iter().map(|(name, value)| pair((name, value))).collect(),
            None => std::env::vars_os().map(|(name, value)| pair((&name, &value))).collect(),
        };
        let chdir = launch
            .dir
            .map(|dir| CString::new(dir.as_os_str().as_bytes()))
            .transpose()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let mut moved = Vec::new();
        let mut stdio = [-1; 3];
        for (slot, fd) in stdio.iter_mut().zip(launch.stdio) {
            let Some(fd) = fd else { continue };
            *slot = if fd.as_raw_fd() > 2 {
                fd.as_raw_fd()
            } else {
                let copy = rustix::io::fcntl_dupfd_cloexec(fd, 3)?;
                let raw = copy.as_raw_fd();
                moved.push(copy);
                raw
            };
        }
        let credentials = launch.credentials.cloned();
        let drop_groups = credentials.as_ref().is_some_and(|c| c.uid.is_some() && c.groups.is_none())
            && rustix::process::geteuid().is_root();
        let mut shell_argv = Vec::with_capacity(command.len() + 2);
        shell_argv.push(SHELL.as_ptr());
        shell_argv.push(std::ptr::null());
        shell_argv.extend(argv.pointers.iter().skip(1));
        Ok(Exec {
            argv,
            candidates: Argv::new(&candidates)?,
            envp: Argv::new(&envp)?,
            shell_argv,
            chdir,
            stdio,
            _moved: moved,
            credentials,
            drop_groups,
        })
    }

    /// The child's view of this command (`&mut`: the child writes the shell's file slot).
    pub(super) fn setup<'a>(
        &'a mut self,
        report: RawFd,
        netns: Option<RawFd>,
        v1_tasks: &'a [RawFd],
    ) -> ChildSetup<'a> {
        ChildSetup {
            report,
            netns,
            v1_tasks,
            argv: self.argv.pointers.as_ptr(),
            candidates: self.candidates.pointers.as_ptr(),
            envp: self.envp.pointers.as_ptr(),
            shell_argv: self.shell_argv.as_mut_ptr(),
            chdir: self.chdir.as_ref().map_or(std::ptr::null(), |dir| dir.as_ptr()),
            stdio: self.stdio,
            ids: self.credentials.as_ref().map(|c| ChildIds {
                groups: match (&c.groups, self.drop_groups) {
                    (Some(groups), _) => Some(Groups { list: groups.as_ptr(), len: groups.len(), asked: true }),
                    (None, true) => Some(Groups { list: std::ptr::null(), len: 0, asked: false }),
                    (None, false) => None,
                },
                gid: c.gid,
                uid: c.uid,
                umask: c.umask,
            }),
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
    /// `chdir` into the step's working directory.
    Chdir = 5,
    /// Moving the step's streams onto fds 0, 1 and 2.
    Stdio = 6,
    /// Taking the ids it is to run with (`setgroups`, `setgid`, `setuid`).
    Credentials = 7,
}

/// A child that could not run the command (it has exited, or is exiting,
/// with 126 or 127; it still has to be waited for).
#[derive(Debug)]
pub(super) struct ChildFailure {
    /// Where it failed.
    pub(crate) stage: Stage,
    /// The errno it saw.
    pub(crate) error: io::Error,
}

/// What the child needs, as raw values it can use without allocating.
pub(super) struct ChildSetup<'a> {
    pub(super) report: RawFd,
    pub(super) netns: Option<RawFd>,
    /// `tasks` files of the step's cgroup v1 hierarchies, to write `0` to.
    pub(super) v1_tasks: &'a [RawFd],
    pub(super) argv: *const *const c_char,
    /// The files to exec in turn, NULL-terminated.
    pub(super) candidates: *const *const c_char,
    pub(super) envp: *const *const c_char,
    /// The shell's `argv`, slot 1 to be filled.
    pub(super) shell_argv: *mut *const c_char,
    /// The working directory to enter, or NULL.
    pub(super) chdir: *const c_char,
    /// What fds 0, 1 and 2 become (`-1`: kept); each 3 or above.
    pub(super) stdio: [RawFd; 3],
    /// The ids and umask to take (`None`: this process's).
    pub(super) ids: Option<ChildIds>,
}

/// The ids and umask the child takes before its exec, as raw values
/// (the groups point into [`Exec`]'s list).
#[derive(Debug, Clone, Copy)]
pub(super) struct ChildIds {
    /// The supplementary groups (`None`: kept).
    pub(super) groups: Option<Groups>,
    pub(super) gid: Option<u32>,
    pub(super) uid: Option<u32>,
    pub(super) umask: Option<u32>,
}

/// A list of supplementary groups for `setgroups`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Groups {
    /// Its first id (null when `len` is 0).
    pub(super) list: *const libc::gid_t,
    pub(super) len: usize,
    /// Asked for (a failure is the step's), or only the drop of a root
    /// process's own groups that std's spawn makes too (best effort).
    pub(super) asked: bool,
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
        5 => Stage::Chdir,
        6 => Stage::Stdio,
        7 => Stage::Credentials,
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
/// expects, joins the network namespace and the cgroup v1 hierarchies,
/// moves the step's streams onto fds 0–2, takes the ids it is to run with,
/// enters its working directory, execs. Never returns.
///
/// Raw system calls only ([`super::sys`]: no `errno`, no locks), on values
/// prepared before the clone: no allocation, no panics, no unwinding. The
/// one write outside its stack is the shell's file slot of `setup`, which
/// nobody reads before the child has exec'd or exited.
///
/// # Safety
/// Must only be called in the child of a clone, with `setup`'s fds open and
/// its pointers valid (see [`ChildSetup`]).
pub(super) unsafe fn child(setup: &ChildSetup<'_>) -> ! {
    // stepmon catches SIGINT/SIGTERM/SIGHUP (signal-hook) and ignores
    // SIGPIPE (Rust's runtime); exec would reset the caught ones to the
    // default but keep SIGPIPE ignored. Reset the caught ones before
    // signals are unblocked (a handler must not run in this child), and
    // SIGPIPE as std's spawn does. One that is ignored here was ignored by
    // whoever started stepmon (`nohup`, a CI runner: `Caught::install`
    // leaves those alone) and stays ignored for the step, as it would
    // started directly.
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        if !sys::is_ignored(signal) {
            sys::default_action(signal);
        }
    }
    sys::default_action(libc::SIGPIPE);
    sys::unblock_all();
    if let Some(netns) = setup.netns {
        let ret = sys::setns(netns, libc::CLONE_NEWNET);
        if ret < 0 {
            fail(setup.report, Stage::NetNs, errno(ret));
        }
    }
    // Into each cgroup v1 hierarchy: "0" moves the writing thread, this
    // process's only one.
    for &tasks in setup.v1_tasks {
        // SAFETY: one byte of a static string.
        let ret = unsafe { sys::write(tasks, c"0".as_ptr().cast(), 1) };
        if ret != 1 {
            fail(setup.report, Stage::JoinV1, if ret < 0 { errno(ret) } else { libc::EIO });
        }
    }
    // Each source is 3 or above (`Exec::new`), so no move overwrites a
    // source still to be moved; the copy on 0–2 loses close-on-exec.
    for (target, &source) in (0..).zip(&setup.stdio) {
        if source >= 0 {
            let ret = sys::dup3(source, target);
            if ret < 0 {
                fail(setup.report, Stage::Stdio, errno(ret));
            }
        }
    }
    if let Some(ids) = &setup.ids {
        // SAFETY: a list of `Exec`'s, alive until the exec.
        unsafe { take_ids(setup.report, ids) };
    }
    if !setup.chdir.is_null() {
        // SAFETY: a NUL-terminated path of `Exec`, alive until the exec.
        let ret = unsafe { sys::chdir(setup.chdir.cast()) };
        if ret < 0 {
            fail(setup.report, Stage::Chdir, errno(ret));
        }
    }
    // SAFETY: the arrays are NULL-terminated arrays of C strings (see
    // `Exec`), alive in the suspended parent or in this copy of it.
    unsafe { exec_first(setup) }
}

/// Takes `ids` after every step of the placement that needs this
/// process's rights (the namespace, the cgroups) and before the directory
/// and the exec, which are then checked against them: the groups first,
/// then the gid, then the uid (after it, the others could no longer be
/// changed), as std's spawn orders them. The groups a root process drops
/// without being asked (a uid without groups) are best effort, as std's.
///
/// # Safety
/// As [`child`]; a group list in `ids` valid for its count.
unsafe fn take_ids(report: RawFd, ids: &ChildIds) {
    if let Some(mask) = ids.umask {
        sys::umask(mask);
    }
    if let Some(groups) = ids.groups {
        // SAFETY: as documented.
        let ret = unsafe { sys::setgroups(groups.len, groups.list) };
        if ret < 0 && groups.asked {
            fail(report, Stage::Credentials, errno(ret));
        }
    }
    if let Some(gid) = ids.gid {
        let ret = sys::setgid(gid);
        if ret < 0 {
            fail(report, Stage::Credentials, errno(ret));
        }
    }
    if let Some(uid) = ids.uid {
        let ret = sys::setuid(uid);
        if ret < 0 {
            fail(report, Stage::Credentials, errno(ret));
        }
    }
}

/// `execvp`'s walk over the candidates (glibc's `__execvpe`): past
/// `ENOENT`, `ENOTDIR`, `ESTALE`, `ENODEV`, `ETIMEDOUT` and `EACCES` to the
/// next one, the shell on `ENOEXEC`, any other error at once; `EACCES` if it
/// was seen, else the last error.
///
/// # Safety
/// As [`child`].
unsafe fn exec_first(setup: &ChildSetup<'_>) -> ! {
    let mut denied = false;
    let mut last = libc::ENOENT;
    let mut at = 0;
    // SAFETY: every pointer read is of the NULL-terminated arrays of
    // `setup`, which stay valid until the exec (see `child`).
    unsafe {
        loop {
            let file = *setup.candidates.add(at);
            if file.is_null() {
                break;
            }
            at += 1;
            let ret = sys::execve(file.cast(), setup.argv.cast(), setup.envp.cast());
            last = errno(ret);
            match last {
                libc::EACCES => denied = true,
                libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
                libc::ENOEXEC => {
                    // What glibc's execvp does (super::script). Should the
                    // shell fail too, the command's ENOEXEC is what the user
                    // needs to hear about.
                    *setup.shell_argv.add(1) = file;
                    sys::execve(SHELL.as_ptr().cast(), setup.shell_argv.cast_const().cast(), setup.envp.cast());
                    break;
                }
                _ => break,
            }
        }
    }
    fail(setup.report, Stage::Exec, if denied && last != libc::ENOEXEC { libc::EACCES } else { last })
}

/// The errno of a failed raw system call's return value.
fn errno(ret: isize) -> i32 {
    i32::try_from(-ret).unwrap_or(libc::EINVAL)
}

/// Reports `errno` and the stage to the parent and exits (126, or 127 when
/// exec found no such file, as shells do).
pub(super) fn fail(report: RawFd, stage: Stage, errno: i32) -> ! {
    let [s0, s1, s2, s3] = (stage as u32).to_ne_bytes();
    let [e0, e1, e2, e3] = errno.to_ne_bytes();
    let message = [s0, s1, s2, s3, e0, e1, e2, e3];
    let status = if stage == Stage::Exec && errno == libc::ENOENT { NOT_FOUND } else { NOT_EXECUTABLE };
    // SAFETY: a stack buffer (8 bytes < PIPE_BUF: atomic) to the report
    // pipe; then `exit_group`, which runs no atexit handlers and flushes
    // nothing (the parent's stdio buffers must not be written twice).
    unsafe { sys::write(report, message.as_ptr(), message.len()) };
    sys::exit(status)
}
