//! The fallback way to start the step where `clone3` is refused (Linux
//! before 5.7, seccomp filters that hide it): std's spawn (fork + exec)
//! with a `pre_exec` hook that joins the step's network namespace and its
//! cgroup — a write of `0` to the cgroup's `cgroup.procs`, which moves the
//! writing process
//! (<https://docs.kernel.org/admin-guide/cgroup-v2.html#organizing-processes-and-threads>)
//! — so the command never runs outside them. The migration waits for an RCU
//! grace period unless cgroup2 is mounted with `favordynmods` (10–30 ms
//! measured), which is why [`super::clone3`] comes first.
//!
//! The hook runs between fork and exec in a copy of this multi-threaded
//! process, so it only makes async-signal-safe system calls (`setns`,
//! `write`) on fds opened before the fork, and allocates nothing. It tells
//! its own failures from exec's through a close-on-exec pipe (one byte: the
//! stage), because std hands back only the errno. The command's
//! environment and stdio are std's (`Command::env_clear`, `envs`, `stdin`,
//! ...); its working directory is entered in the hook rather than with
//! `Command::current_dir`, whose failure std reports as an exec's.
#![allow(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

use std::ffi::{CString, OsString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::process::Command;

use rustix::process::Pid;

use super::Launch;
use super::script::ShellFallback;

/// What failed.
#[derive(Debug)]
pub(super) enum Failure {
    /// Joining the cgroup.
    Join(io::Error),
    /// Joining the network namespace.
    NetNs(io::Error),
    /// Executing the command (not found, not executable).
    Exec(io::Error),
    /// Entering its working directory.
    Chdir(io::Error),
    /// Anything before the fork (pipe, fork itself).
    Setup(io::Error),
}

const STAGE_NETNS: u8 = 1;
const STAGE_JOIN: u8 = 2;
const STAGE_CHDIR: u8 = 3;

/// Starts `command` (program first) as `launch` says, after joining
/// `netns` and writing `0` to `cgroup_procs` in the child; retries with
/// `/bin/sh` on `ENOEXEC` as glibc's `execvp` does ([`super::script`]).
pub(super) fn spawn(
    cgroup_procs: Option<BorrowedFd<'_>>,
    v1_tasks: &[RawFd],
    netns: Option<BorrowedFd<'_>>,
    command: &[OsString],
    launch: &Launch<'_>,
) -> Result<Pid, Failure> {
    match spawn_once(cgroup_procs, v1_tasks, netns, command, launch) {
        Err(Failure::Exec(error)) if error.raw_os_error() == Some(libc::ENOEXEC) => {
            let shell = ShellFallback::for_command(command, launch.path().as_deref());
            match shell {
                // Should the shell fail too, the command's own error is reported.
                Some(shell) => {
                    spawn_once(cgroup_procs, v1_tasks, netns, &shell.argv, launch).map_err(|_| Failure::Exec(error))
                }
                None => Err(Failure::Exec(error)),
            }
        }
        other => other,
    }
}

fn spawn_once(
    cgroup_procs: Option<BorrowedFd<'_>>,
    v1_tasks: &[RawFd],
    netns: Option<BorrowedFd<'_>>,
    command: &[OsString],
    launch: &Launch<'_>,
) -> Result<Pid, Failure> {
    let (program, args) = command.split_first().ok_or_else(|| Failure::Setup(io::Error::other("no command given")))?;
    let (stage_read, stage_write) =
        rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| Failure::Setup(e.into()))?;
    let stage_fd = stage_write.as_raw_fd();
    let procs_fd = cgroup_procs.map(|fd| fd.as_raw_fd());
    let netns_fd = netns.map(|fd| fd.as_raw_fd());
    let v1_fds: Vec<RawFd> = v1_tasks.to_vec();
    let dir = launch
        .dir
        .map(|dir| CString::new(dir.as_os_str().as_bytes()))
        .transpose()
        .map_err(|e| Failure::Setup(io::Error::new(io::ErrorKind::InvalidInput, e)))?;
    let mut child = Command::new(program);
    child.args(args);
    if let Some(env) = launch.env {
        child.env_clear().envs(env.iter().map(|(name, value)| (name, value)));
    }
    for (fd, stream) in launch.stdio.iter().enumerate() {
        let Some(stream) = stream else { continue };
        let copy = std::process::Stdio::from(stream.try_clone_to_owned().map_err(Failure::Setup)?);
        match fd {
            0 => child.stdin(copy),
            1 => child.stdout(copy),
            _ => child.stderr(copy),
        };
    }
    let hook = move || -> io::Result<()> {
        // SAFETY: plain system calls on fds that stay open in the child (the
        // caller holds them across the spawn) and on the directory's path,
        // made before the fork; no allocation, no locks.
        unsafe {
            if let Some(ns) = netns_fd
                && libc::setns(ns, libc::CLONE_NEWNET) != 0
            {
                let error = io::Error::last_os_error();
                libc::write(stage_fd, [STAGE_NETNS].as_ptr().cast(), 1);
                return Err(error);
            }
            if let Some(procs) = procs_fd
                && libc::write(procs, b"0".as_ptr().cast(), 1) != 1
            {
                let error = io::Error::last_os_error();
                libc::write(stage_fd, [STAGE_JOIN].as_ptr().cast(), 1);
                return Err(error);
            }
            // cgroup v1: "0" to `tasks` moves this (only) thread.
            for &tasks in &v1_fds {
                if libc::write(tasks, b"0".as_ptr().cast(), 1) != 1 {
                    let error = io::Error::last_os_error();
                    libc::write(stage_fd, [STAGE_JOIN].as_ptr().cast(), 1);
                    return Err(error);
                }
            }
            if let Some(dir) = &dir
                && libc::chdir(dir.as_ptr()) != 0
            {
                let error = io::Error::last_os_error();
                libc::write(stage_fd, [STAGE_CHDIR].as_ptr().cast(), 1);
                return Err(error);
            }
        }
        Ok(())
    };
    // SAFETY: the hook only makes async-signal-safe calls (see above), as
    // `pre_exec` requires between fork and exec.
    unsafe { child.pre_exec(hook) };
    let result = child.spawn();
    drop(stage_write);
    match result {
        // The `Child` is dropped without waiting: the caller reaps the PID
        // with wait4 (dropping a Child neither kills nor waits for it).
        Ok(child) => Pid::from_raw(i32::try_from(child.id()).unwrap_or(0))
            .ok_or_else(|| Failure::Setup(io::Error::other("the child has no PID"))),
        Err(error) => {
            let mut stage = [0u8; 1];
            let read = rustix::io::read(&stage_read, &mut stage).unwrap_or(0);
            Err(match (read, stage[0]) {
                (1, STAGE_NETNS) => Failure::NetNs(error),
                (1, STAGE_JOIN) => Failure::Join(error),
                (1, STAGE_CHDIR) => Failure::Chdir(error),
                _ if error.raw_os_error().is_some() => Failure::Exec(error),
                _ => Failure::Setup(error),
            })
        }
    }
}
