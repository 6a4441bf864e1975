//! A large job record: `steps` copies of the real recorded step
//! (stepmon-report's `tests/data/job/recorded.jsonl`: every field a real sample has), a
//! second apart, each with `samples` samples of its own and as many of the
//! machine, each line written as `stepmon run --job` writes it. Shared by `tests/job_large.rs` and the `job_report` bench
//! (`#[path]`), so the bench measures the job the test pins.

use serde_json::{Value, json};

/// The recorded job the steps are copied from: stepmon-report's, so the test
/// runs in the workspace only (export/Cargo.toml's include list). The path is
/// relative to this file, so it holds for both includers.
const RECORDED: &str = include_str!("../../../report/tests/data/job/recorded.jsonl");

fn at(seconds: f64) -> String {
    let t0: jiff::Timestamp = "2026-12-01T10:00:00Z".parse().expect("timestamp");
    t0.checked_add(jiff::SignedDuration::from_secs_f64(seconds)).expect("in range").to_string()
}

/// The text of a job record of `steps` steps of `samples` samples each.
pub(crate) fn record(steps: usize, samples: usize) -> String {
    let lines: Vec<Value> = RECORDED.lines().map(|l| serde_json::from_str(l).expect("recorded line")).collect();
    let start = lines.iter().find(|l| l["kind"] == "stepStart").expect("a start").clone();
    let sample = lines.iter().find(|l| l["kind"] == "sample").expect("a sample")["sample"].clone();
    let end = lines.iter().find(|l| l["kind"] == "stepEnd").expect("an end").clone();
    let sys = end["document"]["sysUsage"][0].clone();
    let mut out = String::new();
    // Each line as `stepmon run --job` writes it: through the record's
    // type (its `kind` first, its fields in their order).
    let mut push = |v: &Value| {
        let line: stepmon_model::job::Record = serde_json::from_value(v.clone()).expect("a record");
        out.push_str(&serde_json::to_string(&line).expect("JSON"));
        out.push('\n');
    };
    for k in 0..steps {
        let id = format!("{}.{k}", 1000 + k);
        #[allow(clippy::cast_precision_loss)]
        let from = k as f64;
        let mut s = start.clone();
        s["step"] = json!(id);
        s["name"] = json!(format!("step-{k:03}"));
        s["start"] = json!(at(from));
        push(&s);
        let (mut own, mut machine) = (Vec::new(), Vec::new());
        for j in 0..samples {
            #[allow(clippy::cast_precision_loss)]
            let t = at(from + 0.09 * j as f64);
            let mut x = sample.clone();
            x["timestamp"] = json!(t);
            x["cpuStat"]["usageNanos"] = json!(j * 50_000_000);
            push(&json!({"kind": "sample", "step": id, "of": "step", "sample": x}));
            own.push(x);
            let mut m = sys.clone();
            m["timestamp"] = json!(t);
            machine.push(m);
        }
        let mut e = end.clone();
        e["step"] = json!(id);
        e["end"] = json!(at(from + 0.81));
        let d = &mut e["document"];
        d["resourceUsage"]["samples"] = Value::Array(own);
        d["sysUsage"] = Value::Array(machine);
        d["stepmon"]["name"] = json!(format!("step-{k:03}"));
        d["stepmon"]["start"] = json!(at(from));
        d["stepmon"]["end"] = json!(at(from + 0.81));
        d["stepmon"]["summary"]["wallSeconds"] = json!(0.81);
        push(&e);
    }
    out
}
