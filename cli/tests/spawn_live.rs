//! How `stepmon run` starts the step, each way (`STEPMON_SPAWN`): `auto`
//! (clone3(CLONE_INTO_CGROUP), falling back to fork), `clone3`
//! only, `fork` (std's spawn with a `pre_exec` join) only. The step must be in its leaf cgroup and network
//! namespace, with a fresh signal state, and a command that cannot run must
//! end as 127/126 with one message and nothing left behind — the same both
//! ways. Needs root and cgroup v2; prints `SKIPPED <name>: <why>` otherwise.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::{Finished, json, leftovers, live, run_stepmon_with, scratch};
use serde_json::Value;

/// Every way to start the step.
const MODES: [&str; 3] = ["auto", "clone3", "fork"];

/// Whether this host must support clone3(CLONE_INTO_CGROUP): Linux 5.7 or
/// later and no seccomp filter (container runtimes' filters may hide clone3).
fn clone3_expected() -> bool {
    let uname = rustix::system::uname();
    let release = uname.release().to_string_lossy().into_owned();
    let mut numbers = release.split(|c: char| !c.is_ascii_digit()).map(|n| n.parse::<u32>().unwrap_or(0));
    let version = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let no_seccomp = status.lines().any(|l| l.split_whitespace().eq(["Seccomp:", "0"]));
    version >= (5, 7) && no_seccomp
}

/// Runs `stepmon ARGS` with `STEPMON_SPAWN=mode`; checks that the forced
/// modes say which way they took. `None` (after printing `SKIPPED`) only for
/// `clone3` on a host where it may legitimately be missing.
fn run_in(name: &str, mode: &str, args: &[&str]) -> Option<Finished> {
    run_in_env(name, mode, &[], args)
}

/// [`run_in`] with more environment variables for stepmon (and the step).
fn run_in_env(name: &str, mode: &str, env: &[(&str, &str)], args: &[&str]) -> Option<Finished> {
    let env: Vec<(&str, &str)> = std::iter::once(("STEPMON_SPAWN", mode)).chain(env.iter().copied()).collect();
    let run = run_stepmon_with(&env, args);
    if mode == "clone3" && run.status.code() == Some(125) && !clone3_expected() {
        common::skip::skip(name, format_args!("with clone3: this host may lack it: {}", run.stderr.trim()));
        return None;
    }
    let said = match mode {
        "clone3" => run.stderr.contains("stepmon: started the step with clone3"),
        "fork" => run.stderr.contains("stepmon: started the step with fork"),
        _ => !run.stderr.contains("started the step with"),
    };
    assert!(said, "{mode}: {}", run.stderr);
    Some(run)
}

/// stderr without the forced modes' "started the step with" line.
fn messages(run: &Finished) -> Vec<&str> {
    run.stderr.lines().filter(|l| !l.starts_with("stepmon: started the step with")).collect()
}

/// The cgroup v2 path in a `/proc/<pid>/cgroup` text (`0::/path`).
fn unified_path(proc_cgroup: &str) -> &str {
    proc_cgroup.lines().find_map(|l| l.strip_prefix("0::")).unwrap_or_else(|| panic!("no 0:: line in {proc_cgroup:?}"))
}

/// Checks that `path` (from `/proc/<pid>/cgroup`) is the leaf of a run of
/// the stepmon process `pid`: `.../stepmon-run.<pid>.<start>/step`, or the
/// run directory itself where its parent enables no controller (a hybrid
/// host's cgroup2).
fn assert_leaf_of(path: &str, pid: u32, mode: &str) {
    let (parent, leaf) = path.rsplit_once('/').unwrap();
    let run_dir = if leaf == "step" { parent.rsplit('/').next().unwrap() } else { leaf };
    assert!(run_dir.starts_with(&format!("stepmon-run.{pid}.")), "{mode}: {path} is not a run of stepmon {pid}");
}

#[test]
fn the_step_is_in_its_leaf_each_way() {
    let name = "the_step_is_in_its_leaf_each_way";
    let Some(base) = live(name) else { return };
    for mode in MODES {
        // `cat` reads its own cgroup: it is in the leaf while it runs. (That it
        // is there from its first instruction holds by construction: clone3
        // creates it in the leaf; fork's pre_exec hook moves it before exec.)
        let Some(run) = run_in(name, mode, &["run", "-q", "--", "cat", "/proc/self/cgroup"]) else { continue };
        assert!(run.status.success(), "{mode}: {}", run.stderr);
        assert_leaf_of(unified_path(&run.stdout), run.pid, mode);
        assert!(leftovers(&base, run.pid).is_empty(), "{mode}: left {:?}", leftovers(&base, run.pid));
    }
}

#[test]
fn the_step_is_in_its_network_namespace_each_way() {
    let name = "the_step_is_in_its_network_namespace_each_way";
    let Some(base) = live(name) else { return };
    let own = std::fs::read_link("/proc/self/ns/net").unwrap();
    // The step's first process itself ($$), not a child of it.
    let script = "readlink /proc/$$/ns/net; cat /proc/$$/cgroup";
    for mode in MODES {
        let args = ["run", "-q", "--net", "isolated", "--", "sh", "-c", script];
        let Some(run) = run_in(name, mode, &args) else { continue };
        assert!(run.status.success(), "{mode}: {}", run.stderr);
        let namespace = run.stdout.lines().next().unwrap();
        assert!(namespace.starts_with("net:["), "{mode}: {:?}", run.stdout);
        assert_ne!(Path::new(namespace), own, "{mode}: the step shares the test's network namespace");
        assert_leaf_of(unified_path(&run.stdout), run.pid, mode);
        assert!(leftovers(&base, run.pid).is_empty(), "{mode}: left {:?}", leftovers(&base, run.pid));
    }
}

/// Writes an executable (or not) file in `dir`.
fn script(dir: &Path, name: &str, text: &str, mode: u32) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn commands_that_cannot_run_end_the_same_each_way() {
    let name = "commands_that_cannot_run_end_the_same_each_way";
    let Some(base) = live(name) else { return };
    let dir = scratch("spawn-exec");
    let out = dir.join("report.json");
    let out = out.to_str().unwrap();
    // Found by stepmon's own PATH check, but exec fails with ENOENT (the
    // interpreter is missing): 127, as for a missing command.
    let bad_interpreter = script(&dir, "bad-interpreter", "#!/nonexistent/interpreter\n", 0o755);
    // Exists, not executable: EACCES, 126.
    let not_executable = script(&dir, "not-executable", "#!/bin/sh\n", 0o644);
    // Executable without a `#!` line: exec gives ENOEXEC and, as with
    // glibc's execvp(3) and shells, /bin/sh runs it with its arguments —
    // with musl too (whose execvp has no such fallback; the VM tier runs
    // this test as a static musl build): stepmon retries with the shell.
    let no_shebang = script(&dir, "no-shebang", "[ \"$#\" = 1 ] && [ \"$1\" = 'a b' ] || exit 4\nexit 3\n", 0o755);
    let path_with_dir = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    for mode in MODES {
        for (program, code, errno) in [(&bad_interpreter, 127, 2), (&not_executable, 126, 13)] {
            let Some(run) = run_in(name, mode, &["run", "-q", "-o", out, "--", program]) else { continue };
            assert_eq!(run.status.code(), Some(code), "{mode} {program}: {}", run.stderr);
            let lines = messages(&run);
            assert_eq!(lines.len(), 1, "{mode} {program}: one line expected: {:?}", run.stderr);
            assert!(
                lines[0].starts_with("stepmon: cannot run ")
                    && lines[0].contains(program.as_str())
                    && lines[0].contains(&format!("(os error {errno})")),
                "{mode} {program}: {:?}",
                lines[0]
            );
            assert_eq!(json(Path::new(out)).pointer("/stepmon/exitCode"), Some(&Value::from(code)), "{mode}");
            assert!(leftovers(&base, run.pid).is_empty(), "{mode} {program}: left {:?}", leftovers(&base, run.pid));
        }
        for (program, env) in [(no_shebang.as_str(), vec![]), ("no-shebang", vec![("PATH", path_with_dir.as_str())])] {
            let Some(run) = run_in_env(name, mode, &env, &["run", "-q", "--", program, "a b"]) else { continue };
            assert_eq!(run.status.code(), Some(3), "{mode} {program}: {}", run.stderr);
            assert!(messages(&run).is_empty(), "{mode} {program}: {}", run.stderr);
        }
    }
}

/// `(SigBlk, SigIgn)` masks from a `/proc/<pid>/status` text.
fn signal_masks(status: &str) -> (u64, u64) {
    let mask = |key: &str| {
        let line = status.lines().find_map(|l| l.strip_prefix(key)).unwrap_or_else(|| panic!("no {key} in {status}"));
        u64::from_str_radix(line.trim(), 16).unwrap()
    };
    (mask("SigBlk:"), mask("SigIgn:"))
}

#[test]
fn the_step_starts_with_a_fresh_signal_state_each_way() {
    let name = "the_step_starts_with_a_fresh_signal_state_each_way";
    let Some(_) = live(name) else { return };
    // What a command started directly by the test (std's spawn) gets.
    let direct = Command::new("cat").arg("/proc/self/status").output().unwrap();
    let (_, direct_ignored) = signal_masks(&String::from_utf8_lossy(&direct.stdout));
    // stepmon catches SIGHUP, SIGINT and SIGTERM: its step gets them at
    // their default, unless whoever started stepmon ignored them (below).
    let caught: u64 = (1 << (1 - 1)) | (1 << (2 - 1)) | (1 << (15 - 1));
    // glibc's posix_spawn (std's spawn, so the fork way's and this test's)
    // sets its two internal signals, 32 and 33, to SIG_IGN in the child,
    // which exec keeps; clone3 leaves them at their default. Not compared.
    let glibc_internal: u64 = (1 << (32 - 1)) | (1 << (33 - 1));
    let sigpipe: u64 = 1 << (13 - 1);
    let compared = !(caught | glibc_internal);
    for mode in MODES {
        let Some(run) = run_in(name, mode, &["run", "-q", "--", "cat", "/proc/self/status"]) else { continue };
        assert!(run.status.success(), "{mode}: {}", run.stderr);
        let (blocked, ignored) = signal_masks(&run.stdout);
        assert_eq!(blocked, 0, "{mode}: the step starts with signals blocked: {blocked:#x}");
        assert_eq!(ignored & sigpipe, 0, "{mode}: the step starts with SIGPIPE ignored (stepmon's runtime ignores it)");
        assert_eq!(ignored & compared, direct_ignored & compared, "{mode}: ignored signals {ignored:#x}");
        assert_eq!(ignored & caught, direct_ignored & caught, "{mode}: ignored signals {ignored:#x}");
    }
}

#[test]
fn signals_ignored_by_whoever_started_stepmon_stay_ignored_each_way() {
    let name = "signals_ignored_by_whoever_started_stepmon_stay_ignored_each_way";
    let Some(_) = live(name) else { return };
    // `nohup stepmon run -- make`: the hang-up its user shields the build
    // from must neither be forwarded to the step nor be reset for it.
    let hup: u64 = 1 << (1 - 1);
    let int_term: u64 = (1 << (2 - 1)) | (1 << (15 - 1));
    for mode in MODES {
        if mode == "clone3" && !clone3_expected() {
            continue;
        }
        // From the defaults (a test run as a background job inherits
        // SIGINT ignored), then HUP ignored as `nohup` does.
        let out = Command::new("env")
            .args([
                "--default-signal=INT,TERM,HUP",
                "sh",
                "-c",
                r#"trap '' HUP; STEPMON_PID=$$ exec "$0" run -q -- sh -c 'cat /proc/self/status; kill -HUP "$STEPMON_PID" $$; echo survived'"#,
            ])
            .arg(env!("CARGO_BIN_EXE_stepmon"))
            .env("STEPMON_SPAWN", mode)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{mode}: {:?} {stdout} {}", out.status, String::from_utf8_lossy(&out.stderr));
        let (_, ignored) = signal_masks(&stdout);
        assert_eq!(ignored & hup, hup, "{mode}: SIGHUP not ignored in the step: {ignored:#x}");
        assert_eq!(ignored & int_term, 0, "{mode}: SIGINT/SIGTERM ignored in the step: {ignored:#x}");
        assert!(stdout.ends_with("survived\n"), "{mode}: the step or stepmon ended by SIGHUP: {stdout}");
    }
}

#[test]
fn an_unknown_spawn_mode_is_an_error() {
    let run = run_stepmon_with(&[("STEPMON_SPAWN", "posix_spawn")], &["run", "-q", "--", "true"]);
    assert_eq!(run.status.code(), Some(125), "{}", run.stderr);
    assert!(run.stderr.contains("STEPMON_SPAWN=posix_spawn is not one of auto, clone3, fork"), "{}", run.stderr);
}
