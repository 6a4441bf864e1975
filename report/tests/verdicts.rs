//! Every verdict on recorded runs (a pure-v2 VM run with an OOM kill and
//! cpu.max throttling; hybrid-host runs recorded while the machine was busy
//! compiling) and on variations of them that move one number across a
//! threshold.

use serde_json::{Value, json};
use stepmon_model::document::RunDocument;
use stepmon_model::verdict::Verdicts;
use stepmon_model::verdict::{Bottleneck, CpuStallCause, MachineLoad, MemoryOutcome, Thresholds};
use stepmon_report::{Step, units};

fn recorded(name: &str) -> Value {
    let path = format!("{}/tests/data/runs/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn step_of(document: Value) -> Step {
    let document: RunDocument = serde_json::from_value(document).unwrap();
    Step::from_run(&document)
}

const PURE_V2: &str = "pure-v2-6.1-oom-throttled-io.json";

/// Sets the PSI `some` total (µs) of `resource` (`cpuStat`, `memoryStat`,
/// `ioStat`) in the last sample, the first staying as recorded.
fn set_last_stall(document: &mut Value, resource: &str, total_usec: u64) {
    let samples = document["resourceUsage"]["samples"].as_array_mut().unwrap();
    let last = samples.last_mut().unwrap();
    last[resource]["pressure"]["some"]["total"] = json!(total_usec);
}

fn first_stall(document: &Value, resource: &str) -> u64 {
    document["resourceUsage"]["samples"][0][resource]["pressure"]["some"]["total"].as_u64().unwrap()
}

fn wall(document: &Value) -> f64 {
    document["stepmon"]["summary"]["wallSeconds"].as_f64().unwrap()
}

#[test]
fn pure_v2_run_is_cpu_bound_by_its_own_limit_and_oom_killed() {
    let step = step_of(recorded(PURE_V2));
    let v = step.verdicts();
    assert_eq!(v.bottleneck.class, Bottleneck::CpuBound);
    assert_eq!(v.bottleneck.cpu_stall_from_own_limit, Some(true));
    // 2_209_721 µs of CPU stall in 6.66484016 s of wall time.
    let share = v.bottleneck.cpu_stall_share.unwrap();
    assert!((share - 2.209721 / 6.66484016).abs() < 1e-9, "{share}");

    assert_eq!(v.throttling.throttled, Some(true));
    assert_eq!(v.throttling.throttled_periods, Some(48));
    assert!((v.throttling.throttled_share.unwrap() - 3.132274 / 6.66484016).abs() < 1e-9);
    assert_eq!(v.throttling.limit_cores, Some(0.5));

    assert_eq!(v.memory.class, MemoryOutcome::OomKilled);
    assert_eq!(v.memory.oom_kills, Some(1));
    assert_eq!(v.memory.max_hits, Some(35));
    assert_eq!(v.memory.limit_bytes, Some(48 << 20));
    assert_eq!(v.memory.peak_share_of_limit, Some(1.0));

    // The machine's CPU pressure (31%) is the step's own throttling: quiet.
    assert_eq!(v.machine.class, MachineLoad::Quiet, "{}", v.machine.reason);
    assert!(v.machine.machine_cpu_stall_share.unwrap() > 0.3);

    let collector = v.collector.as_ref().unwrap();
    assert_eq!((collector.samples, collector.sys_samples), (4, 5));
    assert_eq!(collector.negligible, Some(false), "0.84 s of CPU under emulation is 12.7% of the wall");
    assert_eq!(v.sentences().len(), 5);
}

#[test]
fn hybrid_runs_name_what_was_not_measured_and_the_busy_machine() {
    for name in ["hybrid-cpu-3s.json", "hybrid-exit7.json", "hybrid-net-isolated.json"] {
        let v = step_of(recorded(name)).verdicts();
        assert_eq!(v.memory.class, MemoryOutcome::Unknown, "{name}: no memory controller on cgroup v2 here");
        assert_eq!(v.throttling.throttled, None, "{name}");
        assert!(v.throttling.reason.starts_with("throttling not measured"), "{name}");
        // Recorded while two cores compiled other crates.
        assert_eq!(v.machine.class, MachineLoad::Busy, "{name}: {}", v.machine.reason);
        assert!(v.machine.others_busy_share.unwrap() >= 0.5, "{name}");
        assert!(v.collector.is_some());
    }
    let v = step_of(recorded("hybrid-cpu-3s.json")).verdicts();
    assert_eq!(v.bottleneck.class, Bottleneck::CpuBound, "the busy machine made the step wait");
    assert_eq!(v.bottleneck.cpu_stall_from_own_limit, None);
    assert!(v.bottleneck.reason.contains("other work competed"), "{}", v.bottleneck.reason);
}

#[test]
fn the_largest_stall_at_or_above_the_threshold_decides() {
    let t = Thresholds::default();
    for (resource, class) in [("memoryStat", Bottleneck::MemoryBound), ("ioStat", Bottleneck::IoBound)] {
        let mut doc = recorded(PURE_V2);
        // CPU stall is 33.2% of the wall: give `resource` 40%.
        let total = first_stall(&doc, resource) + (wall(&doc) * 0.40 * 1e6) as u64;
        set_last_stall(&mut doc, resource, total);
        let v = step_of(doc).verdicts();
        assert_eq!(v.bottleneck.class, class, "{}", v.bottleneck.reason);
    }
    // Every stall just below the threshold: not stalled.
    let mut doc = recorded(PURE_V2);
    for resource in ["cpuStat", "memoryStat", "ioStat"] {
        let below = first_stall(&doc, resource) + (wall(&doc) * (t.stall_share - 0.001) * 1e6) as u64;
        set_last_stall(&mut doc, resource, below);
    }
    let v = step_of(doc.clone()).verdicts();
    assert_eq!(v.bottleneck.class, Bottleneck::NotStalled, "{}", v.bottleneck.reason);
    // And at the threshold (rounded up to the next µs): bound.
    let at = first_stall(&doc, "ioStat") + (wall(&doc) * t.stall_share * 1e6).ceil() as u64;
    set_last_stall(&mut doc, "ioStat", at);
    assert_eq!(step_of(doc).verdicts().bottleneck.class, Bottleneck::IoBound);
}

#[test]
fn no_pressure_means_unknown_not_stalled() {
    let mut doc = recorded(PURE_V2);
    for sample in doc["resourceUsage"]["samples"].as_array_mut().unwrap() {
        for resource in ["cpuStat", "memoryStat", "ioStat"] {
            sample[resource].as_object_mut().unwrap().remove("pressure");
        }
    }
    let v = step_of(doc).verdicts();
    assert_eq!(v.bottleneck.class, Bottleneck::Unknown);
    assert_eq!(v.bottleneck.cpu_stall_share, None);
}

#[test]
fn throttling_threshold() {
    let t = Thresholds::default();
    let mut doc = recorded(PURE_V2);
    let w = wall(&doc);
    let first = doc["resourceUsage"]["samples"][0]["cpuStat"]["throttledNanos"].as_u64().unwrap();
    let set = |doc: &mut Value, nanos: u64| {
        let samples = doc["resourceUsage"]["samples"].as_array_mut().unwrap();
        samples.last_mut().unwrap()["cpuStat"]["throttledNanos"] = json!(nanos);
    };
    set(&mut doc, first + (w * (t.throttled_share - 0.001) * 1e9) as u64);
    let v = step_of(doc.clone()).verdicts();
    assert_eq!(v.throttling.throttled, Some(false), "{}", v.throttling.reason);
    // CPU stall is still 33%, but no longer explained by the step's own
    // limit, and the machine was quiet: no cause shown.
    assert!(v.bottleneck.reason.contains("cause unknown"), "{}", v.bottleneck.reason);
    assert!(!v.bottleneck.reason.contains("other work"), "{}", v.bottleneck.reason);
    set(&mut doc, first + (w * t.throttled_share * 1e9).ceil() as u64);
    assert_eq!(step_of(doc).verdicts().throttling.throttled, Some(true));
}

fn without_oom(doc: &mut Value) {
    for sample in doc["resourceUsage"]["samples"].as_array_mut().unwrap() {
        let events = &mut sample["stepmon"]["memoryEvents"];
        events["oomKill"] = json!(0);
        events["oom"] = json!(0);
    }
}

#[test]
fn memory_outcomes_in_order_of_severity() {
    // OOM kill beats limit hits (the recorded run has both).
    assert_eq!(step_of(recorded(PURE_V2)).verdicts().memory.class, MemoryOutcome::OomKilled);

    let mut doc = recorded(PURE_V2);
    without_oom(&mut doc);
    let v = step_of(doc.clone()).verdicts();
    assert_eq!(v.memory.class, MemoryOutcome::HitLimit, "{}", v.memory.reason);
    assert!(v.memory.reason.contains("memory.max 35 times"), "{}", v.memory.reason);

    // No events at all, peak at 95% of the limit: near the limit.
    for sample in doc["resourceUsage"]["samples"].as_array_mut().unwrap() {
        sample["stepmon"]["memoryEvents"]["max"] = json!(0);
        sample["memoryStat"]["peak"] = json!((48u64 << 20) * 95 / 100);
    }
    let v = step_of(doc.clone()).verdicts();
    assert_eq!(v.memory.class, MemoryOutcome::NearLimit, "{}", v.memory.reason);

    // 50% of the limit: ok.
    for sample in doc["resourceUsage"]["samples"].as_array_mut().unwrap() {
        sample["memoryStat"]["peak"] = json!(24u64 << 20);
    }
    let v = step_of(doc).verdicts();
    assert_eq!(v.memory.class, MemoryOutcome::Ok, "{}", v.memory.reason);
    assert_eq!(v.memory.peak_share_of_limit, Some(0.5));
}

#[test]
fn buildkit_event_counters_are_used_when_stepmon_has_none() {
    // A BuildKit-shaped sample: memoryStat with its event counters, no stepmon key.
    let mut doc = recorded(PURE_V2);
    for sample in doc["resourceUsage"]["samples"].as_array_mut().unwrap() {
        sample.as_object_mut().unwrap().remove("stepmon");
    }
    let v = step_of(doc).verdicts();
    assert_eq!(v.memory.oom_kills, Some(1), "memoryStat.oomKillEvents");
    assert_eq!(v.memory.oom_group_kills, None, "BuildKit has no oom_group_kill");
    assert_eq!(v.memory.class, MemoryOutcome::OomKilled);
    assert_eq!(v.memory.limit_bytes, None, "BuildKit records no memory.max");
}

#[test]
fn machine_busy_by_others_or_steal() {
    let t = Thresholds::default();
    let quiet = step_of(recorded(PURE_V2));
    assert_eq!(quiet.verdicts().machine.class, MachineLoad::Quiet);

    // Other work at the threshold: busy (judged on the summary's numbers).
    let mut busy = quiet.clone();
    busy.summary.machine.others_busy_share = Some(t.others_busy_share);
    let v = stepmon_report::verdict::of(&busy);
    assert_eq!(v.machine.class, MachineLoad::Busy);
    assert!(v.machine.reason.contains("other work used 50.0%"), "{}", v.machine.reason);

    let mut steal = quiet.clone();
    steal.summary.machine.steal_share = Some(t.steal_share);
    assert_eq!(stepmon_report::verdict::of(&steal).machine.class, MachineLoad::Busy);

    let mut unknown = quiet;
    unknown.summary.machine = Default::default();
    unknown.usage.sys_usage.clear();
    assert_eq!(stepmon_report::verdict::of(&unknown).machine.class, MachineLoad::Unknown);
}

#[test]
fn collector_threshold_and_imports_without_collector() {
    let step = step_of(recorded("hybrid-cpu-3s.json"));
    let c = step.verdicts().collector.unwrap();
    assert_eq!(c.negligible, Some(true), "{}", c.reason);
    assert!(c.cpu_share.unwrap() < Thresholds::default().collector_cpu_share);

    let mut doc = recorded("hybrid-cpu-3s.json");
    doc.as_object_mut().unwrap().remove("stepmon");
    let bare = step_of(doc);
    assert!(bare.run.is_none());
    assert!(bare.verdicts().collector.is_none());
}

#[test]
fn verdicts_round_trip_through_json() {
    let v = step_of(recorded(PURE_V2)).verdicts();
    let text = serde_json::to_string(&v).unwrap();
    let back: Verdicts = serde_json::from_str(&text).unwrap();
    assert_eq!(back, v);
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["bottleneck"]["class"], "cpuBound");
    assert_eq!(value["memory"]["class"], "oomKilled");
    assert_eq!(value["thresholds"]["stallShare"], 0.1);
}

#[test]
fn stall_and_throttled_times_read_the_same_in_the_summary_and_the_verdicts() {
    // A few milliseconds of each, with the wall time unknown (so the
    // bottleneck verdict lists the stall times, not their shares).
    let mut step = step_of(recorded(PURE_V2));
    step.wall_seconds = None;
    let s = &mut step.summary;
    for (stall, seconds) in [(&mut s.cpu_stall, 0.0034), (&mut s.memory_stall, 0.0012), (&mut s.io_stall, 0.0)] {
        stall.some_seconds = Some(seconds);
        stall.some_share = None;
    }
    let text = stepmon_report::text::render(&step, &step.verdicts());
    let v = step.verdicts();
    assert_eq!(v.bottleneck.class, Bottleneck::Unknown, "{}", v.bottleneck.reason);
    for (summary_name, verdict_name, seconds) in
        [("cpu", "CPU", 0.0034), ("memory", "memory", 0.0012), ("io", "IO", 0.0)]
    {
        let shown = units::seconds(seconds);
        assert!(text.contains(&format!("{summary_name} {shown}")), "{shown} not in\n{text}");
        assert!(v.bottleneck.reason.contains(&format!("{verdict_name} {shown}")), "{shown}: {}", v.bottleneck.reason);
    }
    // Throttled for 3.4 ms of the 6.66 s step: not throttled, same words.
    let mut step = step_of(recorded(PURE_V2));
    step.summary.cpu.throttled_seconds = Some(0.0034);
    let text = stepmon_report::text::render(&step, &step.verdicts());
    let v = step.verdicts();
    assert_eq!(v.throttling.throttled, Some(false));
    assert!(text.contains("throttled 3.4 ms (48 periods)"), "{text}");
    assert!(v.throttling.reason.starts_with("not throttled: 3.4 ms (0.1%)"), "{}", v.throttling.reason);
}

/// The pure-v2 run (CPU stall 33% of the wall, 0.38 cores on average on
/// its 2 CPUs, machine quiet) without its cpu.max throttling.
fn unthrottled_pure_v2() -> Step {
    let mut step = step_of(recorded(PURE_V2));
    step.summary.cpu.throttled_seconds = Some(0.0);
    step
}

#[test]
fn a_cpu_stall_from_its_own_limit_names_only_that() {
    let v = step_of(recorded(PURE_V2)).verdicts();
    assert_eq!(v.bottleneck.class, Bottleneck::CpuBound);
    assert_eq!(v.bottleneck.machine_cpus, Some(2), "two cpuN lines in /proc/stat");
    assert_eq!(v.bottleneck.cpu_stall_causes, vec![CpuStallCause::OwnLimit], "{}", v.bottleneck.reason);
    let reason = &v.bottleneck.reason;
    assert!(reason.contains("; its own cpu.max throttled it"), "{reason}");
    assert!(!reason.contains("other work") && !reason.contains("own threads"), "{reason}");
}

#[test]
fn a_cpu_stall_from_its_own_parallelism_says_so_not_other_work() {
    // 1.77 cores on a 2-CPU machine with others at 0.0%: its own threads
    // waited for each other.
    let mut step = unthrottled_pure_v2();
    step.summary.cpu.average_cores = Some(1.77);
    let v = stepmon_report::verdict::of(&step);
    assert_eq!(v.machine.others_busy_share, Some(0.0));
    assert_eq!(v.bottleneck.cpu_stall_causes, vec![CpuStallCause::OwnParallelism], "{}", v.bottleneck.reason);
    let reason = &v.bottleneck.reason;
    assert!(
        reason.contains("; its own threads kept the machine's 2 CPUs busy (1.77 cores on average, 88.5% of them)"),
        "{reason}"
    );
    assert!(!reason.contains("other work") && !reason.contains("cause unknown"), "{reason}");
    // The threshold: 80% of the CPUs.
    let t = Thresholds::default();
    step.summary.cpu.average_cores = Some(2.0 * t.own_cores_share);
    assert_eq!(stepmon_report::verdict::of(&step).bottleneck.cpu_stall_causes, vec![CpuStallCause::OwnParallelism]);
    step.summary.cpu.average_cores = Some(2.0 * t.own_cores_share - 0.01);
    assert!(stepmon_report::verdict::of(&step).bottleneck.cpu_stall_causes.is_empty());
}

#[test]
fn a_cpu_stall_from_other_work_or_steal_says_so() {
    // Recorded while a build kept both cores busy: 0.64 cores of the step's own.
    let v = step_of(recorded("hybrid-cpu-3s.json")).verdicts();
    assert_eq!(v.bottleneck.cpu_stall_causes, vec![CpuStallCause::OtherWork], "{}", v.bottleneck.reason);
    assert!(v.bottleneck.reason.contains("; other work competed for the CPUs"), "{}", v.bottleneck.reason);
    // Steal at its threshold on the otherwise quiet pure-v2 run.
    let mut step = unthrottled_pure_v2();
    step.summary.machine.steal_share = Some(Thresholds::default().steal_share);
    let v = stepmon_report::verdict::of(&step);
    assert_eq!(v.bottleneck.cpu_stall_causes, vec![CpuStallCause::OtherWork], "{}", v.bottleneck.reason);
}

#[test]
fn every_cpu_stall_cause_that_holds_is_named() {
    let mut step = step_of(recorded("hybrid-cpu-3s.json"));
    step.summary.cpu.average_cores = Some(1.9);
    let v = stepmon_report::verdict::of(&step);
    assert_eq!(
        v.bottleneck.cpu_stall_causes,
        vec![CpuStallCause::OwnParallelism, CpuStallCause::OtherWork],
        "{}",
        v.bottleneck.reason
    );
    let mut step = step_of(recorded(PURE_V2));
    step.summary.cpu.average_cores = Some(1.9);
    step.summary.machine.others_busy_share = Some(0.6);
    let v = stepmon_report::verdict::of(&step);
    assert_eq!(
        v.bottleneck.cpu_stall_causes,
        vec![CpuStallCause::OwnParallelism, CpuStallCause::OtherWork, CpuStallCause::OwnLimit],
        "{}",
        v.bottleneck.reason
    );
}

#[test]
fn a_cpu_stall_with_no_cause_shown_says_cause_unknown_with_the_numbers() {
    let v = stepmon_report::verdict::of(&unthrottled_pure_v2());
    assert!(v.bottleneck.cpu_stall_causes.is_empty());
    assert!(
        v.bottleneck.reason.contains(
            "; cause unknown (0.38 cores on average of 2 CPUs, the machine quiet, not throttled by its own cpu.max)"
        ),
        "{}",
        v.bottleneck.reason
    );
}

#[test]
fn an_unknown_cpu_count_is_said() {
    let mut step = step_of(recorded(PURE_V2));
    if let Some(cpu) = step.usage.resource_usage.stepmon.as_mut().and_then(|e| e.sys_cpu.as_mut()) {
        cpu.per_cpu.clear();
    }
    for sample in &mut step.usage.sys_usage {
        if let Some(ext) = sample.stepmon.as_mut() {
            ext.per_cpu.clear();
        }
    }
    step.summary.cpu.average_cores = Some(1.9);
    let v = stepmon_report::verdict::of(&step);
    assert_eq!(v.bottleneck.machine_cpus, None);
    // Still throttled by its own limit; its own parallelism cannot be judged.
    assert_eq!(v.bottleneck.cpu_stall_causes, vec![CpuStallCause::OwnLimit]);
    assert!(v.bottleneck.reason.contains("the machine's CPU count is unknown"), "{}", v.bottleneck.reason);
    // The machine samples alone give the count too.
    let mut step = step_of(recorded(PURE_V2));
    if let Some(cpu) = step.usage.resource_usage.stepmon.as_mut().and_then(|e| e.sys_cpu.as_mut()) {
        cpu.per_cpu.clear();
    }
    assert_eq!(step.verdicts().bottleneck.machine_cpus, Some(2));
}

#[test]
fn memory_sizes_in_the_verdict_read_as_in_the_summary() {
    // The pure-v2 run's largest sample held 420 KiB: the summary prints
    // `420.0 KiB`, and so must the memory verdict (it printed `0.4 MiB`).
    let step = step_of(recorded(PURE_V2));
    let verdicts = step.verdicts();
    let text = stepmon_report::text::render(&step, &verdicts);
    assert!(text.contains("file 420.0 KiB"), "{text}");
    assert!(verdicts.memory.reason.contains("largest sample 420.0 KiB"), "{}", verdicts.memory.reason);
    assert!(verdicts.memory.reason.contains("peak 48.0 MiB of a 48.0 MiB limit"), "{}", verdicts.memory.reason);
}
