//! Running one ignored test of this test binary again as `nobody`: how a
//! root test proves its unprivileged half on the same host (the child sees
//! `child_env` set, so that it knows it is the child)
//! (`use stepmon_testsupport::as_nobody;`).

use std::os::unix::process::CommandExt as _;
use std::process::Command;

/// The uid and gid of `nobody` and `nogroup` on Debian.
pub const NOBODY: u32 = 65534;

/// Runs the ignored test `test` of this binary alone as `nobody`, with
/// `child_env=1`; its stdout and stderr. Panics when it did not pass.
pub fn rerun(test: &str, child_env: &str) -> (String, String) {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", test, "--nocapture", "--test-threads=1"])
        .env(child_env, "1")
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success() && stdout.contains("1 passed"), "as nobody: {}\n{stdout}\n{stderr}", output.status);
    (stdout, stderr)
}
