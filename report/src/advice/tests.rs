use super::*;
use stepmon_model::advice::{CoresSource, LimitedBy, MemorySource, NoAdvice};
use stepmon_model::processes::{Keep, Lifetime, ProcessRecord, Processes};
use stepmon_model::system::{SysMemoryStat, SysSample};

const MIB: u64 = 1 << 20;

/// A worker of `command` alive `[start, end)` s into the step, peaking at `peak_mib`.
fn worker(command: &str, pid: u32, start: f64, end: f64, peak_mib: u64) -> ProcessRecord {
    let origin = 1_796_000_000.0;
    #[allow(clippy::cast_possible_truncation)]
    let at = |s: f64| jiff::Timestamp::from_nanosecond(((origin + s) * 1e9) as i128).unwrap();
    let mut r = ProcessRecord::default();
    // Sleeping most of its life: a tenth of it on CPU.
    (r.command, r.pid, r.peak_rss_bytes, r.cpu_seconds) =
        (command.to_owned(), pid, Some(peak_mib * MIB), (end - start) / 10.0);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    {
        (r.start_unix_seconds, r.elapsed_seconds) = ((origin + start) as u64, end - start);
    }
    (r.start, r.end, r.lifetime) = (Some(at(start)), Some(at(end)), Some(Lifetime::ForkEvent));
    r.args = vec![command.to_owned(), format!("input{pid}.py")];
    r
}

/// Six workers of ~120-130 MiB started together, and their parent shell.
fn six_workers() -> Vec<ProcessRecord> {
    let mut all: Vec<ProcessRecord> =
        (0..6).map(|i| worker("python3", 100 + i, 0.05, 1.1 + f64::from(i) * 0.01, 120 + u64::from(i) * 2)).collect();
    all.push(worker("sh", 99, 0.0, 1.2, 3));
    all
}

/// A 2 s step with `processes`, memory.max `memory_max` and cpu.max of `cores`.
fn step(processes: Option<Processes>, memory_max: Option<u64>, cores: Option<u64>) -> Step {
    let json = r#"{"resourceUsage": {"samples": [
        {"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {"usageNanos": 0}, "pidsStat": {}},
        {"timestamp": "2026-11-30T10:00:02Z", "cpuStat": {"usageNanos": 1500000000}, "pidsStat": {}}]},
      "sysUsage": [],
      "stepmon": {"command": ["sh"], "exitCode": 0,
        "start": "2026-11-30T10:00:00Z", "end": "2026-11-30T10:00:02Z"}}"#;
    let mut document: stepmon_model::document::RunDocument = serde_json::from_str(json).unwrap();
    document.stepmon.as_mut().unwrap().processes = processes;
    for s in &mut document.resource_usage.samples {
        s.stepmon.memory_max = memory_max.map(LimitJson::Value);
        s.stepmon.cpu_max_quota_usec = cores.map(|c| LimitJson::Value(c * 100_000));
        s.stepmon.cpu_max_period_usec = cores.map(|_| 100_000);
    }
    Step::from_run(&document)
}

fn taskstats(records: Vec<ProcessRecord>) -> Processes {
    let n = records.len() as u64;
    Processes::build(records, Keep::default(), n, 0)
}

#[test]
fn six_workers_under_400m_are_memory_bound_at_two() {
    let mut s = step(Some(taskstats(six_workers())), Some(400_000_000), Some(2));
    s.summary.memory.oom_kills = Some(3);
    let a = parallelism(&s);
    assert_eq!(a.no_advice, None, "{a:?}");
    assert_eq!((a.command.as_deref(), a.instances, a.observed_concurrency), (Some("python3"), Some(6), Some(6)));
    let peaks = a.peak_bytes.unwrap();
    // Nearest rank of 120, 122, ... 130: p50 the 3rd, p95 the 6th.
    assert_eq!((peaks.p50, peaks.p95, peaks.max, peaks.bound), (124 * MIB, 130 * MIB, 130 * MIB, Bound::Exact));
    assert_eq!(a.largest_input.as_deref(), Some("input105.py"));
    assert_eq!((a.memory_available_bytes, a.memory_source), (Some(400_000_000), Some(MemorySource::StepLimit)));
    // 400 MB × 0.9 / 130 MiB = 2.64.
    assert_eq!((a.fits_in_memory, a.suggested_jobs, a.limited_by), (Some(2), Some(2), Some(LimitedBy::Memory)));
    assert_eq!(
        a.reason,
        "parallelism: up to 6 python3 ran at once (6 runs), p95 130.0 MiB each, largest 130.0 MiB (input105.py); \
         381.5 MiB (the step's memory limit) less 10.0% headroom fits 2 → -j2 (memory-bound: 3 OOM kills)"
    );
    // The OOM verdict's fix.
    let memory = s.verdicts().memory;
    assert!(memory.reason.ends_with("; fix: run at most 2 python3 at once (-j2)"), "{}", memory.reason);
}

#[test]
fn cpu_bound_workers_are_bounded_by_the_cores() {
    let burning = |cpu: f64, waited: Option<f64>| {
        let mut all = six_workers();
        for w in all.iter_mut().filter(|w| w.command == "python3") {
            w.cpu_seconds = cpu * w.elapsed_seconds;
            w.delays.cpu_seconds = waited.map(|share| share * w.elapsed_seconds);
        }
        let mut s = step(Some(taskstats(all)), Some(64 << 30), Some(2));
        s.summary.cpu_stall.some_share = Some(0.35);
        parallelism(&s)
    };
    // Computing all their lives.
    let a = burning(1.0, None);
    assert!(a.cpu_bound && a.workers_cpu_share.is_some_and(|s| (s - 1.0).abs() < 1e-6), "{a:?}");
    assert_eq!(
        (a.suggested_jobs, a.limited_by, a.cores_source),
        (Some(2), Some(LimitedBy::Cpu), Some(CoresSource::StepLimit))
    );
    assert!(
        a.reason.ends_with(
            "memory is not the limit (fits 453); CPU is (python3 on CPU 100.0% of the time not queued for one, \
             stall 35.0%, 2 cores (its cpu.max)) → -j2"
        ),
        "{}",
        a.reason
    );
    // On a busy machine: 0.4 of their lives on a CPU, 0.5 queued for one.
    assert!(burning(0.4, Some(0.5)).cpu_bound);
    // Sleeping workers queued for a CPU on a loaded machine (seen: 0.1 s of
    // CPU and 1.4 s queued in 2.5 s): the machine's other work, not theirs;
    // what memory allows, nothing held them back.
    assert!(!burning(0.04, Some(0.56)).cpu_bound);
    let a = burning(0.1, Some(0.05));
    assert_eq!((a.cpu_bound, a.suggested_jobs, a.limited_by), (false, Some(453), Some(LimitedBy::None)));
    assert!(
        a.reason.contains("→ up to -j453 (neither memory nor CPU held it back: python3 on CPU 10.5% of the time"),
        "{}",
        a.reason
    );
}

#[test]
fn workers_that_never_overlapped_are_one_at_a_time_and_others_are_preferred() {
    // Three sequential `cc1` of 500 MiB beside four overlapping `as` of 5 MiB.
    let mut all: Vec<ProcessRecord> = (0..3).map(|i| worker("cc1", i, f64::from(i), f64::from(i) + 0.9, 500)).collect();
    all.extend((0..4).map(|i| worker("as", 10 + i, 0.1, 0.5, 5)));
    let a = parallelism(&step(Some(taskstats(all.clone())), Some(8 << 30), None));
    assert_eq!((a.command.as_deref(), a.observed_concurrency), (Some("as"), Some(4)), "overlap first");
    all.truncate(3);
    let a = parallelism(&step(Some(taskstats(all)), Some(8 << 30), None));
    assert_eq!((a.command.as_deref(), a.observed_concurrency), (Some("cc1"), Some(1)));
    assert_eq!(a.fits_in_memory, Some(14), "8 GiB × 0.9 / 500 MiB");
}

#[test]
fn sampled_peaks_are_lower_bounds_in_the_line_and_the_json() {
    let sampled = Processes::sampled(six_workers(), Keep::default(), "taskstats listener refused");
    let a = parallelism(&step(Some(sampled), Some(400_000_000), None));
    assert_eq!(a.peak_bytes.unwrap().bound, Bound::LowerBound);
    assert!(a.reason.contains("p95 at least 130.0 MiB"), "{}", a.reason);
    assert!(a.reason.ends_with("[sampled peaks are lower bounds: fewer may fit]"), "{}", a.reason);
    let json = serde_json::to_value(&a).unwrap();
    assert_eq!(json["peakBytes"]["bound"], "lowerBound");
    assert_eq!(json["limitedBy"], "memory", "6 ran at once where 2 fit");
}

#[test]
fn the_machine_s_memory_less_what_others_used() {
    let mut s = step(Some(taskstats(six_workers())), None, None);
    let sys = |at: &str, used_gib: u64| {
        let mut sample = SysSample::new(at.parse().unwrap());
        let total = 24 << 20; // kB
        sample.memory_stat = Some(SysMemoryStat {
            total: Some(total),
            available: Some(total - (used_gib << 20)),
            ..SysMemoryStat::default()
        });
        sample
    };
    s.usage.sys_usage = vec![sys("2026-11-30T10:00:00Z", 4), sys("2026-11-30T10:00:01Z", 6)];
    // The step's own 1 GiB at the second reading is not others' use.
    s.usage.resource_usage.samples[0].stepmon.memory_current = Some(1 << 30);
    s.usage.resource_usage.samples[0].timestamp = "2026-11-30T10:00:00.5Z".parse().unwrap();
    let a = parallelism(&s);
    assert_eq!((a.memory_available_bytes, a.memory_source), (Some(19 << 30), Some(MemorySource::MachineLessOthers)));
}

#[test]
fn each_reason_for_no_advice() {
    let none = |s: &Step| parallelism(s).no_advice;
    assert_eq!(none(&step(None, Some(1 << 30), None)), Some(NoAdvice::NoProcessRecords));
    let unavailable = Processes::unavailable("taskstats listener refused: needs root");
    assert_eq!(none(&step(Some(unavailable), Some(1 << 30), None)), Some(NoAdvice::NoProcessRecords));
    // Two `sh -c 'exit 0'`: no command ran three times.
    let two = vec![worker("sh", 1, 0.0, 0.004, 1), worker("sh", 2, 0.005, 0.009, 1)];
    assert_eq!(none(&step(Some(taskstats(two)), Some(1 << 30), None)), Some(NoAdvice::TooFewInstances));
    let mut no_peaks = six_workers();
    no_peaks.iter_mut().for_each(|p| p.peak_rss_bytes = None);
    assert_eq!(none(&step(Some(taskstats(no_peaks)), Some(1 << 30), None)), Some(NoAdvice::NoPeaks));
    // An older document: aggregates without concurrency.
    let mut old = taskstats(six_workers());
    old.commands.iter_mut().for_each(|c| (c.max_concurrent, c.lifetimes) = (0, None));
    assert_eq!(none(&step(Some(old), Some(1 << 30), None)), Some(NoAdvice::NoLifetimes));
    assert_eq!(none(&step(Some(taskstats(six_workers())), None, None)), Some(NoAdvice::MemoryUnknown));
    let a = parallelism(&step(None, None, None));
    assert_eq!(a.reason, "no parallelism advice: no per-process records");
    let json = serde_json::to_value(&a).unwrap();
    assert_eq!((json["noAdvice"].as_str(), json.get("suggestedJobs")), (Some("noProcessRecords"), None));
}
