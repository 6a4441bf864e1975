//! The memory watch on real steps (`stepmon_runner::watch`): a step growing
//! 20 MiB/s under a 200 MiB limit is warned about before the kernel's OOM
//! killer ends it; a step with no limit is judged against the machine's
//! available memory, here a `/proc/meminfo` fixture that leaves it 8 MiB,
//! and warned once per crossing. A progress names the busiest command,
//! counting the processes that ended since the previous progress once
//! each. Root (a memory cgroup of the step's own, the taskstats listener)
//! and python3 are needed.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use stepmon_testsupport::skip;

use std::path::Path;
use std::sync::{Arc, Mutex};

use std::time::Duration;

use stepmon_model::event::{MemoryBound, StepEvent};
use stepmon_model::progress::Progress;
use stepmon_runner::watch::{Callback, Watch};
use stepmon_runner::{StepOptions, prepare};

const PYTHON: &str = "/usr/bin/python3";
const MIB: u64 = 1 << 20;

/// One step at a time: the machine's memory is shared.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Whether `test` can run here: root and python3.
fn can_run(test: &str) -> bool {
    if !rustix::process::geteuid().is_root() {
        return skip::skipped(test, "a memory cgroup of the step's own needs root");
    }
    if !Path::new(PYTHON).exists() {
        return skip::skipped(test, "no /usr/bin/python3 (scripts/setup installs it)");
    }
    true
}

/// Runs `script` (python) with `watch` and `limit`; the document's events,
/// those the callback saw, and the document.
fn run(script: &str, mut watch: Watch, limit: Option<u64>) -> (Vec<StepEvent>, stepmon_runner::Finished) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&seen);
    watch = watch.with_events(Callback::new(move |event: &StepEvent| keep.lock().unwrap().push(event.clone())));
    let mut options = StepOptions::new([PYTHON, "-c", script]);
    options.limits.memory_max = limit;
    options.watch = watch;
    let finished = prepare(options).unwrap().run().unwrap();
    let seen = seen.lock().unwrap().clone();
    let run = finished.document.stepmon.as_ref().unwrap();
    assert_eq!(run.events, seen, "the document keeps what the callback was told");
    (seen, finished)
}

/// Grows 1 MiB every 50 ms (20 MiB/s, less the allocations' own time), for
/// `seconds` at most.
fn grow(seconds: u32) -> String {
    format!(
        "import time\nb = []\nfor _ in range({seconds} * 20):\n    b.append(b'x' * (1 << 20))\n    time.sleep(0.05)\n"
    )
}

#[test]
fn a_step_growing_20_mib_a_second_is_warned_before_its_200_mib_limit_kills_it() {
    let test = "a_step_growing_20_mib_a_second_is_warned_before_its_200_mib_limit_kills_it";
    if !can_run(test) {
        return;
    }
    let (events, finished) = run(&grow(30), Watch::default(), Some(200 * MIB));
    assert_eq!(finished.exit_code, 137, "OOM-killed: {:?}", finished.messages);
    assert_eq!(events.len(), 1, "one crossing, one event: {events:#?}");
    let memory = events[0].memory.as_ref().unwrap();
    assert_eq!(memory.bound, MemoryBound::OwnLimit, "{memory:#?}");
    assert_eq!(memory.limit_bytes, 200 * MIB);
    assert!(memory.file.ends_with("memory.limit_in_bytes") || memory.file.ends_with("memory.max"), "{}", memory.file);
    assert!((0.9..1.0).contains(&memory.share), "{memory:#?}");
    let trend = memory.trend_bytes_per_second.unwrap() / 1_048_576.0;
    assert!((8.0..=24.0).contains(&trend), "about 20 MiB/s, less the allocation time: {trend:.1} MiB/s");
    assert!(memory.largest.iter().any(|p| p.command.starts_with("python")), "{:#?}", memory.largest);
    // The kill is at the step's end (its main process is the grower).
    let end = finished.document.stepmon.as_ref().unwrap().end.unwrap();
    let before = end.duration_since(events[0].at).as_secs_f64();
    eprintln!("warned {before:.3} s before the kill, at {:.1}% ({trend:.1} MiB/s)", memory.share * 100.0);
    assert!(before >= 0.5, "warned only {before:.3} s before the kill");
}

/// A `/proc/meminfo` of this machine with `MemAvailable` set to `kib`.
fn meminfo_with_available(dir: &Path, kib: u64) {
    let real = std::fs::read_to_string("/proc/meminfo").unwrap();
    let faked: String = real
        .lines()
        .map(|line| {
            if line.starts_with("MemAvailable:") { format!("MemAvailable:   {kib} kB\n") } else { format!("{line}\n") }
        })
        .collect();
    std::fs::write(dir.join("meminfo"), faked).unwrap();
}

#[test]
fn without_a_limit_the_machine_bounds_it_once_per_crossing() {
    let test = "without_a_limit_the_machine_bounds_it_once_per_crossing";
    if !can_run(test) {
        return;
    }
    let proc_root = tempfile::tempdir().unwrap();
    meminfo_with_available(proc_root.path(), 8 * 1024);
    let mut watch = Watch::default();
    watch.proc_root = proc_root.path().to_path_buf();
    // 80 MiB (91% of 80 + 8), freed (about 10%: re-armed), 80 MiB again.
    let script = "import time\nb = b'x' * (80 << 20)\ntime.sleep(1.5)\ndel b\ntime.sleep(1.5)\nb = b'y' * (80 << 20)\ntime.sleep(1.5)\n";
    let (events, finished) = run(script, watch, None);
    assert_eq!(finished.exit_code, 0);
    assert_eq!(events.len(), 2, "two crossings, an event each: {events:#?}");
    for event in &events {
        let memory = event.memory.as_ref().unwrap();
        assert_eq!(memory.bound, MemoryBound::Machine, "{memory:#?}");
        assert_eq!(memory.file, proc_root.path().join("meminfo").display().to_string());
        assert_eq!(memory.limit_bytes, memory.usage_bytes + 8 * MIB, "usage + MemAvailable");
        assert!(memory.share >= 0.9 && memory.usage_bytes >= 72 * MIB, "{memory:#?}");
    }
    let gap = events[1].at.duration_since(events[0].at).as_secs_f64();
    assert!(gap >= 2.0, "the second crossing is the second allocation's, 3 s later: {gap:.2} s");
}

#[test]
fn a_progress_names_the_busiest_command_counting_the_processes_that_ended_since_the_last() {
    let test = "a_progress_names_the_busiest_command_counting_the_processes_that_ended_since_the_last";
    if !can_run(test) {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // A sleep beside twelve python3s of 0.25 s each, one after the other:
    // each progress (a second) sees some end and one run.
    let busy = "import time\nend = time.time() + 0.25\nwhile time.time() < end:\n    pass\n";
    let script = format!("sleep 4 & for i in 1 2 3 4 5 6 7 8 9 10 11 12; do {PYTHON} -c '{busy}'; done; wait");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&lines);
    let mut options = StepOptions::new(["/bin/sh", "-c", &script]);
    options.watch = Watch::default()
        .with_progress(Duration::from_secs(1), Callback::new(move |p: &Progress| seen.lock().unwrap().push(p.clone())));
    let finished = prepare(options).unwrap().run().unwrap();
    assert_eq!(finished.exit_code, 0, "{:?}", finished.messages);
    let lines = lines.lock().unwrap().clone();
    assert!(lines.len() >= 2, "{lines:#?}");
    let busiest: Vec<_> = lines.iter().filter_map(|p| p.busiest.clone()).collect();
    assert_eq!(busiest.len(), lines.len(), "a busiest command in every progress: {lines:#?}");
    assert!(busiest.iter().all(|b| b.command == "python3" && b.cpu_cores > 0.0), "{busiest:#?}");
    // Processes that ended since the previous progress count: one running
    // python3 alone would be one process.
    assert!(busiest.iter().any(|b| b.processes >= 2), "{busiest:#?}");
    // Each process's CPU time counts once: over every progress at most
    // what the step used in all (a process seen running at one progress and
    // ended at the next is differenced, not counted whole again).
    let step_cpu = finished.document.stepmon.as_ref().unwrap().summary.cpu.usage_seconds.unwrap();
    let counted: f64 = busiest.iter().map(|b| b.cpu_seconds).sum();
    eprintln!("busiest over {} progresses: {counted:.3} s of the step's {step_cpu:.3} s", busiest.len());
    assert!(counted <= step_cpu * 1.05 + 0.02, "{counted:.3} s counted of {step_cpu:.3} s: {busiest:#?}");
}
