//! A build system's day at the scale of issue "A builder hands stepmon its
//! real actions": rounds of 64 steps at once, each an action with its own
//! variable, its own working directory, its stdout piped and read, its own
//! exit code and an allocation of known size, awaited on tokio (the stdout
//! read as `AsyncRead` beside the awaited step), on smol (`Step::output`)
//! and on 64 plain threads with the blocking API (`Read`, then
//! `Step::wait`). Every step must exit with its code, print its own
//! variable and directory, show its own exact peak (its cgroup's, within
//! [`SLACK_MIB`] above what it allocated, as tests/builders.rs holds the
//! 100 MiB tree to 100–104 MiB; neighbouring steps allocate 5 MiB apart, so
//! a peak of another step's shows), and reap its own processes; no cgroup
//! of this process may be left afterwards.
//!
//! The goal is 20 rounds on each executor. `cargo test` (and so CI) runs
//! all 20 rounds on tokio and [`CI_ROUNDS`] on smol and on threads, to keep
//! CI's time; `STEPMON_FULL_SCALE=1` runs 20 on each, the whole goal:
//!
//! ```text
//! STEPMON_FULL_SCALE=1 cargo test -p stepmon-runner --test builder_scale -- --nocapture
//! ```
//!
//! Each executor's line (`--nocapture`) says how many steps ran and how
//! long they took. A machine under 4 GiB (the VM tier's guest) runs 16
//! steps at once, one round per executor.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use stepmon_testsupport::skip;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures::StreamExt;
use stepmon_model::source::{Bound, Rung};
use stepmon_runner::{CgroupMode, Finished, RunError, Runner, Stdio, StepOptions};

const MIB: u64 = 1 << 20;
/// The goal's rounds on each executor.
const GOAL_ROUNDS: usize = 20;
/// The rounds on smol and on threads unless `STEPMON_FULL_SCALE=1`.
const CI_ROUNDS: usize = 3;
/// The goal's steps at once.
const GOAL_STEPS: usize = 64;
/// How far above its allocation a step's peak may be (its shell, the
/// worker's stack, page tables and runtime): the 4 MiB tests/builders.rs
/// allows the 100 MiB tree.
const SLACK_MIB: u64 = 4;
/// How long each worker holds its memory, so that a round's steps hold
/// theirs at the same time.
const HOLD_SECONDS: &str = "0.05";

/// Longer than any round takes on a loaded machine: a round that takes
/// this long is stuck (a pipe nobody reads, an end never reported).
const STUCK: Duration = Duration::from_secs(300);

/// The step: the worker holds `$2` MiB, then the shell prints the step's
/// variable and its working directory and exits with `$3`.
const ACTION: &str = r#""$1" "$2" "$4" && printf '%s %s\n' "$STEP_TOKEN" "$(pwd -P)"; exit "$3""#;

/// The worker program (runner/examples/worker.rs): `STEPMON_WORKER_PROGRAM`,
/// else the example cargo built beside this test.
fn worker_program(test: &str) -> Option<PathBuf> {
    let path = match std::env::var_os("STEPMON_WORKER_PROGRAM") {
        Some(path) => PathBuf::from(path),
        None => std::env::current_exe().ok()?.parent()?.parent()?.join("examples").join("worker"),
    };
    if path.is_file() {
        // Its pages into the page cache before a step runs it: page cache
        // is charged to the cgroup that reads it in, and would count in the
        // first step's peak.
        let _ = std::fs::read(&path);
        Some(path)
    } else {
        skip::skip(
            test,
            format!("no worker program at {} (`cargo build -p stepmon-runner --examples` builds it)", path.display()),
        );
        None
    }
}

/// Under 4 GiB: the VM tier's guest (1 GiB, emulated CPUs), where 64 steps
/// at once of 4–19 MiB each, 20 rounds, are too many for its memory and time.
fn small_machine() -> bool {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    kib < 4 << 20
}

/// (steps at once, rounds) for an executor that runs `rounds` here.
fn scale(rounds: usize) -> (usize, usize) {
    if small_machine() { (16, 1) } else { (GOAL_STEPS, rounds) }
}

/// The rounds an executor other than tokio runs.
fn other_rounds() -> usize {
    if std::env::var("STEPMON_FULL_SCALE").is_ok_and(|v| v == "1") { GOAL_ROUNDS } else { CI_ROUNDS }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Executor {
    Tokio,
    Smol,
    Threads,
}

/// One step of a round: what it is given and so what it must give back.
struct Action {
    token: String,
    dir: tempfile::TempDir,
    /// `dir` as the step's `pwd -P` prints it.
    real_dir: PathBuf,
    mib: u64,
    code: i32,
}

impl Action {
    fn new(executor: Executor, round: usize, step: usize) -> Action {
        let dir = tempfile::Builder::new().prefix("builder-scale-").tempdir().unwrap();
        let real_dir = dir.path().canonicalize().unwrap();
        Action {
            token: format!("{executor:?}-round{round}-step{step}"),
            dir,
            real_dir,
            // 4, 9, 14, 19 MiB: neighbours differ by more than the slack;
            // small, as each page written costs the kernel a fault.
            mib: 4 + 5 * (step % 4) as u64,
            // Each step of a round its own code, and another each round.
            code: i32::try_from((step + 7 * round) % 128).unwrap(),
        }
    }

    fn options(&self, worker: &Path) -> StepOptions {
        let mib = self.mib.to_string();
        let code = self.code.to_string();
        let command = ["sh", "-c", ACTION, "sh", worker.to_str().unwrap(), &mib, &code, HOLD_SECONDS];
        let mut options = StepOptions::new(command);
        options.cgroup = CgroupMode::Auto;
        options.env("STEP_TOKEN", &self.token).current_dir(self.dir.path()).stdout(Stdio::piped());
        options
    }

    fn output(&self) -> String {
        format!("{} {}\n", self.token, self.real_dir.display())
    }
}

/// A step's end and the bytes read from its stdout.
type Ran = (Result<Finished, RunError>, std::io::Result<Vec<u8>>);

/// tokio: the step awaited while its stdout is read as `AsyncRead`.
async fn on_tokio(runner: Runner, options: StepOptions) -> Ran {
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

/// smol: `Step::output`, the end and the pipes read in one future.
async fn on_smol(runner: Runner, options: StepOptions) -> Ran {
    match runner.start(options) {
        Ok(step) => match step.output().await {
            Ok(mut finished) => {
                let stdout = std::mem::take(&mut finished.stdout);
                (Ok(finished), Ok(stdout))
            }
            Err(e) => (Err(e), Ok(Vec::new())),
        },
        Err(e) => (Err(e), Ok(Vec::new())),
    }
}

/// A thread: stdout read to its end with `Read`, then `Step::wait`, as a
/// `std::process::Child` is used.
fn on_thread(runner: &Runner, options: StepOptions) -> Ran {
    let mut step = match runner.start(options) {
        Ok(step) => step,
        Err(e) => return (Err(e), Ok(Vec::new())),
    };
    let mut stdout = step.stdout.take().unwrap();
    let mut all = Vec::new();
    let read = stdout.read_to_end(&mut all).map(|_| all);
    (step.wait(), read)
}

/// One round: every step of `each` started at once on `executor`, in
/// `each`'s order.
fn round(runner: &Runner, executor: Executor, each: Vec<StepOptions>) -> Vec<Ran> {
    let steps = each.len();
    let runner = runner.clone();
    within(&format!("{executor:?} round"), move || match executor {
        Executor::Tokio => {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
            runtime.block_on(async {
                let tasks = futures::stream::iter(each).map(|o| tokio::spawn(on_tokio(runner.clone(), o)));
                tasks.buffered(steps).map(Result::unwrap).collect().await
            })
        }
        Executor::Smol => smol::block_on(
            futures::stream::iter(each).map(|o| smol::spawn(on_smol(runner.clone(), o))).buffered(steps).collect(),
        ),
        Executor::Threads => std::thread::scope(|scope| {
            let threads: Vec<_> = each.into_iter().map(|o| scope.spawn(|| on_thread(&runner, o))).collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        }),
    })
}

/// `f()` on a thread of its own; a failure of the test if it does not
/// return within [`STUCK`].
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(STUCK).unwrap_or_else(|e| panic!("{what}: no result after {STUCK:?} ({e})"))
}

/// What was wrong in a run of rounds, each with the step's name and what
/// it gave.
#[derive(Debug, Default)]
struct Wrong {
    errors: Vec<String>,
    exits: Vec<String>,
    outputs: Vec<String>,
    peaks: Vec<String>,
    processes: Vec<String>,
    /// Each peak's bytes above its step's allocation.
    above: Vec<u64>,
}

impl Wrong {
    fn check(&mut self, action: &Action, ran: Ran) {
        let name = &action.token;
        let finished = match ran.0 {
            Ok(finished) => finished,
            Err(e) => {
                let source = std::error::Error::source(&e).map(ToString::to_string);
                self.errors.push(format!("{name}: {e} ({:?}, source {source:?})", e.kind()));
                return;
            }
        };
        if finished.exit_code != action.code {
            self.exits.push(format!("{name}: {} not {} {:?}", finished.exit_code, action.code, finished.messages));
        }
        match ran.1 {
            Ok(bytes) if bytes == action.output().as_bytes() => {}
            Ok(bytes) => self.outputs.push(format!("{name}: {:?}", String::from_utf8_lossy(&bytes))),
            Err(e) => self.outputs.push(format!("{name}: reading stdout: {e}")),
        }
        let peak = &finished.result.memory_peak_bytes;
        let exact = peak.bound == Some(Bound::Exact)
            && !peak.sampled
            && matches!(peak.rung, Some(Rung::CgroupV1 | Rung::CgroupV2));
        let within = peak.value.is_some_and(|b| (action.mib * MIB..=(action.mib + SLACK_MIB) * MIB).contains(&b));
        if let Some(above) = peak.value.and_then(|b| b.checked_sub(action.mib * MIB)) {
            self.above.push(above);
        }
        if !exact || !within {
            self.peaks.push(format!(
                "{name}: {:?} MiB ({:?} {:?}, sampled {}, missing {:?}) for {} MiB",
                peak.value.map(|b| b as f64 / MIB as f64),
                peak.rung,
                peak.bound,
                peak.sampled,
                peak.missing,
                action.mib
            ));
        }
        // Its shell waits for its children: the shell alone is left for the
        // step's reaper, never a process of another step's, none left over.
        let r = &finished.result;
        if r.processes_reaped != Some(1) || r.leftovers_killed != Some(0) {
            self.processes.push(format!("{name}: reaped {:?}, killed {:?}", r.processes_reaped, r.leftovers_killed));
        }
    }

    fn assert_none(&self, what: &str) {
        let counts = [
            ("errors", self.errors.len()),
            ("wrong exits", self.exits.len()),
            ("wrong outputs", self.outputs.len()),
            ("wrong peaks", self.peaks.len()),
            ("wrong process counts", self.processes.len()),
        ];
        assert!(counts.iter().all(|(_, n)| *n == 0), "{what}: {counts:?}\n{self:#?}");
    }
}

/// No cgroup of this process's steps is left in any hierarchy.
fn no_cgroup_left() {
    let left = stepmon_testsupport::cgroups::left_of_this_process();
    assert!(left.is_empty(), "cgroups left: {left:?}");
}

/// The tests here each load the machine fully, and the last check of each
/// would see another's running steps' cgroups: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `rounds` rounds of steps at once on `executor` and checks each.
fn rounds_at_once(test: &str, executor: Executor, rounds: usize) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(worker) = worker_program(test) else { return };
    if !rustix::process::geteuid().is_root() {
        return skip::skip(test, "needs root for cgroups of the steps' own");
    }
    let (steps, rounds) = scale(rounds);
    let runner = Runner::new().unwrap();
    let mut wrong = Wrong::default();
    let started = Instant::now();
    for r in 0..rounds {
        let actions: Vec<Action> = (0..steps).map(|i| Action::new(executor, r, i)).collect();
        let ran = round(&runner, executor, actions.iter().map(|a| a.options(&worker)).collect());
        assert_eq!(ran.len(), steps, "{executor:?} round {r}");
        for (action, ran) in actions.iter().zip(ran) {
            wrong.check(action, ran);
        }
    }
    let took = started.elapsed();
    runner.shutdown();
    wrong.assert_none(&format!("{executor:?}, {rounds} rounds of {steps} steps at once"));
    no_cgroup_left();
    wrong.above.sort_unstable();
    let mib = |b: u64| b as f64 / MIB as f64;
    eprintln!(
        "{executor:?}: {rounds} rounds × {steps} steps at once, {} steps: 0 wrong exits, outputs, peaks or process \
         counts, no cgroup left; peaks {:.2}–{:.2} MiB above the allocation (median {:.2}); {:.1} s",
        rounds * steps,
        mib(wrong.above[0]),
        mib(wrong.above[wrong.above.len() - 1]),
        mib(wrong.above[wrong.above.len() / 2]),
        took.as_secs_f64()
    );
}

#[test]
fn tokio_runs_20_rounds_of_64_actions_at_once() {
    rounds_at_once("tokio_runs_20_rounds_of_64_actions_at_once", Executor::Tokio, GOAL_ROUNDS);
}

#[test]
fn smol_runs_rounds_of_64_actions_at_once() {
    rounds_at_once("smol_runs_rounds_of_64_actions_at_once", Executor::Smol, other_rounds());
}

#[test]
fn threads_run_rounds_of_64_actions_at_once() {
    rounds_at_once("threads_run_rounds_of_64_actions_at_once", Executor::Threads, other_rounds());
}
