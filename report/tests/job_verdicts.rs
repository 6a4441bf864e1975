//! The job verdicts on a recorded job (seven real steps on a 2-CPU host,
//! one allocating 300 MiB, the last killed) and on copies moved across each
//! threshold; the job's peaks from time-aligned samples.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::job::{Reading, entries_of, job, recorded_text};
use serde_json::Value;
use stepmon_report::job::notable::{Why, notable};
use stepmon_report::job::{CPU_STARVED_SHARE, JobVerdict, MEMORY_BOUND_HEADROOM, OVER_PROVISIONED_SHARE};

/// `text` with every machine sample changed by `change`, and the machine's
/// CPUs over each step (`sysCpu`) by `cpus`.
fn with_machine(text: &str, change: impl Fn(&mut Value), cpus: impl Fn(&mut Value)) -> String {
    text.lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if let Some(samples) = v.pointer_mut("/document/sysUsage").and_then(Value::as_array_mut) {
                samples.iter_mut().for_each(&change);
            }
            if let Some(delta) = v.pointer_mut("/document/resourceUsage/stepmon/sysCpu") {
                cpus(delta);
            }
            serde_json::to_string(&v).unwrap() + "\n"
        })
        .collect()
}

fn verdict(text: &str) -> JobVerdict {
    JobVerdict::of(&entries_of(text))
}

/// [`verdict`] sizing a job of any length (the recorded one lasts 4 s).
fn sized(text: &str) -> JobVerdict {
    JobVerdict::judged(&entries_of(text), 0.0)
}

#[test]
fn the_recorded_job() {
    let v = verdict(&recorded_text("recorded.jsonl"));
    assert_eq!((v.cores_available, v.cores_of), (Some(2.0), Some("machine")));
    assert_eq!(v.memory_of, Some("machine"));
    // The alloc step's 300 MiB (bytearray) is the job's peak.
    let peak = v.memory_peak_bytes.unwrap();
    assert!((300 << 20..400 << 20).contains(&peak), "{peak}");
    let busiest = v.busiest_cores.unwrap();
    assert!(busiest > 0.0 && busiest <= 2.0 * 1.05, "{busiest}");
    assert!(v.average_cores.unwrap() < busiest);
    assert!(!v.over_provisioned && v.memory_bound.is_none() && !v.cpu_starved, "{v:?}");
    let sentences = v.sentences();
    assert_eq!(sentences.len(), 2, "{sentences:?}");
    assert!(sentences[1].starts_with("too short to size its machine: 5.1"), "{sentences:?}");
    assert!(
        sentences[0].starts_with("the job used ") && sentences[0].contains(" of 2 at its busiest"),
        "{sentences:?}"
    );
}

#[test]
fn memory_bound_across_its_threshold() {
    let text = recorded_text("recorded.jsonl");
    let peak = verdict(&text).memory_peak_bytes.unwrap() as f64;
    let moved = |share: f64| {
        let total_kb = (peak / share / 1024.0) as u64;
        verdict(&with_machine(&text, |s| s["memoryStat"]["total"] = total_kb.into(), |_| {}))
    };
    let near = moved(1.0 - MEMORY_BOUND_HEADROOM + 0.01);
    assert_eq!(near.memory_bound.as_deref(), Some("the alloc step"));
    assert!(
        near.sentences().iter().any(|s| s == "memory-bound: the alloc step came within 5% of the machine's memory"),
        "{:?}",
        near.sentences()
    );
    let far = moved(1.0 - MEMORY_BOUND_HEADROOM - 0.01);
    assert_eq!(far.memory_bound, None);
    // The step named is found by its place, and a large job's page shows it.
    let total_kb = (peak / (1.0 - MEMORY_BOUND_HEADROOM + 0.01) / 1024.0) as u64;
    let entries = entries_of(&with_machine(&text, |s| s["memoryStat"]["total"] = total_kb.into(), |_| {}));
    let alloc = entries.iter().position(|e| e.step.name == "alloc");
    assert!(alloc.is_some(), "the alloc step");
    assert_eq!((near.memory_bound_entry, far.memory_bound_entry), (alloc, None));
    let table = stepmon_report::job::table::job(&entries, &[]);
    let named: Vec<usize> = notable(&table, &entries, 0)
        .into_iter()
        .filter(|n| n.why.contains(&Why::NamedByVerdict))
        .map(|n| table.steps[n.row].entry)
        .collect();
    assert_eq!(named, Vec::from_iter(alloc));
    assert!(!far.sentences().iter().any(|s| s.starts_with("memory-bound")));
}

#[test]
fn over_provisioned_across_its_threshold() {
    let text = recorded_text("recorded.jsonl");
    let busiest = verdict(&text).busiest_cores.unwrap();
    // The machine's memory is far more than the job's 300 MiB; the cores
    // decide: the fewest CPUs under which the busiest moment is at most the
    // threshold's share, and one CPU fewer.
    let cpus = (busiest / OVER_PROVISIONED_SHARE).ceil() as usize;
    let with_cpus = |n: usize| {
        let per_cpu = |s: &mut Value| {
            let one = s["perCpu"][0].clone();
            s["perCpu"] = Value::Array(vec![one; n]);
        };
        with_machine(&text, |s| per_cpu(&mut s["stepmon"]), per_cpu)
    };
    let moved = |n: usize| sized(&with_cpus(n));
    let over = moved(cpus);
    assert_eq!(over.cores_available, Some(cpus as f64));
    assert!(over.over_provisioned, "{over:?}");
    let sentence = over.sentences().into_iter().find(|s| s.starts_with("over-provisioned: ")).unwrap();
    assert!(
        sentence
            .starts_with(&format!("over-provisioned: the job never used more than {busiest:.1} of {cpus} cores and ")),
        "{sentence}"
    );
    assert!(sentence.ends_with(" of 23.5 GiB"), "{sentence}");
    assert!(busiest / (cpus - 1) as f64 > OVER_PROVISIONED_SHARE);
    assert!(!moved(cpus - 1).over_provisioned);
    // At its real length of 5 s: too short to say.
    let judged = verdict(&with_cpus(cpus));
    assert!(!judged.over_provisioned && judged.too_short_to_size.is_some_and(|w| w < 6.0), "{judged:?}");
    assert!(judged.sentences().iter().all(|s| !s.contains("over-provisioned:")), "{:?}", judged.sentences());
}

#[test]
fn a_job_of_two_exit_0_steps_gets_no_sizing_verdict() {
    // Two `sh -c 'exit 0'` of 4 ms each on a 16-CPU machine with 16 GiB.
    let idle: &[Reading] = &[(0.0, 0, 1 << 20, 0), (0.004, 1_000_000, 1 << 20, 0)];
    let v = verdict(&job(&[("a", 0.0, 0.004, idle), ("b", 0.005, 0.004, idle)], 16));
    assert!(!v.over_provisioned && !v.cpu_starved, "{v:?}");
    assert!(v.too_short_to_size.is_some_and(|w| (w - 0.009).abs() < 1e-6), "{v:?}");
    let sentences = v.sentences();
    assert!(sentences.iter().any(|s| s.starts_with("too short to size its machine: 9.0 ms")), "{sentences:?}");
    assert!(!sentences.iter().any(|s| s.starts_with("over-provisioned")), "{sentences:?}");
    assert!(
        sized(&job(&[("a", 0.0, 0.004, idle), ("b", 0.005, 0.004, idle)], 16)).over_provisioned,
        "judged at any length"
    );
}

#[test]
fn overlapping_peaks_do_not_add_up() {
    const GIB: u64 = 1 << 30;
    // a and b run at once; a holds 1 GiB early, b late; each uses 1 core
    // half of the time, never at the same time.
    let a: &[Reading] = &[(0.0, 0, GIB, 0), (1.0, 1_000_000_000, GIB, 0), (2.0, 1_000_000_000, GIB / 8, 0)];
    let b: &[Reading] = &[(0.0, 0, GIB / 8, 0), (1.0, 0, GIB / 8, 0), (2.0, 1_000_000_000, GIB, 0)];
    let v = verdict(&job(&[("a", 0.0, 2.0, a), ("b", 0.0, 2.0, b)], 4));
    // At 0 s: 1 + 1/8 GiB; at 2 s: 1/8 + 1 GiB — never the 2 GiB of the peaks' sum.
    assert_eq!(v.memory_peak_bytes, Some(GIB + GIB / 8));
    assert_eq!(v.busiest_cores, Some(1.0), "one core at a time, not the 2 of the peaks' sum");
    assert_eq!(v.average_cores, Some(1.0), "2 s of CPU over 2 s");
    // Run one after the other the job never holds more than one step's memory.
    let v = verdict(&job(&[("a", 0.0, 2.0, a), ("b", 2.5, 2.0, b)], 4));
    assert_eq!(v.memory_peak_bytes, Some(GIB));
    assert_eq!(v.average_cores, Some(2.0 / 4.5));
}

#[test]
fn cpu_starved_across_its_threshold() {
    // One step of 60 s (the shortest sized) whose cgroup waited for CPU `share` of the time.
    let starved = |share: f64| {
        let stall = (share * 10.0 * 1e6) as u64;
        let stall = stall * 6;
        let samples: &[Reading] = &[(0.0, 0, 1 << 20, 0), (60.0, 30_000_000_000, 1 << 20, stall)];
        verdict(&job(&[("build", 0.0, 60.0, samples)], 2))
    };
    let v = starved(CPU_STARVED_SHARE + 0.01);
    assert!(v.cpu_starved, "{v:?}");
    assert!(
        v.sentences().iter().any(|s| s == "CPU-starved: steps waited for CPU 21.0% of the time they ran"),
        "{:?}",
        v.sentences()
    );
    let v = starved(CPU_STARVED_SHARE - 0.01);
    assert!(!v.cpu_starved);
    assert!(!v.sentences().iter().any(|s| s.starts_with("CPU-starved")));
}

/// A step without a cgroup of its own is measured by the cgroup around it:
/// its memory is an upper bound, other processes included. The job's peak
/// and memory verdicts leave it out and say so; its row marks it `≤`.
#[test]
fn memory_that_is_not_a_steps_own_is_left_out_of_the_job() {
    let recorded = recorded_text("recorded.jsonl");
    let before = verdict(&recorded);
    // The alloc step (300 MiB, the job's peak) measured by its enclosing cgroup.
    let text: String = recorded
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if v.pointer("/document/stepmon/name").and_then(Value::as_str) == Some("alloc") {
                // Its samples become the enclosing cgroup's, which its
                // memory numbers are then read from.
                let samples = v.pointer("/document/resourceUsage/samples").unwrap().clone();
                v["document"]["stepmon"]["enclosingCgroup"] = serde_json::json!({"cgroup": "/ci", "samples": samples});
                let memory = v.pointer_mut("/document/stepmon/sources/memory").unwrap();
                *memory = serde_json::json!({"rung": "enclosingCgroup", "bound": "upperBound", "covers": "/ci"});
            }
            serde_json::to_string(&v).unwrap() + "\n"
        })
        .collect();
    let v = verdict(&text);
    assert_eq!((before.memory_left_out_steps, v.memory_left_out_steps), (0, 1));
    let (was, now) = (before.memory_peak_bytes.unwrap(), v.memory_peak_bytes.unwrap());
    assert!(was >= 300 << 20 && now < 300 << 20, "{was} → {now}");
    let sentences = v.sentences();
    assert!(sentences.iter().any(|s| s.starts_with("memory of 1 step left out: ")), "{sentences:?}");
    assert!(!before.sentences().iter().any(|s| s.contains(" left out")));
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["memoryLeftOutSteps"], 1);
    assert!(serde_json::to_value(&before).unwrap().get("memoryLeftOutSteps").is_none());
    // The table: the row marked, a line saying what the mark means, and
    // the step no longer among the highest peaks.
    let entries = entries_of(&text);
    let table = stepmon_report::job::render(&entries, &[]);
    let row = table.lines().find(|l| l.contains(" alloc ")).unwrap();
    assert!(row.contains(" ≤"), "{row}");
    assert!(table.contains("\n≤: the memory peak of 1 step is the cgroup's around it"), "{table}");
    let job = stepmon_report::job::table::job(&entries, &[]);
    let alloc = job.steps.iter().position(|r| r.name == "alloc").unwrap();
    assert!(job.steps[alloc].memory_not_own);
    let matter = notable(&job, &entries, 1);
    assert!(!matter.iter().any(|n| n.row == alloc && n.why.contains(&Why::HighestPeak)), "{matter:?}");

    // Its own v1 cgroup's peak, an upper bound (never reset), is still the
    // step's alone: it stays in.
    let own_upper = recorded.replacen("\"bound\":\"exact\"", "\"bound\":\"upperBound\"", usize::MAX);
    assert_ne!(own_upper, recorded);
    let v = verdict(&own_upper);
    assert_eq!((v.memory_left_out_steps, v.memory_peak_bytes), (0, before.memory_peak_bytes));
}
