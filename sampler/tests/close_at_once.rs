//! Many steps of one `Monitor` recorded and closed at once with the async
//! `Recorder::close`, round after round, on tokio's multi-thread runtime, on
//! smol and on `futures::executor` (`block_on` + `join_all`): no close may
//! hang, and every usage ends with the final samples its close took.
//!
//! Each round is what a builder's tasks do: open a step's recording
//! (`Monitor::record`, a blocking call, on the executor's thread), then
//! await its close, while the other steps of the round do the same, and
//! the sampler thread ticks (1 ms) on the machine's probe they all share.
//! A `record` that blocked on that probe must not park a thread that a
//! close waiting for the same probe needs.
//!
//! The step's cgroup and `/proc` are fake directories shaped like this
//! project's hybrid hosts (a cgroup v2 leaf with no controller enabled:
//! `cpu.stat`'s core keys and PSI), so that a round costs a few small file
//! reads, not the kernel's: 1,000 rounds of 64 steps cost about ten CPU
//! seconds per executor in a debug build.
//!
//! A round that does not end within [`ROUND_LIMIT`] fails the test, naming
//! the round and how many of its closes finished, instead of hanging.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::task::Poll;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use stepmon_model::sample::StepUsage;
use stepmon_sampler::{Monitor, MonitorOptions, NetworkSource, Policy};

/// Steps recorded and closed at once in each round.
const STEPS: usize = 64;
/// Rounds per executor.
const ROUNDS: usize = 1000;
/// How long one round may take before it counts as hung: a round takes a
/// few milliseconds; this is generous for a loaded 2-CPU machine.
const ROUND_LIMIT: Duration = Duration::from_secs(20);
/// `cpu.stat`'s `usage_usec` of the fake cgroup.
const USAGE_USEC: u64 = 1_500_000;

/// One step's recording, opened and closed: when its close began, and the usage.
type Step = Pin<Box<dyn Future<Output = (Timestamp, StepUsage)> + Send>>;

/// The fake step cgroup and `/proc`, removed on drop (also when the test fails).
struct FakeHost {
    scratch: tempfile::TempDir,
}

impl FakeHost {
    fn new() -> FakeHost {
        let scratch = tempfile::Builder::new().prefix("stepmon-close-at-once-").tempdir().unwrap();
        let pressure =
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=400\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=100\n";
        let cgroup = [
            // What a leaf of a cgroup v2 hierarchy without controllers has
            // (https://docs.kernel.org/admin-guide/cgroup-v2.html, "Core Interface Files").
            ("cgroup.controllers", String::new()),
            ("cgroup.events", "populated 0\nfrozen 0\n".to_owned()),
            ("cpu.stat", format!("usage_usec {USAGE_USEC}\nuser_usec 1200000\nsystem_usec 300000\n")),
            ("cpu.pressure", pressure.to_owned()),
            ("memory.pressure", pressure.to_owned()),
            ("io.pressure", pressure.to_owned()),
        ];
        let proc = [
            (
                "stat",
                "cpu  165774 28794 34927 14370 1523 0 164 209 0 0\n\
                 cpu0 83447 13730 16753 8208 607 0 15 95 0 0\n\
                 cpu1 82327 15064 18174 6162 916 0 148 113 0 0\n\
                 ctxt 5509798\nbtime 1796546997\nprocesses 88433\nprocs_running 3\nprocs_blocked 0\n"
                    .to_owned(),
            ),
            (
                "meminfo",
                "MemTotal:       24683772 kB\nMemFree:         3483748 kB\nMemAvailable:   22652968 kB\n\
                 Buffers:           71296 kB\nCached:         18553396 kB\nSwapTotal:             0 kB\n\
                 SwapFree:              0 kB\n"
                    .to_owned(),
            ),
            ("loadavg", "0.52 0.58 0.59 1/222 23545\n".to_owned()),
            ("pressure/cpu", pressure.to_owned()),
            ("pressure/memory", pressure.to_owned()),
            ("pressure/io", pressure.to_owned()),
        ];
        let host = FakeHost { scratch };
        std::fs::create_dir_all(host.cgroup()).unwrap();
        std::fs::create_dir_all(host.proc().join("pressure")).unwrap();
        for (name, content) in cgroup {
            std::fs::write(host.cgroup().join(name), content).unwrap();
        }
        for (name, content) in proc {
            std::fs::write(host.proc().join(name), content).unwrap();
        }
        host
    }

    fn cgroup(&self) -> PathBuf {
        self.scratch.path().join("step")
    }

    fn proc(&self) -> PathBuf {
        self.scratch.path().join("proc")
    }
}

/// A monitor of the fake host whose machine's sampler ticks every 1 ms.
fn monitor(proc_root: PathBuf) -> Monitor {
    let mut system = Policy::system();
    system.min_interval = Duration::from_millis(1);
    let mut options = MonitorOptions::default();
    options.system_policy = system;
    options.proc_root = proc_root;
    Monitor::new(options).unwrap()
}

/// Lets the executor poll its other futures once.
async fn yield_now() {
    let mut yielded = false;
    futures::future::poll_fn(|cx| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
    .await;
}

/// One step's recording as a builder's task has it: opened (the blocking
/// `Monitor::record`, on the executor's thread) after `delay` turns of the
/// executor, so that some steps open while others close; then closed
/// with the async `close`, counted in `closed` (for the hang message).
fn step(monitor: &Monitor, cgroup: &Path, delay: usize, closed: &Arc<AtomicUsize>) -> Step {
    let (monitor, cgroup, closed) = (monitor.clone(), cgroup.to_path_buf(), Arc::clone(closed));
    Box::pin(async move {
        for _ in 0..delay {
            yield_now().await;
        }
        let recorder = monitor.record(&cgroup, &NetworkSource::SharedNamespace).unwrap();
        yield_now().await;
        let closing = Timestamp::now();
        let usage = recorder.close().await;
        closed.fetch_add(1, Ordering::SeqCst);
        (closing, usage)
    })
}

/// Every usage has its baseline and the final samples its close took (at
/// or after the close began): the step's, and the machine's over the step.
fn check_final_samples(executor: &str, round: usize, usages: &[(Timestamp, StepUsage)]) {
    assert_eq!(usages.len(), STEPS, "{executor}, round {round}: one usage per step");
    for (i, (closing, usage)) in usages.iter().enumerate() {
        let at = format!("{executor}, round {round}, step {i}");
        let samples = &usage.resource_usage.samples;
        assert!(samples.len() >= 2, "{at}: a baseline and a final sample: {samples:?}");
        let last = samples.last().unwrap();
        assert!(last.timestamp >= *closing, "{at}: no step sample taken by the close");
        assert_eq!(last.cpu_stat.unwrap().usage_nanos, Some(USAGE_USEC * 1000), "{at}");
        let machine = usage.sys_usage.last().unwrap_or_else(|| panic!("{at}: no sysUsage"));
        assert!(machine.timestamp >= *closing, "{at}: no machine sample taken by the close");
        assert!(usage.resource_usage.sys_cpu_stat.is_some(), "{at}: no sysCPUStat");
    }
}

/// Runs [`ROUNDS`] rounds of [`STEPS`] steps on a thread of their own,
/// `run_all` awaiting a round's steps on one executor (usages in the order
/// given); fails naming the round and the closes that finished when one
/// takes longer than [`ROUND_LIMIT`].
fn rounds(executor: &'static str, run_all: impl Fn(Vec<Step>) -> Vec<(Timestamp, StepUsage)> + Send + 'static) {
    let host = FakeHost::new();
    let (cgroup, proc_root) = (host.cgroup(), host.proc());
    let (done, rounds_done) = mpsc::channel::<usize>();
    let closed = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&closed);
    let started = Instant::now();
    let runner = std::thread::spawn(move || {
        let monitor = monitor(proc_root);
        for round in 0..ROUNDS {
            counter.store(0, Ordering::SeqCst);
            let usages = run_all((0..STEPS).map(|i| step(&monitor, &cgroup, i % 8, &counter)).collect());
            check_final_samples(executor, round, &usages);
            assert_eq!(monitor.open_recordings(), 0, "{executor}, round {round}: every recording finalised");
            if done.send(round).is_err() {
                return;
            }
        }
        monitor.shutdown_blocking();
    });
    for expected in 0..ROUNDS {
        match rounds_done.recv_timeout(ROUND_LIMIT) {
            Ok(round) => assert_eq!(round, expected),
            Err(mpsc::RecvTimeoutError::Timeout) => panic!(
                "{executor}: round {expected} of {ROUNDS} hung: {} of its {STEPS} closes finished in {ROUND_LIMIT:?}",
                closed.load(Ordering::SeqCst)
            ),
            // The thread panicked (a failed check): its message follows.
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    if let Err(panic) = runner.join() {
        std::panic::resume_unwind(panic);
    }
    eprintln!("{executor}: {ROUNDS} rounds of {STEPS} steps recorded and closed at once in {:?}", started.elapsed());
}

#[test]
fn steps_close_at_once_on_tokio() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
    rounds("tokio", move |steps| {
        runtime.block_on(async {
            let tasks: Vec<_> = steps.into_iter().map(tokio::spawn).collect();
            let mut usages = Vec::with_capacity(tasks.len());
            for task in tasks {
                usages.push(task.await.unwrap());
            }
            usages
        })
    });
}

#[test]
fn steps_close_at_once_on_smol() {
    rounds("smol", |steps| {
        smol::block_on(async {
            let tasks: Vec<_> = steps.into_iter().map(smol::spawn).collect();
            let mut usages = Vec::with_capacity(tasks.len());
            for task in tasks {
                usages.push(task.await);
            }
            usages
        })
    });
}

#[test]
fn steps_close_at_once_on_futures_block_on() {
    rounds("futures::executor", |steps| futures::executor::block_on(futures::future::join_all(steps)));
}
