//! What a build system does with stepmon: run N measured steps, P at a
//! time, in one process, and print each step's numbers as a JSON line.
//!
//! ```text
//! builder --steps N --parallel P [--runtime tokio|smol|futures|blocking]
//!         [--no-cgroup] [--plain] [--heap-mib M] [--dir DIR] [--inherit-stdout]
//!         [--show-stdout] -- CMD ARGS...
//! ```
//!
//! Each step is an action as a build system gives it: its own variable
//! `STEP_INDEX` (0, 1, ...), its own working directory (a new temporary
//! directory per step, or `--dir DIR` for all), and its stdout piped and
//! read whole while it runs (`--inherit-stdout`: this process's stdout
//! instead), as cargo reads rustc's JSON.
//!
//! One line per step from its typed result (`Finished::result`),
//! `{"step", "exitCode", "wallSeconds", "cpuSeconds", "memoryPeakBytes",
//! "memorySource", "processesReaped", "leftoversKilled", "overheadSeconds",
//! "placementSeconds", "exitToResultSeconds", "stdoutBytes", "sources",
//! "missing", "accounting"}` (`null` where not measured or not piped;
//! `sources`: each measured number's rung and bound, `missing`: why each
//! other one is not, `accounting`: off Linux what the OS accounted, a
//! Windows job object's or a `wait4` rusage), then `{"steps", "failed",
//! "wallSeconds"}`. The same code on Linux, Windows and macOS.
//! `overheadSeconds` is the time from the start call to the result less the
//! step's own wall time. `--show-stdout` adds `"stdout"`, what the step
//! printed (as UTF-8, invalid bytes replaced), to its line. `--plain` runs the same actions (variable,
//! directory, pipe) with `std::process::Command`, unmeasured, for
//! comparison. `--heap-mib M` first fills M MiB of heap and holds it, as a
//! builder's own state would be (what forking from a large process costs a
//! step).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use futures::StreamExt;
use serde_json::{Value, json};
use stepmon_model::result::{Reading, StepResult};
use stepmon_runner::{CgroupMode, Finished, RunError, Runner, Stdio, StepOptions};

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
    /// The working directory of every step (`None`: one of its own each).
    dir: Option<PathBuf>,
    inherit_stdout: bool,
    show_stdout: bool,
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
        dir: None,
        inherit_stdout: false,
        show_stdout: false,
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
            Some("--dir") => parsed.dir = Some(args.next().ok_or("--dir needs a directory")?.into()),
            Some("--inherit-stdout") => parsed.inherit_stdout = true,
            Some("--show-stdout") => parsed.show_stdout = true,
            Some("--") => {
                parsed.command = args.collect();
                break;
            }
            _ => return Err(format!("unknown argument {}", arg.to_string_lossy())),
        }
    }
    if parsed.command.is_empty() {
        return Err("usage: builder --steps N --parallel P [--runtime R] [--no-cgroup] [--plain] [--dir DIR] \
                    [--inherit-stdout] [--show-stdout] -- CMD ARGS..."
            .into());
    }
    Ok(parsed)
}

/// A step's working directory: the one given, or a new temporary one
/// (removed when dropped, after the step).
enum Workdir {
    Given(PathBuf),
    Own(tempfile::TempDir),
}

impl Workdir {
    fn new(args: &Args) -> std::io::Result<Workdir> {
        match &args.dir {
            Some(dir) => Ok(Workdir::Given(dir.clone())),
            None => tempfile::Builder::new().prefix("builder-step-").tempdir().map(Workdir::Own),
        }
    }

    fn path(&self) -> &Path {
        match self {
            Workdir::Given(dir) => dir,
            Workdir::Own(dir) => dir.path(),
        }
    }
}

/// Step `step`'s action: its variable, its directory, its stdout.
fn options(args: &Args, step: usize, dir: &Workdir) -> StepOptions {
    let mut options = StepOptions::new(&args.command);
    if args.no_cgroup {
        options.cgroup = CgroupMode::Never;
    }
    options.env("STEP_INDEX", step.to_string()).current_dir(dir.path());
    if !args.inherit_stdout {
        options.stdout(Stdio::piped());
    }
    options
}

/// The step's JSON line, from its typed result.
fn line(step: usize, result: Result<Finished, RunError>, took: f64, piped: bool) -> Value {
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
        "stdoutBytes": piped.then_some(finished.stdout.len()),
        "sources": sources(r),
        "missing": missing(r),
        "accounting": finished.document.stepmon.as_ref().and_then(|run| run.accounting),
    })
}

/// A reading's source (`"jobObject exact"`) or why it is absent.
fn labelled<T>(reading: &Reading<T>) -> Result<String, String> {
    match (reading.rung, reading.bound, &reading.missing) {
        (Some(rung), Some(bound), _) => Ok(format!("{} {bound:?}", rung.as_str())),
        (_, _, Some(why)) => Err(why.clone()),
        _ => Err("no source".to_owned()),
    }
}

/// Each reading of `r` by name: its source, or why it is absent.
fn readings(r: &StepResult) -> [(&'static str, Result<String, String>); 5] {
    [
        ("cpuUser", labelled(&r.cpu_user_seconds)),
        ("memoryPeak", labelled(&r.memory_peak_bytes)),
        ("ioRead", labelled(&r.io_read_bytes)),
        ("pidsPeak", labelled(&r.pids_peak)),
        ("cpuStall", labelled(&r.cpu_stall_seconds)),
    ]
}

/// `{"cpuUser": "jobObject Exact", ...}` for the numbers measured.
fn sources(r: &StepResult) -> Value {
    Value::Object(readings(r).into_iter().filter_map(|(name, l)| Some((name.to_owned(), json!(l.ok()?)))).collect())
}

/// `{"memoryPeak": "memory: ...", ...}` for the numbers not measured.
fn missing(r: &StepResult) -> Value {
    Value::Object(readings(r).into_iter().filter_map(|(name, l)| Some((name.to_owned(), json!(l.err()?)))).collect())
}

/// Prints a step's line; whether it failed.
fn report(args: &Args, step: usize, result: Result<Finished, RunError>, started: Instant) -> bool {
    let printed =
        result.as_ref().ok().filter(|_| args.show_stdout).map(|f| String::from_utf8_lossy(&f.stdout).into_owned());
    let mut value = line(step, result, started.elapsed().as_secs_f64(), !args.inherit_stdout);
    if let (Some(printed), Some(fields)) = (printed, value.as_object_mut()) {
        fields.insert("stdout".to_owned(), json!(printed));
    }
    println!("{value}");
    value["exitCode"] != json!(0)
}

/// A step that could not be given its directory.
fn no_dir(step: usize, error: &std::io::Error) -> bool {
    println!("{}", json!({"step": step, "error": format!("cannot create its directory: {error}"), "exitCode": null}));
    true
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
        let dir = match Workdir::new(args) {
            Ok(dir) => dir,
            Err(e) => return no_dir(step, &e),
        };
        // Its stdout read as it comes (no thread: one poll with the step's end).
        let result = runner.start(options(args, step, &dir)).and_then(stepmon_runner::Step::wait_with_output);
        report(args, step, result, started)
    })
}

/// One step as a future: started (placement is a few file writes, done
/// inline), then awaited with its stdout read meanwhile.
async fn one(runner: Runner, args: Args, step: usize) -> bool {
    let started = Instant::now();
    let dir = match Workdir::new(&args) {
        Ok(dir) => dir,
        Err(e) => return no_dir(step, &e),
    };
    let result = match runner.start(options(&args, step, &dir)) {
        Ok(running) => running.output().await,
        Err(e) => Err(e),
    };
    report(&args, step, result, started)
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

/// `--plain`: the same actions with `std::process::Command`, unmeasured.
fn run_plain(args: &Args) -> usize {
    on_threads(args, |step| {
        let started = Instant::now();
        let dir = match Workdir::new(args) {
            Ok(dir) => dir,
            Err(e) => return no_dir(step, &e),
        };
        let mut command = std::process::Command::new(&args.command[0]);
        command.args(&args.command[1..]).env("STEP_INDEX", step.to_string()).current_dir(dir.path());
        let (code, stdout) = if args.inherit_stdout {
            (command.status().ok().and_then(|s| s.code()), None)
        } else {
            // The measured steps' streams: `output()` would make stdin null
            // and pipe stderr too; they inherit both.
            command.stdin(std::process::Stdio::inherit()).stderr(std::process::Stdio::inherit());
            match command.output() {
                Ok(output) => (output.status.code(), Some(output.stdout)),
                Err(_) => (None, None),
            }
        };
        let wall = started.elapsed().as_secs_f64();
        let mut value =
            json!({"step": step, "exitCode": code, "wallSeconds": wall, "stdoutBytes": stdout.as_ref().map(Vec::len)});
        if let (Some(stdout), true, Some(fields)) = (&stdout, args.show_stdout, value.as_object_mut()) {
            fields.insert("stdout".to_owned(), json!(String::from_utf8_lossy(stdout)));
        }
        println!("{value}");
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
