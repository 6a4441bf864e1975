//! Each class of error gets its own hint, checked with the real binary run
//! as `nobody` (through util-linux's `setpriv`), the user a new user is
//! like: an output file it may not write, an input it may not read, a
//! cgroup it may not create. Needs root to change user; prints `SKIPPED
//! <name>: <why>` otherwise.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::Command;

use common::scratch;

/// `stepmon ARGS` as nobody: (exit code, stderr).
fn as_nobody(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_stepmon"))
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn root_or_skip(name: &str) -> bool {
    if !rustix::process::geteuid().is_root() {
        common::skip::skip(name, "needs root to run stepmon as nobody");
        return false;
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        common::skip::skip(name, "no setpriv (util-linux)");
        return false;
    }
    true
}

#[test]
fn each_error_gets_the_hint_of_what_failed() {
    let name = "each_error_gets_the_hint_of_what_failed";
    if !root_or_skip(name) {
        return;
    }
    // A directory of root's, mode 0700, and a file in it of mode 0600:
    // nobody can neither create nor read there.
    use std::os::unix::fs::PermissionsExt as _;
    let dir = scratch("hints");
    std::fs::set_permissions(&*dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let private = dir.join("x.json");
    std::fs::write(&private, "{}").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let private = private.to_str().unwrap();

    // An output file it may not create: the output file's hint, not the cgroup's.
    let (code, stderr) = as_nobody(&["run", "-q", "-o", private, "--", "true"]);
    assert_eq!(code, Some(125), "{stderr}");
    assert!(stderr.contains(&format!("--output {private}: cannot write there: Permission denied")), "{stderr}");
    assert!(stderr.contains("hint: stepmon's user may not write there"), "{stderr}");
    assert!(!stderr.contains("cgroup"), "{stderr}");

    // The same in a directory that does not exist.
    let (code, stderr) = as_nobody(&["run", "-q", "-o", "/not/writable/x.json", "--", "true"]);
    assert_eq!(code, Some(125), "{stderr}");
    assert!(stderr.contains("hint: its directory does not exist"), "{stderr}");
    assert!(!stderr.contains("cgroup"), "{stderr}");

    // A job record it may not open.
    let (code, stderr) = as_nobody(&["run", "-q", "--job", private, "--", "true"]);
    assert_eq!(code, Some(125), "{stderr}");
    assert!(stderr.contains("hint: stepmon's user may not write there"), "{stderr}");

    // An input it may not read: the input's hint.
    let (code, stderr) = as_nobody(&["report", private]);
    assert_ne!(code, Some(0), "{stderr}");
    assert!(stderr.contains("hint: stepmon's user may not read it"), "{stderr}");
    assert!(!stderr.contains("cgroup"), "{stderr}");

    // A cgroup it may not create, required: the delegation hint.
    let (code, stderr) = as_nobody(&["run", "-q", "--require-cgroup", "--", "true"]);
    assert_eq!(code, Some(125), "{stderr}");
    assert!(stderr.contains("hint: a cgroup of the step's own needs root or a delegated subtree"), "{stderr}");
}
