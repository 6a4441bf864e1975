//! `stepmon __exec`: the fallback way to start the step (see
//! [`crate::spawn`]), for kernels or seccomp filters without
//! `clone3(CLONE_INTO_CGROUP)`. It joins the step's network namespace and
//! cgroup, then `exec`s the command (same PID), so the command never runs
//! outside its cgroup — a pre-exec move without `unsafe`, at the cost of one
//! extra `exec` of this binary (~1 ms) and of the migration itself: writing
//! `cgroup.procs` waits for an RCU grace period unless cgroup2 is mounted
//! with `favordynmods` (measured 10–30 ms when runs are 0.1 s apart).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

use crate::spawn::script::ShellFallback;

/// Exit status when the command cannot be found (as in shells).
pub const NOT_FOUND: i32 = 127;
/// Exit status when the command cannot be executed (as in shells).
pub const NOT_EXECUTABLE: i32 = 126;

/// Arguments of the hidden `__exec` subcommand.
#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    /// The cgroup directory to join.
    #[arg(long)]
    pub cgroup: PathBuf,
    /// A network namespace to join first.
    #[arg(long)]
    pub netns: Option<PathBuf>,
    /// The command and its arguments.
    #[arg(last = true, required = true)]
    pub command: Vec<OsString>,
}

/// Joins and execs; returns only on failure, with the exit status to use.
pub fn exec(args: ExecArgs) -> i32 {
    if let Some(netns) = &args.netns
        && let Err(e) = crate::netns::join(netns)
    {
        eprintln!("stepmon: cannot join the network namespace {}: {e}", netns.display());
        return NOT_EXECUTABLE;
    }
    // "0" moves the writing process (this one) into the cgroup.
    if let Err(e) = std::fs::write(args.cgroup.join("cgroup.procs"), "0") {
        eprintln!("stepmon: cannot move into {}: {e}", args.cgroup.display());
        return NOT_EXECUTABLE;
    }
    let Some((program, rest)) = args.command.split_first() else { return NOT_FOUND };
    let error = Command::new(program).args(rest).exec();
    // No `#!` line and a libc whose execvp does not fall back to the shell
    // (musl): run it with /bin/sh as glibc would (crate::spawn::script).
    if error.raw_os_error() == Some(rustix::io::Errno::NOEXEC.raw_os_error())
        && let Some(shell) = ShellFallback::for_command(&args.command, std::env::var_os("PATH").as_deref())
        && let Some((sh, sh_args)) = shell.argv.split_first()
    {
        // Should the shell fail too, the command's own error is reported.
        let _ = Command::new(sh).args(sh_args).exec();
    }
    let status = if error.kind() == std::io::ErrorKind::NotFound { NOT_FOUND } else { NOT_EXECUTABLE };
    eprintln!("stepmon: cannot run {}: {error}", program.to_string_lossy());
    status
}
