//! Raw system calls for the code that runs between a clone and an exec
//! (the step's subreaper, the command's child): each returns the kernel's
//! value, minus the errno on failure, and writes no `errno`.
//!
//! Why not libc's wrappers: the subreaper shares the caller's memory
//! (`CLONE_VM`, the subreaper's clone) and its thread pointer, so glibc's
//! `errno` there is the calling thread's — a failed `wait4` in the
//! subreaper would change the `errno` a thread of the caller is about to
//! read. On other architectures than x86-64 the subreaper is a copy
//! (fork), and these go through `libc::syscall`.
#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

use std::ffi::c_long;

/// System call `n` with six arguments (unused ones 0).
///
/// # Safety
/// As the system call: pointers among the arguments must be valid for what
/// it reads and writes.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(super) unsafe fn call(n: c_long, a: usize, b: usize, c: usize, d: usize, e: usize, f: usize) -> isize {
    let ret: isize;
    // SAFETY: the x86-64 Linux system call convention (rax, rdi, rsi, rdx,
    // r10, r8, r9; rcx and r11 clobbered); the caller vouches for the
    // arguments.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") n as isize => ret,
            in("rdi") a,
            in("rsi") b,
            in("rdx") c,
            in("r10") d,
            in("r8") e,
            in("r9") f,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// Elsewhere: `libc::syscall`, its errno turned into the return value.
///
/// # Safety
/// As the x86-64 one.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
pub(super) unsafe fn call(n: c_long, a: usize, b: usize, c: usize, d: usize, e: usize, f: usize) -> isize {
    // SAFETY: as documented; errno is this process's own here.
    unsafe {
        let ret = libc::syscall(n, a, b, c, d, e, f);
        if ret < 0 { -(*libc::__errno_location() as isize) } else { ret as isize }
    }
}

/// `write(2)`.
///
/// # Safety
/// `buf` valid for `len` bytes.
pub(super) unsafe fn write(fd: i32, buf: *const u8, len: usize) -> isize {
    // SAFETY: as documented.
    unsafe { call(libc::SYS_write, fd as usize, buf as usize, len, 0, 0, 0) }
}

/// `read(2)`.
///
/// # Safety
/// `buf` valid for writes of `len` bytes.
pub(super) unsafe fn read(fd: i32, buf: *mut u8, len: usize) -> isize {
    // SAFETY: as documented.
    unsafe { call(libc::SYS_read, fd as usize, buf as usize, len, 0, 0, 0) }
}

/// `close(2)`.
pub(super) fn close(fd: i32) -> isize {
    // SAFETY: no pointers.
    unsafe { call(libc::SYS_close, fd as usize, 0, 0, 0, 0, 0) }
}

/// `close_range(first, last, 0)` (Linux 5.9).
pub(super) fn close_range(first: u32, last: u32) -> isize {
    // SAFETY: no pointers.
    unsafe { call(libc::SYS_close_range, first as usize, last as usize, 0, 0, 0, 0) }
}

/// `openat(AT_FDCWD, path, flags)`.
///
/// # Safety
/// `path` NUL-terminated.
pub(super) unsafe fn open(path: *const u8, flags: i32) -> isize {
    // SAFETY: as documented.
    unsafe { call(libc::SYS_openat, libc::AT_FDCWD as usize, path as usize, flags as usize, 0, 0, 0) }
}

/// `getdents64(2)`.
///
/// # Safety
/// `buf` valid for writes of `len` bytes.
pub(super) unsafe fn getdents64(fd: i32, buf: *mut u8, len: usize) -> isize {
    // SAFETY: as documented.
    unsafe { call(libc::SYS_getdents64, fd as usize, buf as usize, len, 0, 0, 0) }
}

/// `fcntl(fd, F_GETFD)`.
pub(super) fn fd_flags(fd: i32) -> isize {
    // SAFETY: no pointers.
    unsafe { call(libc::SYS_fcntl, fd as usize, libc::F_GETFD as usize, 0, 0, 0, 0) }
}

/// `dup3(old, new, 0)`: `new` becomes a copy of `old`, without
/// close-on-exec (`old` and `new` must differ).
pub(super) fn dup3(old: i32, new: i32) -> isize {
    // SAFETY: no pointers.
    unsafe { call(libc::SYS_dup3, old as usize, new as usize, 0, 0, 0, 0) }
}

/// `chdir(2)`.
///
/// # Safety
/// `path` NUL-terminated.
pub(super) unsafe fn chdir(path: *const u8) -> isize {
    // SAFETY: as documented.
    unsafe { call(libc::SYS_chdir, path as usize, 0, 0, 0, 0, 0) }
}

/// `setgroups(2)`: the supplementary groups (`len` ids at `groups`). On
/// 64-bit architectures this and the two below take 32-bit ids (the
/// `*32` calls exist only on 32-bit ones). Raw, they change the calling
/// thread's credentials alone (glibc's wrappers change every thread's):
/// what a child between clone and exec, a process of one thread, needs.
///
/// # Safety
/// `groups` valid for `len` ids (or `len` 0).
pub(super) unsafe fn setgroups(len: usize, groups: *const libc::gid_t) -> isize {
    // SAFETY: as documented.
    unsafe { call(libc::SYS_setgroups, len, groups as usize, 0, 0, 0, 0) }
}

/// `setgid(2)`.
pub(super) fn setgid(gid: u32) -> isize {
    // SAFETY: no pointers.
    unsafe { call(libc::SYS_setgid, gid as usize, 0, 0, 0, 0, 0) }
}

/// `setuid(2)`.
pub(super) fn setuid(uid: u32) -> isize {
    // SAFETY: no pointers.
    unsafe { call(libc::SYS_setuid, uid as usize, 0, 0, 0, 0, 0) }
}

/// `umask(2)` (it cannot fail).
pub(super) fn umask(mask: u32) -> isize {
    // SAFETY: no pointers.
    unsafe { call(libc::SYS_umask, mask as usize, 0, 0, 0, 0, 0) }
}

/// `kill(2)`.
pub(super) fn kill(pid: i32, signal: i32) -> isize {
    // SAFETY: no pointers.
    unsafe { call(libc::SYS_kill, pid as usize, signal as usize, 0, 0, 0, 0) }
}

/// `getpid(2)`.
pub(super) fn getpid() -> i32 {
    // SAFETY: no arguments.
    let pid = unsafe { call(libc::SYS_getpid, 0, 0, 0, 0, 0, 0) };
    i32::try_from(pid).unwrap_or(0)
}

/// `prctl(2)` with one argument.
pub(super) fn prctl(option: i32, arg: usize) -> isize {
    // SAFETY: the options used here take no pointer.
    unsafe { call(libc::SYS_prctl, option as usize, arg, 0, 0, 0, 0) }
}

/// `setns(2)`.
pub(super) fn setns(fd: i32, kind: i32) -> isize {
    // SAFETY: no pointers.
    unsafe { call(libc::SYS_setns, fd as usize, kind as usize, 0, 0, 0, 0) }
}

/// `waitid(2)` without rusage.
///
/// # Safety
/// `info` valid for writes.
pub(super) unsafe fn waitid(kind: u32, id: u32, info: *mut libc::siginfo_t, options: i32) -> isize {
    // SAFETY: as documented.
    unsafe { call(libc::SYS_waitid, kind as usize, id as usize, info as usize, options as usize, 0, 0) }
}

/// `wait4(2)`.
///
/// # Safety
/// `status` and `usage` valid for writes.
pub(super) unsafe fn wait4(pid: i32, status: *mut i32, options: i32, usage: *mut libc::rusage) -> isize {
    // SAFETY: as documented.
    unsafe { call(libc::SYS_wait4, pid as usize, status as usize, options as usize, usage as usize, 0, 0) }
}

/// `execve(2)`.
///
/// # Safety
/// `path` NUL-terminated, `argv` and `envp` NULL-terminated arrays of them.
pub(super) unsafe fn execve(path: *const u8, argv: *const *const u8, envp: *const *const u8) -> isize {
    // SAFETY: as documented.
    unsafe { call(libc::SYS_execve, path as usize, argv as usize, envp as usize, 0, 0, 0) }
}

/// `exit_group(2)` (what `_exit` is): no atexit handlers, no stdio flush.
pub(super) fn exit(status: i32) -> ! {
    loop {
        // SAFETY: no pointers; it does not return.
        unsafe { call(libc::SYS_exit_group, status as usize, 0, 0, 0, 0, 0) };
    }
}

/// `rt_sigaction(signal, SIG_DFL)`: the kernel's `struct sigaction`
/// (handler, flags, restorer, mask), all zero.
pub(super) fn default_action(signal: i32) -> isize {
    let action = [0usize; 4];
    // SAFETY: `action` is a valid kernel sigaction of 8-byte mask; no old
    // action is asked for.
    unsafe { call(libc::SYS_rt_sigaction, signal as usize, action.as_ptr() as usize, 0, 8, 0, 0) }
}

/// `rt_sigaction(signal, NULL, &old)`: whether `signal` is ignored
/// (`SIG_IGN`) in this process now.
pub(super) fn is_ignored(signal: i32) -> bool {
    let mut old = [0usize; 4];
    // SAFETY: `old` is a writable kernel sigaction of 8-byte mask (handler
    // first); no new action is given.
    let ret = unsafe { call(libc::SYS_rt_sigaction, signal as usize, 0, old.as_mut_ptr() as usize, 8, 0, 0) };
    ret == 0 && old[0] == libc::SIG_IGN
}

/// `rt_sigprocmask(SIG_SETMASK, empty)`: every signal unblocked.
pub(super) fn unblock_all() -> isize {
    let empty = 0u64;
    // SAFETY: an 8-byte kernel sigset; no old set is asked for.
    unsafe { call(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK as usize, (&raw const empty) as usize, 0, 8, 0, 0) }
}

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

/// `clone3(2)` without `CLONE_VM` (a copy, as fork).
///
/// # Safety
/// In the child (return value 0) only code that never returns past the
/// caller's frame may run; `args` valid.
pub(super) unsafe fn clone3(args: *const CloneArgs) -> isize {
    // SAFETY: as documented.
    unsafe { call(libc::SYS_clone3, args as usize, size_of::<CloneArgs>(), 0, 0, 0, 0) }
}

/// The legacy `clone(SIGCHLD)`: fork without glibc's atfork handlers.
///
/// # Safety
/// As [`clone3`].
pub(super) unsafe fn fork() -> isize {
    // SAFETY: as documented.
    unsafe { call(libc::SYS_clone, libc::SIGCHLD as usize, 0, 0, 0, 0, 0) }
}
