//! Root's rights for the step through passwordless sudo (GitHub's hosted
//! runners have it): the caller hands its ids and environment over
//! ([`super::caller`]) and runs `sudo -n` of `stepmon shell` itself, which
//! places the step with root's rights and runs the script as the caller;
//! the caller waits, passing on the signals a CI runner stops a step with.

use std::ffi::OsStr;
use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::caller::Caller;

/// The hidden option of the root side: where the caller's memfd is.
pub const FROM_CALLER: &str = "--from-caller";

/// `sudo` as `PATH` (`path`) finds it: the first executable file of that
/// name.
pub fn find(path: Option<&OsStr>) -> Option<PathBuf> {
    let path = path?;
    std::env::split_paths(path).map(|dir| dir.join("sudo")).find(|candidate| {
        std::fs::metadata(candidate).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// Whether `sudo` runs a command as root without asking for a password:
/// `sudo -n true` succeeds (`-n`: fail rather than prompt), its output
/// thrown away. Why not, in words, when it does not.
pub fn passwordless(sudo: &Path) -> Result<(), String> {
    let status = Command::new(sudo)
        .args(["-n", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", sudo.display()))?;
    if status.success() {
        return Ok(());
    }
    Err(format!("`{} -n true` {}: no passwordless sudo", sudo.display(), ended(status)))
}

/// How a process ended, in words.
fn ended(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => status.to_string(),
    }
}

/// Runs `sudo -n -- STEPMON shell [SHELL_FLAG] --from-caller PID:FD --
/// FILE` (the caller's ids and environment in this process's memfd
/// `PID:FD`) and waits for it: the status to exit with once the root side
/// took the script over (the script's; 128 + N when sudo was killed by
/// signal N); why not otherwise — then the script has not run.
pub fn run_through(sudo: &Path, caller: &Caller, shell_flag: Option<&str>, file: &Path) -> Result<i32, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find stepmon's own executable for sudo: {e}"))?;
    let handed = caller.hand_over().map_err(|e| format!("cannot hand the environment over to sudo: {e}"))?;
    let forwarding = Forwarding::install().map_err(|e| format!("cannot pass signals on to sudo: {e}"))?;
    let mut sudo_run = Command::new(sudo)
        .args(["-n", "--"])
        .arg(exe)
        .arg("shell")
        .args(shell_flag)
        .args([FROM_CALLER, &handed.handle.to_string(), "--"])
        .arg(file)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", sudo.display()))?;
    let status = forwarding.wait(&mut sudo_run).map_err(|e| format!("cannot wait for sudo: {e}"))?;
    if !handed.taken() {
        return Err(format!("`{} -n` of stepmon {} before it started the script", sudo.display(), ended(status)));
    }
    Ok(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

/// The signals a CI runner stops a step with (GitHub's: SIGINT, then
/// SIGTERM), caught from [`Forwarding::install`] on and sent to sudo, which
/// relays them to the root side (sudo(8), "Signal handling"); SIGCHLD wakes
/// the wait when sudo ends.
struct Forwarding {
    flags: Vec<(i32, Arc<AtomicBool>)>,
    /// Read end of the self-pipe each caught signal writes a byte to.
    wake: UnixStream,
}

impl Forwarding {
    fn install() -> std::io::Result<Forwarding> {
        use signal_hook::consts::{SIGCHLD, SIGHUP, SIGINT, SIGTERM};
        let (wake, write) = UnixStream::pair()?;
        wake.set_nonblocking(true)?;
        write.set_nonblocking(true)?;
        let ignored = ignored_signals();
        let mut flags = Vec::new();
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            // One ignored by whoever started stepmon (`nohup`) stays
            // ignored, for sudo and the script, as `stepmon run` keeps it.
            if ignored & (1 << (signal - 1)) != 0 {
                continue;
            }
            let flag = Arc::new(AtomicBool::new(false));
            signal_hook::flag::register(signal, Arc::clone(&flag))?;
            signal_hook::low_level::pipe::register(signal, write.try_clone()?)?;
            flags.push((signal, flag));
        }
        signal_hook::low_level::pipe::register(SIGCHLD, write)?;
        Ok(Forwarding { flags, wake })
    }

    /// Waits for `child`, sending it each signal caught meanwhile (an
    /// unreaped child keeps its PID: the signal cannot reach another
    /// process).
    fn wait(&self, child: &mut Child) -> std::io::Result<ExitStatus> {
        use rustix::event::{PollFd, PollFlags, poll};
        let pid = rustix::process::Pid::from_child(child);
        loop {
            if let Some(status) = child.try_wait()? {
                return Ok(status);
            }
            let mut fds = [PollFd::new(&self.wake, PollFlags::IN)];
            match poll(&mut fds, None) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
            let mut drain = [0u8; 64];
            while matches!((&self.wake).read(&mut drain), Ok(n) if n > 0) {}
            for (signal, flag) in &self.flags {
                if flag.swap(false, Ordering::SeqCst)
                    && let Some(signal) = rustix::process::Signal::from_named_raw(*signal)
                {
                    let _ = rustix::process::kill_process(pid, signal);
                }
            }
        }
    }
}

/// The signals this process ignores: the `SigIgn` mask of
/// /proc/self/status (bit N-1 for signal N, proc_pid_status(5)); none
/// where it cannot be read.
fn ignored_signals() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sudo_is_found_as_path_finds_it() {
        let dir = tempfile::tempdir().unwrap();
        let (plain, exec) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&plain).unwrap();
        std::fs::create_dir_all(&exec).unwrap();
        std::fs::write(plain.join("sudo"), "").unwrap();
        std::fs::write(exec.join("sudo"), "").unwrap();
        std::fs::set_permissions(exec.join("sudo"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([&plain, &exec]).unwrap();
        assert_eq!(find(Some(&path)), Some(exec.join("sudo")));
        assert_eq!(find(Some(plain.as_os_str())), None);
        assert_eq!(find(None), None);
    }

    #[test]
    fn the_ignored_signals_are_the_kernels_mask() {
        // Rust's runtime ignores SIGPIPE (in the test harness too); no one
        // here ignores SIGTERM.
        let ignored = ignored_signals();
        let bit = |signal: i32| ignored & (1 << (signal - 1)) != 0;
        assert!(bit(signal_hook::consts::SIGPIPE) && !bit(signal_hook::consts::SIGTERM), "{ignored:x}");
    }
}
