//! A step run as another user (`StepOptions::uid`, `gid`, `groups`,
//! `umask`) by a root runner, both ways of starting it (`Mode::Clone3`,
//! `Mode::Fork`): the command's process has exactly the ids and umask asked
//! for, no capability left, and is still placed in the step's own cgroup
//! (placed with root's rights, run with the user's); its working directory
//! and its program are checked against the user's ids (taken before
//! either); a uid without groups drops root's own groups, as std's spawn
//! does; and a runner that may not change ids (as `nobody`) ends the step
//! as a command that could not start, saying why.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;

use stepmon_runner::{Finished, Mode, RunErrorKind, Stdio, StepOptions};
use stepmon_testsupport::{as_nobody, skip};

const MODES: [Mode; 2] = [Mode::Clone3, Mode::Fork];
/// A uid and gid that no account of the test host has (the ids need not
/// exist: the kernel takes any number).
const USER: u32 = 61_234;
/// Set in the child process that runs the unprivileged test.
const CHILD: &str = "STEPMON_CREDENTIALS_CHILD";

fn root(test: &str) -> bool {
    rustix::process::geteuid().is_root() || skip::skipped(test, "needs root to change a step's ids")
}

fn run(mut options: StepOptions, mode: Mode) -> Finished {
    options.spawn_mode = mode;
    options.stdout(Stdio::piped());
    stepmon_runner::prepare(options).unwrap().start().unwrap().wait_with_output().unwrap()
}

/// The lines of `/proc/self/status` that hold a process's ids, umask and
/// effective capabilities, as the command sees them.
const STATUS: &str = "grep -E '^(Uid|Gid|Groups|Umask|CapEff):' /proc/self/status; cat /proc/self/cgroup";

#[test]
fn the_command_has_the_ids_and_umask_asked_for_in_the_steps_own_cgroup() {
    if !root("the_command_has_the_ids_and_umask_asked_for_in_the_steps_own_cgroup") {
        return;
    }
    for mode in MODES {
        let mut options = StepOptions::new(["sh", "-c", STATUS]);
        options.uid(USER).gid(USER + 1).groups(&[4242, USER + 1, 100]).umask(0o027);
        let own_cgroup = stepmon_runner::prepare(options.clone()).unwrap().has_own_cgroup();
        let finished = run(options, mode);
        assert_eq!(finished.exit_code, 0, "{mode:?}: {:?}", finished.messages);
        let seen = String::from_utf8(finished.stdout).unwrap();
        let lines: Vec<&str> = seen.lines().collect();
        // Real, effective, saved and filesystem ids; the kernel keeps the
        // groups sorted (groups_sort in kernel/groups.c).
        assert_eq!(
            lines[..5],
            [
                "Umask:\t0027",
                &format!("Uid:\t{USER}\t{USER}\t{USER}\t{USER}"),
                &format!("Gid:\t{0}\t{0}\t{0}\t{0}", USER + 1),
                &format!("Groups:\t100 4242 {} ", USER + 1),
                "CapEff:\t0000000000000000",
            ],
            "{mode:?}: {seen}"
        );
        // Placed with root's rights: in a cgroup of the step's own where
        // this host gives one (every line of /proc/self/cgroup names the
        // step's run directory, v2 and, on a hybrid host, v1).
        if own_cgroup {
            assert!(lines[5..].iter().any(|line| line.contains("/stepmon-run.")), "{mode:?}: {seen}");
        }
    }
}

#[test]
fn a_uid_without_groups_drops_roots_own_groups() {
    if !root("a_uid_without_groups_drops_roots_own_groups") {
        return;
    }
    for mode in MODES {
        let mut options = StepOptions::new(["sh", "-c", STATUS]);
        options.uid(USER);
        let finished = run(options, mode);
        let seen = String::from_utf8(finished.stdout).unwrap();
        // The gid was not asked for: root's own (0) stays.
        assert!(seen.contains(&format!("Uid:\t{USER}\t{USER}\t{USER}\t{USER}\n")), "{mode:?}: {seen}");
        let groups = seen.lines().find_map(|line| line.strip_prefix("Groups:")).unwrap();
        assert!(seen.contains("Gid:\t0\t0\t0\t0\n") && groups.trim().is_empty(), "{mode:?}: {seen}");
    }
}

#[test]
fn the_directory_and_the_program_are_checked_against_the_users_ids() {
    if !root("the_directory_and_the_program_are_checked_against_the_users_ids") {
        return;
    }
    // Root may enter and run these; the user may not.
    let private = tempfile::tempdir().unwrap();
    std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let program = private.path().join("job");
    std::fs::write(&program, "#!/bin/sh\necho ran\n").unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o700)).unwrap();
    let open = tempfile::tempdir().unwrap();
    let script = open.path().join("job");
    std::fs::copy(&program, &script).unwrap();
    std::fs::set_permissions(open.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for mode in MODES {
        let mut options = StepOptions::new(["true"]);
        options.uid(USER).gid(USER).current_dir(private.path());
        let finished = run(options, mode);
        let why = finished.not_started().unwrap_or_else(|| panic!("{mode:?}: entered a 0700 directory of root's"));
        assert_eq!((why.kind(), finished.exit_code), (RunErrorKind::WorkingDirectory, 126), "{mode:?}: {why}");

        let mut options = StepOptions::new([&script]);
        options.uid(USER).gid(USER);
        let finished = run(options, mode);
        let why = finished.not_started().unwrap_or_else(|| panic!("{mode:?}: ran a 0700 program of root's"));
        assert_eq!((why.kind(), finished.exit_code), (RunErrorKind::PermissionDenied, 126), "{mode:?}: {why}");
        assert!(finished.stdout.is_empty());

        // The same as root: both fine (the refusals above were the user's).
        let mut options = StepOptions::new([&script]);
        options.current_dir(private.path());
        let finished = run(options, mode);
        assert_eq!((finished.exit_code, finished.stdout.as_slice()), (0, &b"ran\n"[..]), "{mode:?}");
    }
}

#[test]
fn a_runner_that_may_not_change_ids_says_so() {
    let name = "a_runner_that_may_not_change_ids_says_so";
    if !root(name) {
        return;
    }
    let (stdout, _) = as_nobody::rerun("as_nobody_a_change_of_ids_is_refused", CHILD);
    assert!(stdout.contains("refused as nobody"), "{stdout}");
}

#[test]
#[ignore = "run as nobody by a_runner_that_may_not_change_ids_says_so"]
fn as_nobody_a_change_of_ids_is_refused() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    for mode in MODES {
        let mut options = StepOptions::new(["true"]);
        options.uid(0);
        let finished = run(options, mode);
        let why = finished.not_started().unwrap_or_else(|| panic!("{mode:?}: nobody became root"));
        assert_eq!((why.kind(), finished.exit_code), (RunErrorKind::Spawn, 126), "{mode:?}: {why}");
        assert_eq!(why.to_string(), "cannot give the command its user and group ids", "{mode:?}");
        let source = std::error::Error::source(why).map(ToString::to_string).unwrap_or_default();
        assert!(source.contains("Operation not permitted"), "{mode:?}: {source}");
    }
    println!("refused as nobody");
}
