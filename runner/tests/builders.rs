//! Many measured steps at once in one process, as a build system runs them
//! (issue "builders embed stepmon"): each step's numbers its own, its
//! orphans killed and counted on it alone, on every executor, as root with
//! cgroups and as `nobody` without. The tree of known memory is
//! examples/tree.rs: 10 + 20 + 30 + 40 MiB held at once.
//!
//! Sizes adapt to the machine: a guest of the VM tier (under 4 GiB) runs 16
//! steps, 4 at a time, once per executor.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use stepmon_testsupport::{as_nobody, skip};

use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures::StreamExt;
use stepmon_model::result::Exit;
use stepmon_model::source::{Bound, Rung};
use stepmon_runner::{CgroupMode, Finished, RunError, Runner, StepOptions};

const MIB: f64 = 1048576.0;
/// Set in the child process that runs the unprivileged steps.
const CHILD: &str = "STEPMON_BUILDERS_CHILD";

/// The tree program: `STEPMON_TREE_PROGRAM`, else the example cargo built
/// beside this test (target/<profile>/examples/tree).
fn tree_program(test: &str) -> Option<PathBuf> {
    let path = match std::env::var_os("STEPMON_TREE_PROGRAM") {
        Some(path) => PathBuf::from(path),
        None => std::env::current_exe().ok()?.parent()?.parent()?.join("examples").join("tree"),
    };
    if path.is_file() {
        // Its pages into the page cache before a step runs it: the step that
        // read them first would be charged for them (page cache is charged
        // to the cgroup that brings it in), a fresh debug build's 5 MB above
        // the tree's own 100 MiB (seen: a peak of 104.2 MiB).
        let _ = std::fs::read(&path);
        Some(path)
    } else {
        skip::skip(
            test,
            format!("no tree program at {} (`cargo build -p stepmon-runner --examples` builds it)", path.display()),
        );
        None
    }
}

fn root(test: &str) -> bool {
    rustix::process::geteuid().is_root() || skip::skipped(test, "needs root for cgroups of the steps' own")
}

/// Under 4 GiB: the VM tier's guest (1 GiB, emulated CPUs), where the
/// steps are fewer and nothing is timed.
fn small_machine() -> bool {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    kib < 4 << 20
}

/// (steps, at once): smaller on a [`small_machine`].
fn sizes(steps: usize, parallel: usize) -> (usize, usize) {
    if small_machine() { (steps.min(16), 4) } else { (steps, parallel) }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Executor {
    Tokio,
    Smol,
    Futures,
    Blocking,
}

/// A step's result and the time from its start call to its result.
type Ran = (Result<Finished, RunError>, Duration);

/// Runs every step of `each`, `parallel` at a time, on `executor`.
fn run_all(runner: &Runner, executor: Executor, each: &[StepOptions], parallel: usize) -> Vec<Ran> {
    async fn step(runner: Runner, options: StepOptions) -> Ran {
        let started = Instant::now();
        let result = match runner.start(options) {
            Ok(step) => step.await,
            Err(e) => Err(e),
        };
        (result, started.elapsed())
    }
    let steps = futures::stream::iter(each.iter().cloned());
    match executor {
        Executor::Blocking => std::thread::scope(|scope| {
            let chunks: Vec<Vec<StepOptions>> =
                (0..parallel).map(|i| each.iter().skip(i).step_by(parallel).cloned().collect()).collect();
            let threads: Vec<_> = chunks
                .into_iter()
                .map(|chunk| {
                    scope.spawn(move || {
                        chunk
                            .into_iter()
                            .map(|options| {
                                let started = Instant::now();
                                let result = runner.start(options).and_then(stepmon_runner::Step::wait);
                                (result, started.elapsed())
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
        }),
        Executor::Futures => futures::executor::block_on(
            steps.map(|options| step(runner.clone(), options)).buffer_unordered(parallel).collect(),
        ),
        Executor::Smol => smol::block_on(
            steps.map(|options| smol::spawn(step(runner.clone(), options))).buffer_unordered(parallel).collect(),
        ),
        Executor::Tokio => {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
            runtime.block_on(async {
                let done: Vec<_> = steps
                    .map(|options| tokio::spawn(step(runner.clone(), options)))
                    .buffer_unordered(parallel)
                    .collect()
                    .await;
                done.into_iter().map(Result::unwrap).collect()
            })
        }
    }
}

fn options(command: &[&str], mode: CgroupMode) -> StepOptions {
    let mut options = StepOptions::new(command);
    options.cgroup = mode;
    options
}

/// A step whose first process exits at once and leaves one behind.
const ORPHAN: [&str; 3] = ["sh", "-c", "(sleep 5) & exit 0"];

/// Checks one step of the tree; its CPU seconds.
fn check_tree(ran: &Ran, own_cgroup: bool) -> f64 {
    let (result, _) = ran;
    let finished = result.as_ref().unwrap();
    assert_eq!(finished.exit_code, 0, "{:?}", finished.messages);
    let run = finished.document.stepmon.as_ref().unwrap();
    let memory = run.sources.memory.clone();
    let peak = run.summary.memory.peak_bytes.map(|b| b as f64 / MIB);
    if own_cgroup {
        let memory = memory.unwrap();
        assert!(matches!(memory.rung, Rung::CgroupV1 | Rung::CgroupV2), "{memory:?}");
        assert_eq!(memory.bound, Bound::Exact);
        let peak = peak.unwrap();
        assert!((100.0..=104.0).contains(&peak), "peak {peak:.1} MiB, not 100-104");
    } else {
        // No memory controller of its own: not measured, a lower bound from
        // its processes, or an upper bound from the enclosing cgroup v1
        // (never reset; it holds the other steps too); the largest of them
        // held 40 MiB.
        match &memory {
            Some(memory) => assert_ne!(memory.bound, Bound::Exact, "{memory:?}"),
            None => assert!(run.not_measured.iter().any(|n| n.contains("memory")), "{:?}", run.not_measured),
        }
        let largest = run.process_tree.unwrap().max_rss_bytes as f64 / MIB;
        assert!((40.0..=50.0).contains(&largest), "largest process {largest:.1} MiB");
    }
    let tree = run.process_tree.unwrap();
    assert_eq!((tree.processes_reaped, tree.leftovers_killed), (1, 0), "{tree:?}");
    // The typed result says the same, each number with its source.
    let r = &finished.result;
    assert_eq!(r.exit, Exit::Code(0));
    assert_eq!((r.processes_reaped, r.leftovers_killed), (Some(1), Some(0)));
    assert!(r.wall_seconds.is_some() && r.cpu_user_seconds.value.is_some() && r.cpu_system_seconds.value.is_some());
    let m = &r.memory_peak_bytes;
    if own_cgroup {
        assert_eq!(m.value, run.summary.memory.peak_bytes);
        assert!(m.rung.is_some() && m.bound == Some(Bound::Exact) && !m.sampled && m.missing.is_none(), "{m:?}");
    } else if m.value.is_none() {
        assert!(m.missing.as_deref().is_some_and(|why| why.contains("memory")), "{m:?}");
    } else {
        // A lower bound (sampled), or the enclosing cgroup v1's upper bound.
        assert_ne!(m.bound, Some(Bound::Exact), "{m:?}");
    }
    let cost = r.cost;
    assert!(cost.placement_seconds.is_some_and(|s| s > 0.0), "{cost:?}");
    assert!(cost.exit_to_result_seconds.is_some() && cost.collector_cpu_seconds.is_some(), "{cost:?}");
    println!("{r}");
    run.summary.cpu.usage_seconds.unwrap()
}

/// Checks one step of [`ORPHAN`].
fn check_orphan(ran: &Ran) {
    let (result, took) = ran;
    let finished = result.as_ref().unwrap();
    assert_eq!(finished.exit_code, 0, "{:?}", finished.messages);
    let wall = finished.document.stepmon.as_ref().unwrap().summary.wall_seconds.unwrap();
    assert!(
        small_machine() || *took < Duration::from_secs(3),
        "{took:?} (wall {wall:.3} s): the orphan was waited for, not killed"
    );
    let tree = finished.document.stepmon.as_ref().unwrap().process_tree.unwrap();
    // Its shell and the orphan, nothing of another step's.
    assert_eq!((tree.processes_reaped, tree.leftovers_killed), (2, 1), "{tree:?}");
}

/// No cgroup of this process's steps is left in any hierarchy.
fn no_cgroup_left() {
    let left = stepmon_testsupport::cgroups::left_of_this_process();
    assert!(left.is_empty(), "cgroups left: {left:?}");
}

/// The tests here each load the machine fully: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[test]
fn steps_at_once_each_get_their_own_exact_numbers() {
    let name = "steps_at_once_each_get_their_own_exact_numbers";
    let _one = one_at_a_time();
    let Some(tree) = tree_program(name) else { return };
    if !root(name) {
        return;
    }
    let tree = tree.to_str().unwrap();
    let runner = Runner::new().unwrap();
    let (steps, parallel) = sizes(64, 16);
    let alone: Vec<f64> = run_all(&runner, Executor::Blocking, &vec![options(&[tree], CgroupMode::Auto); 3], 1)
        .iter()
        .map(|ran| check_tree(ran, true))
        .collect();
    let trees = run_all(&runner, Executor::Blocking, &vec![options(&[tree], CgroupMode::Auto); steps], parallel);
    let cpu: Vec<f64> = trees.iter().map(|ran| check_tree(ran, true)).collect();
    let (alone, at_once) = (median(alone), median(cpu.clone()));
    eprintln!("tree CPU: alone {alone:.4} s, {parallel} at once {at_once:.4} s (median of {steps})");
    // The median step within 10% of the tree's CPU alone, give or take one
    // scheduler tick (4 ms) of rounding per process at this size.
    let slack = alone * 0.10 + 0.004 * 4.0;
    assert!(small_machine() || (at_once - alone).abs() <= slack, "median {at_once:.4} s vs alone {alone:.4} s");
    let orphans = run_all(&runner, Executor::Blocking, &vec![options(&ORPHAN, CgroupMode::Auto); steps], parallel);
    orphans.iter().for_each(check_orphan);
    runner.shutdown();
    no_cgroup_left();
}

#[test]
fn every_executor_runs_steps_at_once_without_a_failure() {
    let name = "every_executor_runs_steps_at_once_without_a_failure";
    let _one = one_at_a_time();
    let Some(tree) = tree_program(name) else { return };
    if !root(name) {
        return;
    }
    let tree = tree.to_str().unwrap();
    let runner = Runner::new().unwrap();
    let (steps, parallel) = sizes(8, 8);
    let small = parallel < 8;
    // Trees and orphans interleaved: a reaper that took another step's
    // process shows as a lost step, a wrong count or a wrong peak.
    let each: Vec<StepOptions> = (0..steps)
        .map(|i| if i % 2 == 0 { options(&[tree], CgroupMode::Auto) } else { options(&ORPHAN, CgroupMode::Auto) })
        .collect();
    let rounds = [
        (Executor::Tokio, if small { 1 } else { 20 }),
        (Executor::Smol, if small { 1 } else { 2 }),
        (Executor::Futures, if small { 1 } else { 2 }),
        (Executor::Blocking, if small { 1 } else { 2 }),
    ];
    for (executor, times) in rounds {
        for round in 0..times {
            let ran = run_all(&runner, executor, &each, parallel);
            assert_eq!(ran.len(), steps, "{executor:?} round {round}");
            for ran in &ran {
                let finished = ran.0.as_ref().unwrap_or_else(|e| panic!("{executor:?} round {round}: {e:?}"));
                let run = finished.document.stepmon.as_ref().unwrap();
                if run.command.first().is_some_and(|c| c == "sh") {
                    check_orphan(ran);
                } else {
                    check_tree(ran, true);
                }
            }
        }
    }
    runner.shutdown();
    no_cgroup_left();
}

#[test]
fn unprivileged_steps_without_cgroups_count_their_own_orphans() {
    let name = "unprivileged_steps_without_cgroups_count_their_own_orphans";
    let _one = one_at_a_time();
    if tree_program(name).is_none() || !root(name) {
        return;
    }
    // This test binary again, as nobody, running only the test below.
    as_nobody::rerun("as_nobody", CHILD);
}

/// The unprivileged half of the test above (run by it as `nobody`).
#[test]
#[ignore = "run as nobody by unprivileged_steps_without_cgroups_count_their_own_orphans"]
fn as_nobody() {
    assert!(std::env::var_os(CHILD).is_some(), "run by unprivileged_steps_without_cgroups_count_their_own_orphans");
    assert!(!rustix::process::geteuid().is_root());
    let tree = tree_program("as_nobody").unwrap();
    let tree = tree.to_str().unwrap();
    let runner = Runner::new().unwrap();
    let (steps, parallel) = sizes(32, 8);
    let each: Vec<StepOptions> = (0..steps)
        .map(|i| if i % 4 == 0 { options(&[tree], CgroupMode::Never) } else { options(&ORPHAN, CgroupMode::Never) })
        .collect();
    for ran in &run_all(&runner, Executor::Tokio, &each, parallel) {
        let finished = ran.0.as_ref().unwrap();
        if finished.document.stepmon.as_ref().unwrap().command[0] == "sh" {
            check_orphan(ran);
        } else {
            check_tree(ran, false);
        }
    }
    runner.shutdown();
}

#[test]
fn a_step_dropped_before_its_end_lets_its_runner_go() {
    let name = "a_step_dropped_before_its_end_lets_its_runner_go";
    let _one = one_at_a_time();
    if !root(name) {
        return;
    }
    // A builder that cancels an action drops its future (the step) unawaited;
    // dropping the runner afterwards must not wait for that step's end.
    let (done, dropped) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runner = Runner::new().unwrap();
        let step = runner.start(StepOptions::new(["sleep", "0.3"])).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        drop(step);
        drop(runner);
        done.send(()).unwrap();
    });
    assert!(dropped.recv_timeout(Duration::from_secs(30)).is_ok(), "dropping the runner hung");
    no_cgroup_left();
}
