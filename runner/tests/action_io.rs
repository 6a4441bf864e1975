//! A builder's action as `std::process::Command` describes it — its
//! environment, working directory and streams — through a measured step,
//! each setting on both ways of starting it (`Mode::Clone3`, `Mode::Fork`):
//! variables set, removed and cleared (and the program looked up in the
//! `PATH` given), a working directory (and a missing one), stdin from a
//! file and a pipe, stdout and stderr piped, to a file, to `/dev/null` and
//! inherited, and a MiB on both pipes at once, blocking and async. Then
//! an outside builder's day: 64 steps at once, each with its own variable,
//! directory and piped stdout, awaited on tokio and on smol.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use futures::StreamExt;
use stepmon_runner::{CgroupMode, Finished, Mode, RunError, RunErrorKind, Runner, Stdio, StepOptions};

const MODES: [Mode; 2] = [Mode::Clone3, Mode::Fork];

/// Longer than any of these steps takes on a loaded machine; a step that
/// takes this long is stuck (a pipe nobody reads, a wait that never ends).
const STUCK: Duration = Duration::from_secs(120);

/// One test at a time: the last one checks that no cgroup of this
/// process's steps is left, which another's running step would have.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn step(command: &[&str], mode: Mode) -> StepOptions {
    let mut options = StepOptions::new(command);
    options.spawn_mode = mode;
    options
}

/// `f()` on a thread of its own; a failure of the test if it does not
/// return within [`STUCK`].
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(STUCK).unwrap_or_else(|e| panic!("{what}: no result after {STUCK:?} ({e})"))
}

/// Runs `options` to its end, reading its piped streams.
fn run(options: StepOptions) -> Finished {
    let what = format!("{:?}", options.command);
    within(&what.clone(), move || stepmon_runner::prepare(options)?.start()?.wait_with_output())
        .unwrap_or_else(|e| panic!("{what}: {e}: {:?}", std::error::Error::source(&e)))
}

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap()
}

/// An executable script `name` in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn variables_set_removed_and_cleared() {
    let _one = one_at_a_time();
    let bin = tempfile::tempdir().unwrap();
    script(bin.path(), "stepmon-only-here", "echo found in the given PATH");
    for mode in MODES {
        // Set, on top of this process's environment.
        let mut options = step(&["/usr/bin/env"], mode);
        options.env("STEPMON_ACTION_VAR", "a b=c").stdout(Stdio::piped());
        let env = run(options);
        let lines: Vec<&str> = text(&env.stdout).lines().collect();
        assert!(lines.contains(&"STEPMON_ACTION_VAR=a b=c"), "{mode:?}: {lines:?}");
        assert!(lines.iter().any(|l| l.starts_with("PATH=")), "{mode:?}: this process's PATH is kept");
        // Removed (PATH: the program is then looked up in the default path).
        let mut options = step(&["env"], mode);
        options.env_remove("PATH").stdout(Stdio::piped());
        let env = run(options);
        assert_eq!(env.exit_code, 0, "{mode:?}: {:?}", env.messages);
        assert!(!text(&env.stdout).lines().any(|l| l.starts_with("PATH=")), "{mode:?}: {}", text(&env.stdout));
        assert!(!text(&env.stdout).is_empty());
        // Cleared: only what is set afterwards.
        let mut options = step(&["/usr/bin/env"], mode);
        options.env("DROPPED", "1").env_clear().env("ONLY", "1").stdout(Stdio::piped());
        assert_eq!(text(&run(options).stdout), "ONLY=1\n", "{mode:?}");
        // Cleared, the program looked up in the PATH given (not in this
        // process's, where it is not).
        let mut options = step(&["stepmon-only-here"], mode);
        options.env_clear().env("PATH", bin.path()).stdout(Stdio::piped());
        let found = run(options);
        assert_eq!(text(&found.stdout), "found in the given PATH\n", "{mode:?}: {:?}", found.messages);
        // A PATH without the program: not found, before anything is placed,
        // although this process's PATH has it.
        let mut options = step(&["env"], mode);
        options.env("PATH", bin.path());
        let missing = stepmon_runner::prepare(options).map(|_| ()).unwrap_err();
        assert_eq!(missing.kind(), RunErrorKind::NotFound, "{mode:?}: {missing}");
    }
}

#[test]
fn a_working_directory_and_a_missing_one() {
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().canonicalize().unwrap();
    script(dir.path(), "configure", "pwd -P");
    for mode in MODES {
        let mut options = step(&["pwd", "-P"], mode);
        options.current_dir(dir.path()).stdout(Stdio::piped());
        assert_eq!(text(&run(options).stdout).trim_end(), real.to_str().unwrap(), "{mode:?}");
        // A relative program is found from there, as after a `cd`.
        let mut options = step(&["./configure"], mode);
        options.current_dir(dir.path()).stdout(Stdio::piped());
        let configured = run(options);
        assert_eq!(text(&configured.stdout).trim_end(), real.to_str().unwrap(), "{mode:?}: {:?}", configured.messages);
        assert!(configured.not_started().is_none());
        // Missing: the command does not start, the step ends at once, and
        // says which directory.
        let missing = dir.path().join("not-there");
        let mut options = step(&["./configure"], mode);
        options.current_dir(&missing).stdout(Stdio::piped());
        let finished = run(options);
        assert_eq!(finished.exit_code, 126, "{mode:?}");
        let why = finished.not_started().unwrap_or_else(|| panic!("{mode:?}: {:?}", finished.messages));
        assert_eq!(why.kind(), RunErrorKind::WorkingDirectory, "{mode:?}: {why}");
        assert!(why.to_string().contains(missing.to_str().unwrap()), "{mode:?}: {why}");
        assert_eq!(why.io_error().map(std::io::Error::kind), Some(std::io::ErrorKind::NotFound));
        assert!(finished.messages.iter().any(|m| m.contains("not-there")), "{mode:?}: {:?}", finished.messages);
        assert!(finished.stdout.is_empty());
    }
}

#[test]
fn a_program_that_cannot_run_is_matchable() {
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let not_executable = dir.path().join("not-executable");
    std::fs::write(&not_executable, "#!/bin/sh\n").unwrap();
    let bad_interpreter = script(dir.path(), "bad-interpreter", "");
    std::fs::write(&bad_interpreter, "#!/nonexistent/interpreter\n").unwrap();
    for mode in MODES {
        for (program, kind, code) in
            [(&not_executable, RunErrorKind::PermissionDenied, 126), (&bad_interpreter, RunErrorKind::NotFound, 127)]
        {
            let finished = run(step(&[program.to_str().unwrap()], mode));
            assert_eq!(finished.exit_code, code, "{mode:?} {program:?}");
            let why = finished.not_started().unwrap();
            assert_eq!(why.kind(), kind, "{mode:?} {program:?}: {why}");
            assert!(why.to_string().starts_with("cannot run "), "{why}");
        }
        assert!(run(step(&["true"], mode)).not_started().is_none());
    }
}

#[test]
fn stdin_from_a_file_a_pipe_and_null() {
    let _one = one_at_a_time();
    let mut input = tempfile::tempfile().unwrap();
    input.write_all(b"line 1\nline 2\n").unwrap();
    for mode in MODES {
        let mut file = input.try_clone().unwrap();
        std::io::Seek::rewind(&mut file).unwrap();
        let mut options = step(&["cat"], mode);
        options.stdin(file).stdout(Stdio::piped());
        assert_eq!(text(&run(options).stdout), "line 1\nline 2\n", "{mode:?}");
        // A pipe written while the step runs, closed to end its input.
        let mut options = step(&["cat"], mode);
        options.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut running = stepmon_runner::prepare(options).unwrap().start().unwrap();
        let mut stdin = running.stdin.take().unwrap();
        let mut stdout = running.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut all = String::new();
            stdout.read_to_string(&mut all).map(|_| all)
        });
        stdin.write_all(b"written while it ran\n").unwrap();
        drop(stdin);
        let finished = within("cat of a pipe", move || running.wait()).unwrap();
        assert_eq!(finished.exit_code, 0);
        assert_eq!(reader.join().unwrap().unwrap(), "written while it ran\n", "{mode:?}");
        // A pipe written asynchronously, more than it holds (the writes wait
        // for cat, which waits for its stdout to be read), then closed.
        let written = pattern(256 << 10, 3);
        let mut options = step(&["cat"], mode);
        options.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut running = stepmon_runner::prepare(options).unwrap().start().unwrap();
        let mut stdin = running.stdin.take().unwrap();
        let all = written.clone();
        let finished = within("cat of an async pipe", move || {
            smol::block_on(async move {
                let write = async {
                    futures::io::AsyncWriteExt::write_all(&mut stdin, &all).await?;
                    futures::io::AsyncWriteExt::close(&mut stdin).await
                };
                let (wrote, finished) = futures::future::join(write, running.output()).await;
                wrote.map(|()| finished)
            })
        });
        let finished = finished.unwrap().unwrap();
        assert!(finished.stdout == written, "{mode:?}: {} bytes back of {}", finished.stdout.len(), written.len());
        // A piped stdin never taken: waiting closes it (as std's
        // `Child::wait` does), so cat sees its end instead of waiting forever;
        // awaiting the step likewise.
        let mut options = step(&["cat"], mode);
        options.stdin(Stdio::piped());
        let running = stepmon_runner::prepare(options).unwrap().start().unwrap();
        assert_eq!(within("cat of an untaken stdin", move || running.wait()).unwrap().exit_code, 0, "{mode:?}");
        let mut options = step(&["cat"], mode);
        options.stdin(Stdio::piped());
        let running = stepmon_runner::prepare(options).unwrap().start().unwrap();
        let awaited = within("cat of an untaken stdin, awaited", move || {
            smol::block_on(std::future::IntoFuture::into_future(running))
        });
        assert_eq!(awaited.unwrap().exit_code, 0, "{mode:?}");
        // /dev/null: nothing to read.
        let mut options = step(&["cat"], mode);
        options.stdin(Stdio::null()).stdout(Stdio::piped());
        let finished = run(options);
        assert_eq!((finished.exit_code, finished.stdout.len()), (0, 0), "{mode:?}");
    }
}

#[test]
fn stdout_and_stderr_piped_to_a_file_null_and_inherited() {
    let _one = one_at_a_time();
    let both = ["sh", "-c", "echo out; echo err >&2"];
    for mode in MODES {
        let mut options = step(&both, mode);
        options.stdout(Stdio::piped()).stderr(Stdio::piped());
        let piped = run(options);
        assert_eq!((text(&piped.stdout), text(&piped.stderr)), ("out\n", "err\n"), "{mode:?}");
        // Files: the command writes into them, nothing is collected.
        let (out, err) = (tempfile::NamedTempFile::new().unwrap(), tempfile::NamedTempFile::new().unwrap());
        let mut options = step(&both, mode);
        options.stdout(out.reopen().unwrap()).stderr(err.reopen().unwrap());
        let to_files = run(options);
        assert!(to_files.stdout.is_empty() && to_files.stderr.is_empty());
        assert_eq!(std::fs::read_to_string(out.path()).unwrap(), "out\n", "{mode:?}");
        assert_eq!(std::fs::read_to_string(err.path()).unwrap(), "err\n", "{mode:?}");
        // /dev/null, each of the three.
        let null = "for fd in 0 1 2; do [ \"$(readlink /proc/$$/fd/$fd)\" = /dev/null ] || exit $((fd + 10)); done";
        let mut options = step(&["sh", "-c", null], mode);
        options.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        assert_eq!(run(options).exit_code, 0, "{mode:?}");
        // Inherited (the default), beside a piped stderr: the same stdout
        // as this process's.
        let own = std::fs::read_link("/proc/self/fd/1").unwrap();
        // (Read from a subshell: a redirection of the shell's own would
        // move its fd 1 before it is read.)
        let mut options = step(&["sh", "-c", "fd1=$(readlink /proc/$$/fd/1); echo \"$fd1\" >&2"], mode);
        options.stderr(Stdio::piped());
        let inherited = run(options);
        assert_eq!(text(&inherited.stderr).trim_end(), own.to_str().unwrap(), "{mode:?}");
        // Read with std::io::Read while the step runs, then waited for.
        let mut options = step(&both, mode);
        options.stdout(Stdio::piped()).stderr(Stdio::null());
        let mut running = stepmon_runner::prepare(options).unwrap().start().unwrap();
        let mut all = String::new();
        running.stdout.take().unwrap().read_to_string(&mut all).unwrap();
        assert_eq!(all, "out\n", "{mode:?}");
        assert_eq!(within("a step whose stdout was read", move || running.wait()).unwrap().exit_code, 0);
    }
}

/// `len` bytes that differ from one seed to the next (xorshift).
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.to_le_bytes()[0]
        })
        .collect()
}

#[test]
fn a_mebibyte_on_both_pipes_at_once_blocking_and_async() {
    let _one = one_at_a_time();
    const MIB: usize = 1 << 20;
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (pattern(MIB, 1), pattern(MIB, 2));
    std::fs::write(dir.path().join("out"), &out).unwrap();
    std::fs::write(dir.path().join("err"), &err).unwrap();
    // Both at once: whichever pipe fills first, the other must be read too.
    let both = ["sh", "-c", "cat out & cat err >&2; wait"];
    for mode in MODES {
        let options = || {
            let mut options = step(&both, mode);
            options.current_dir(dir.path()).stdout(Stdio::piped()).stderr(Stdio::piped());
            options
        };
        let blocking = run(options());
        let started = || stepmon_runner::prepare(options()).unwrap().start().unwrap();
        let on_futures = {
            let step = started();
            within("output() on futures::executor", move || futures::executor::block_on(step.output())).unwrap()
        };
        let on_smol = {
            let step = started();
            within("output() on smol", move || smol::block_on(step.output())).unwrap()
        };
        for (how, finished) in
            [("wait_with_output", &blocking), ("output on futures", &on_futures), ("output on smol", &on_smol)]
        {
            assert_eq!(finished.exit_code, 0, "{mode:?} {how}: {:?}", finished.messages);
            assert_eq!((finished.stdout.len(), finished.stderr.len()), (MIB, MIB), "{mode:?} {how}");
            assert!(finished.stdout == out && finished.stderr == err, "{mode:?} {how}: bytes differ");
        }
    }
}

/// No cgroup of this process's steps is left in any hierarchy.
fn no_cgroup_left() {
    let left = stepmon_testsupport::cgroups::left_of_this_process();
    assert!(left.is_empty(), "cgroups left: {left:?}");
}

/// This process's descriptors a command inherits (not close-on-exec),
/// above 2: a cargo jobserver's pipe, say.
fn inherited_fds() -> BTreeSet<String> {
    let mut fds: BTreeSet<String> = ["0", "1", "2"].map(str::to_owned).into();
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(fd) = name.parse::<i32>() else { continue };
        // Its `flags` line (fdinfo, proc(5)) is octal, O_CLOEXEC
        // (02000000) among them.
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap_or_default();
        let flags = info.lines().find_map(|l| l.strip_prefix("flags:")).map(str::trim).unwrap_or("0");
        let cloexec = u32::from_str_radix(flags, 8).is_ok_and(|f| f & 0o2_000_000 != 0);
        if fd > 2 && !cloexec && !info.is_empty() {
            fds.insert(name);
        }
    }
    fds
}

/// What one step of [`builders_run_64_actions_at_once`] prints: its index,
/// its directory, its shell's descriptors; it exits with `index % 5`.
const ACTION: &str = "echo \"$STEP_INDEX $(pwd -P)\"; ls /proc/$$/fd; exit $((STEP_INDEX % 5))";

/// A step's end and what its stdout gave.
type Action = (Result<Finished, RunError>, std::io::Result<Vec<u8>>);

#[test]
fn builders_run_64_actions_at_once_each_with_its_own_env_dir_and_stdout() {
    let _one = one_at_a_time();
    const STEPS: usize = 64;
    let dirs: Vec<tempfile::TempDir> = (0..STEPS).map(|_| tempfile::tempdir().unwrap()).collect();
    let expected_dirs: Vec<PathBuf> = dirs.iter().map(|d| d.path().canonicalize().unwrap()).collect();
    let inherited = inherited_fds();
    let runner = Runner::new().unwrap();
    let each = |i: usize| {
        let mut options = StepOptions::new(["sh", "-c", ACTION]);
        options.cgroup = CgroupMode::Auto;
        options.env("STEP_INDEX", i.to_string()).current_dir(dirs[i].path()).stdout(Stdio::piped());
        options
    };
    // A builder's task: start, read the action's stdout while awaiting it.
    async fn action(runner: Runner, options: StepOptions) -> Action {
        let mut step = match runner.start(options) {
            Ok(step) => step,
            Err(e) => return (Err(e), Ok(Vec::new())),
        };
        let mut stdout = step.stdout.take().unwrap();
        let read = async move {
            let mut all = Vec::new();
            futures::io::AsyncReadExt::read_to_end(&mut stdout, &mut all).await.map(|_| all)
        };
        futures::future::join(step.into_future(), read).await
    }
    for executor in ["tokio", "smol"] {
        let results: Vec<Action> = {
            let runner = runner.clone();
            let options: Vec<StepOptions> = (0..STEPS).map(each).collect();
            within(executor, move || {
                let tasks = futures::stream::iter(options);
                if executor == "tokio" {
                    let runtime =
                        tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
                    runtime.block_on(async {
                        let handles = tasks.map(|o| tokio::spawn(action(runner.clone(), o))).buffered(STEPS);
                        handles.map(Result::unwrap).collect().await
                    })
                } else {
                    smol::block_on(tasks.map(|o| smol::spawn(action(runner.clone(), o))).buffered(STEPS).collect())
                }
            })
        };
        let (mut wrong_exits, mut wrong_outputs) = (Vec::new(), Vec::new());
        for (i, (finished, stdout)) in results.into_iter().enumerate() {
            let finished = finished.unwrap_or_else(|e| panic!("{executor} step {i}: {e}"));
            if finished.exit_code != i32::try_from(i % 5).unwrap() {
                wrong_exits.push((i, finished.exit_code, finished.messages.clone()));
            }
            let stdout = String::from_utf8(stdout.unwrap()).unwrap();
            let mut lines = stdout.lines();
            let said = lines.next().unwrap_or_default();
            let fds: BTreeSet<String> = lines.map(str::to_owned).collect();
            if said != format!("{i} {}", expected_dirs[i].display()) || fds != inherited {
                wrong_outputs.push((i, stdout.clone()));
            }
        }
        assert!(wrong_exits.is_empty(), "{executor}: wrong exits {wrong_exits:?}");
        assert!(
            wrong_outputs.is_empty(),
            "{executor}: wrong outputs (descriptors expected: {inherited:?}) {wrong_outputs:?}"
        );
    }
    runner.shutdown();
    no_cgroup_left();
}
