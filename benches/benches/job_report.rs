//! `stepmon report` of a job: a record of 200 steps with 10 samples each
//! (and 10 machine samples each), read and rendered in each format — what
//! the CLI does after reading the file (`job::read`, `Entry::of_job`, the
//! job's views). The steps are copies of a real recorded step
//! (`report/tests/data/job/recorded.jsonl`: every field a real sample has),
//! a second apart.
//!
//! `cargo bench -p stepmon-benches --bench job_report`.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use stepmon_report::export::Format;
use stepmon_report::job::{self, Entry, views};

const STEPS: usize = 200;
const SAMPLES: usize = 10;

/// The recorded job the steps are copied from.
const RECORDED: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../report/tests/data/job/recorded.jsonl"));

fn at(seconds: f64) -> String {
    let t0: jiff::Timestamp = "2026-12-01T10:00:00Z".parse().expect("timestamp");
    t0.checked_add(jiff::SignedDuration::from_secs_f64(seconds)).expect("in range").to_string()
}

/// A job record of [`STEPS`] steps of [`SAMPLES`] samples each.
fn record() -> String {
    let lines: Vec<Value> = RECORDED.lines().map(|l| serde_json::from_str(l).expect("recorded line")).collect();
    let start = lines.iter().find(|l| l["kind"] == "stepStart").expect("a start").clone();
    let sample = lines.iter().find(|l| l["kind"] == "sample").expect("a sample")["sample"].clone();
    let end = lines.iter().find(|l| l["kind"] == "stepEnd").expect("an end").clone();
    let sys = end["document"]["sysUsage"][0].clone();
    let mut out = String::new();
    let mut push = |v: &Value| {
        out.push_str(&serde_json::to_string(v).expect("JSON"));
        out.push('\n');
    };
    for k in 0..STEPS {
        let id = format!("{}.{k}", 1000 + k);
        let from = k as f64;
        let mut s = start.clone();
        s["step"] = json!(id);
        s["name"] = json!(format!("step-{k:03}"));
        s["start"] = json!(at(from));
        push(&s);
        let (mut samples, mut machine) = (Vec::new(), Vec::new());
        for j in 0..SAMPLES {
            let t = at(from + 0.09 * j as f64);
            let mut x = sample.clone();
            x["timestamp"] = json!(t);
            x["cpuStat"]["usageNanos"] = json!(j * 50_000_000);
            push(&json!({"kind": "sample", "step": id, "of": "step", "sample": x}));
            samples.push(x);
            let mut m = sys.clone();
            m["timestamp"] = json!(t);
            machine.push(m);
        }
        let mut e = end.clone();
        e["step"] = json!(id);
        e["end"] = json!(at(from + 0.81));
        let d = &mut e["document"];
        d["resourceUsage"]["samples"] = Value::Array(samples);
        d["sysUsage"] = Value::Array(machine);
        d["stepmon"]["name"] = json!(format!("step-{k:03}"));
        d["stepmon"]["start"] = json!(at(from));
        d["stepmon"]["end"] = json!(at(from + 0.81));
        d["stepmon"]["summary"]["wallSeconds"] = json!(0.81);
        push(&e);
    }
    out
}

fn report(text: &str, format: Format) -> String {
    let record = job::read(text);
    let entries: Vec<Entry> = record.steps.iter().map(|s| Entry::of_job(s, "job.jsonl".to_owned())).collect();
    views::render(format, &entries, &[])
}

fn job_report(c: &mut Criterion) {
    let text = record();
    assert_eq!(job::read(&text).steps.len(), STEPS);
    let mut group = c.benchmark_group("job_report_200x10");
    for (name, format) in Format::ALL {
        group.bench_function(name, |b| b.iter(|| report(std::hint::black_box(&text), format)));
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    targets = job_report
}
criterion_main!(benches);
