//! What a build system does with stepmon: run N measured steps, P at a
//! time, in one process, and print each step's numbers as a JSON line.
//!
//! ```text
//! builder --steps N --parallel P [--runtime tokio|smol|futures|blocking]
//!         [--no-cgroup] [--plain] [--heap-mib M] -- CMD ARGS...
//! ```
//!
//! One line per step from its typed result (`Finished::result`),
//! `{"step", "exitCode", "wallSeconds", "cpuSeconds", "memoryPeakBytes",
//! "memorySource", "processesReaped", "leftoversKilled", "overheadSeconds",
//! "placementSeconds", "exitToResultSeconds"}` (`null` where not measured),
//! then `{"steps", "failed", "wallSeconds"}`. `overheadSeconds` is the time
//! from the start call to the result less the step's own wall time. `--plain` runs the
//! steps with `std::process::Command`, unmeasured, for comparison.
//! `--heap-mib M` first fills M MiB of heap and holds it, as a builder's
//! own state would be (what forking from a large process costs a step).

use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use futures::StreamExt;
use serde_json::{Value, json};
use stepmon_runner::{CgroupMode, Finished, RunError, Runner, StepOptions};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runtime {
    Tokio,
    Smol,
    Futures,
    Blocking,
}

#[derive(Debug, Clone)]
struct Args {
    steps: usize,
    parallel: usize,
    runtime: Runtime,
    no_cgroup: bool,
    plain: bool,
    heap_mib: usize,
    command: Vec<OsString>,
}

fn parse() -> Result<Args, String> {
    let mut args = std::env::args_os().skip(1);
    let mut parsed = Args {
        steps: 1,
        parallel: 1,
        runtime: Runtime::Blocking,
        no_cgroup: false,
        plain: false,
        heap_mib: 0,
        command: Vec::new(),
    };
    let number = |value: Option<OsString>, name: &str| -> Result<usize, String> {
        value.and_then(|v| v.into_string().ok()).and_then(|v| v.parse().ok()).ok_or(format!("{name} needs a number"))
    };
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--steps") => parsed.steps = number(args.next(), "--steps")?,
            Some("--parallel") => parsed.parallel = number(args.next(), "--parallel")?.max(1),
            Some("--runtime") => {
                parsed.runtime = match args.next().and_then(|v| v.into_string().ok()).as_deref() {
                    Some("tokio") => Runtime::Tokio,
                    Some("smol") => Runtime::Smol,
                    Some("futures") => Runtime::Futures,
                    Some("blocking") => Runtime::Blocking,
                    other => return Err(format!("--runtime tokio|smol|futures|blocking, not {other:?}")),
                }
            }
            Some("--no-cgroup") => parsed.no_cgroup = true,
            Some("--plain") => parsed.plain = true,
            Some("--heap-mib") => parsed.heap_mib = number(args.next(), "--heap-mib")?,
            Some("--") => {
                parsed.command = args.collect();
                break;
            }
            _ => return Err(format!("unknown argument {}", arg.to_string_lossy())),
        }
    }
    if parsed.command.is_empty() {
        return Err("usage: builder --steps N --parallel P [--runtime R] [--no-cgroup] [--plain] -- CMD ARGS...".into());
    }
    Ok(parsed)
}

fn options(args: &Args) -> StepOptions {
    let mut options = StepOptions::new(&args.command);
    if args.no_cgroup {
        options.cgroup = CgroupMode::Never;
    }
    options
}

/// The step's JSON line, from its typed result.
fn line(step: usize, result: Result<Finished, RunError>, took: f64) -> Value {
    let finished = match result {
        Ok(finished) => finished,
        Err(e) => {
            let error = std::error::Error::source(&e).map_or_else(|| e.to_string(), |why| format!("{e}: {why}"));
            return json!({"step": step, "error": error, "errorKind": format!("{:?}", e.kind()), "exitCode": null});
        }
    };
    let r = &finished.result;
    let cpu = r.cpu_user_seconds.value.zip(r.cpu_system_seconds.value).map(|(user, system)| user + system);
    json!({
        "step": step,
        "exitCode": finished.exit_code,
        "wallSeconds": r.wall_seconds,
        "cpuSeconds": cpu,
        "memoryPeakBytes": r.memory_peak_bytes.value,
        "memorySource": r.memory_peak_bytes.rung.and_then(|rung| serde_json::to_value(rung).ok()),
        "processesReaped": r.processes_reaped,
        "leftoversKilled": r.leftovers_killed,
        "overheadSeconds": r.wall_seconds.map(|w| (took - w).max(0.0)),
        "placementSeconds": r.cost.placement_seconds,
        "exitToResultSeconds": r.cost.exit_to_result_seconds,
    })
}

/// Prints a step's line; whether it failed.
fn report(step: usize, result: Result<Finished, RunError>, started: Instant) -> bool {
    let value = line(step, result, started.elapsed().as_secs_f64());
    println!("{value}");
    value["exitCode"] != json!(0)
}

/// Runs `each(step)` for every step, `args.parallel` threads at a time;
/// how many returned `true` (failed).
fn on_threads(args: &Args, each: impl Fn(usize) -> bool + Sync) -> usize {
    let next = AtomicUsize::new(0);
    let failed = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..args.parallel {
            scope.spawn(|| {
                loop {
                    let step = next.fetch_add(1, Ordering::SeqCst);
                    if step >= args.steps {
                        return;
                    }
                    if each(step) {
                        failed.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
        }
    });
    failed.into_inner()
}

fn run_blocking(args: &Args, runner: &Runner) -> usize {
    on_threads(args, |step| {
        let started = Instant::now();
        let result = runner.start(options(args)).and_then(stepmon_runner::Step::wait);
        report(step, result, started)
    })
}

/// One step as a future: started (placement is a few file writes, done
/// inline), then awaited.
async fn one(runner: Runner, args: Args, step: usize) -> bool {
    let started = Instant::now();
    let result = match runner.start(options(&args)) {
        Ok(running) => running.await,
        Err(e) => Err(e),
    };
    report(step, result, started)
}

fn run_async(args: &Args, runner: &Runner) -> usize {
    let steps = futures::stream::iter(0..args.steps);
    match args.runtime {
        Runtime::Tokio => {
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
            runtime.block_on(async {
                let tasks = steps.map(|step| tokio::spawn(one(runner.clone(), args.clone(), step)));
                let results: Vec<_> = tasks.buffer_unordered(args.parallel).collect().await;
                results.into_iter().filter(|r| r.as_ref().map_or(true, |failed| *failed)).count()
            })
        }
        Runtime::Smol => smol::block_on(async {
            let tasks = steps.map(|step| smol::spawn(one(runner.clone(), args.clone(), step)));
            let results: Vec<bool> = tasks.buffer_unordered(args.parallel).collect().await;
            results.into_iter().filter(|failed| *failed).count()
        }),
        Runtime::Futures | Runtime::Blocking => futures::executor::block_on(async {
            let results: Vec<bool> = steps
                .map(|step| one(runner.clone(), args.clone(), step))
                .buffer_unordered(args.parallel)
                .collect()
                .await;
            results.into_iter().filter(|failed| *failed).count()
        }),
    }
}

/// `--plain`: the same steps with `std::process::Command`, unmeasured.
fn run_plain(args: &Args) -> usize {
    on_threads(args, |step| {
        let started = Instant::now();
        let status = std::process::Command::new(&args.command[0]).args(&args.command[1..]).status();
        let code = status.ok().and_then(|s| s.code());
        println!("{}", json!({"step": step, "exitCode": code, "wallSeconds": started.elapsed().as_secs_f64()}));
        code != Some(0)
    })
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("builder: {e}");
            return ExitCode::from(2);
        }
    };
    // Touched, so that every page is mapped (as a builder's state is).
    let heap = vec![1u8; args.heap_mib << 20];
    let started = Instant::now();
    let failed = if args.plain {
        run_plain(&args)
    } else {
        let runner = match Runner::new() {
            Ok(runner) => runner,
            Err(e) => {
                eprintln!("builder: {e}");
                return ExitCode::from(2);
            }
        };
        let failed =
            if args.runtime == Runtime::Blocking { run_blocking(&args, &runner) } else { run_async(&args, &runner) };
        runner.shutdown();
        failed
    };
    println!("{}", json!({"steps": args.steps, "failed": failed, "wallSeconds": started.elapsed().as_secs_f64()}));
    drop(std::hint::black_box(heap));
    if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
