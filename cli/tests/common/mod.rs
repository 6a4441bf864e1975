//! Helpers for the tests that run the real `stepmon` binary: spawning it,
//! waiting with a timeout, reading its JSON, and finding run cgroups it left
//! behind. Every check of "nothing left behind" looks only at the run
//! parents named after the stepmon processes a test started
//! (`stepmon-run.<pid>.*`), so tests may run in parallel with each other and
//! with other users of the machine.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use stepmon_testsupport::skip;

pub mod fixtures;
pub mod release;

/// The binary under test.
pub fn stepmon() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stepmon"))
}

/// This process's cgroup v2 directory, where `stepmon run` puts its run
/// parents by default; `None` (after printing `SKIPPED`) without root or
/// cgroup v2.
pub fn live(name: &str) -> Option<PathBuf> {
    if !rustix::process::geteuid().is_root() {
        skip::skip(name, "needs root to create cgroups");
        return None;
    }
    match stepmon_sampler::cgroup::discover::locate() {
        Ok(location) => Some(location.own_dir.components().collect()),
        Err(e) => {
            skip::skip(name, format_args!("no cgroup v2 here: {e}"));
            None
        }
    }
}

/// A Python 3 interpreter (Debian's first), or `None` after printing `SKIPPED`.
pub fn python(name: &str) -> Option<PathBuf> {
    let candidates = [PathBuf::from("/usr/bin/python3"), PathBuf::from("python3")];
    let found = candidates
        .into_iter()
        .find(|p| Command::new(p).arg("-c").arg("pass").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok());
    if found.is_none() {
        skip::skip(name, "no python3 to run the test workload");
    }
    found
}

/// A fresh scratch directory for one test, with a unique name (made with
/// `O_EXCL`, so parallel tests and earlier runs never share one) and removed
/// on drop, also when the test fails. Derefs to its path.
pub struct Scratch(tempfile::TempDir);

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.0.path()
    }
}

/// A [`Scratch`] directory named `stepmon-cli-test-<name>-XXXXXX`.
pub fn scratch(name: &str) -> Scratch {
    Scratch(tempfile::Builder::new().prefix(&format!("stepmon-cli-test-{name}-")).tempdir().unwrap())
}

/// Run parents of the stepmon process `pid` still present under `base`.
pub fn leftovers(base: &Path, pid: u32) -> Vec<PathBuf> {
    let prefix = format!("stepmon-run.{pid}.");
    std::fs::read_dir(base)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

/// Waits for `child` at most `timeout`; kills it and panics on timeout.
pub fn wait_for(child: &mut Child, timeout: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            panic!("stepmon (pid {}) did not exit within {timeout:?}", child.id());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Output of a finished `stepmon` plus its pid (for the leftover check).
pub struct Finished {
    pub pid: u32,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `stepmon ARGS...` to completion (at most 20 s).
pub fn run_stepmon(args: &[&str]) -> Finished {
    run_stepmon_with(&[], args)
}

/// Runs `stepmon ARGS...` with extra environment variables `env` to
/// completion (at most 20 s).
pub fn run_stepmon_with(env: &[(&str, &str)], args: &[&str]) -> Finished {
    let child =
        stepmon().envs(env.iter().copied()).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    // `wait_with_output` drains both pipes; the timeout guards a hung step.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Output { status, stdout, stderr } = rx
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("stepmon {args:?} (pid {pid}) did not finish within 20 s"))
        .unwrap();
    Finished {
        pid,
        status,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// Reads a JSON file.
pub fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// `value[pointer]` as u64, panicking with the pointer if absent.
pub fn u64_at(value: &Value, pointer: &str) -> u64 {
    value.pointer(pointer).and_then(Value::as_u64).unwrap_or_else(|| panic!("no integer at {pointer}"))
}

/// `value[pointer]` as f64, panicking with the pointer if absent.
pub fn f64_at(value: &Value, pointer: &str) -> f64 {
    value.pointer(pointer).and_then(Value::as_f64).unwrap_or_else(|| panic!("no number at {pointer}"))
}

/// Whether process `pid` is gone (no `/proc/<pid>`, or a zombie nobody has
/// reaped yet).
pub fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
    }
}

/// Waits until `pid` is gone, at most `timeout`.
pub fn wait_gone(pid: u32, timeout: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if process_gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    process_gone(pid)
}

/// The process's start time (field 22 of `/proc/<pid>/stat`).
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.split_whitespace().nth(19)?.parse().ok()
}

/// `text` written to `path`, executable (mode 0755): a stand-in program.
pub fn write_executable(path: &Path, text: impl AsRef<[u8]>) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}
