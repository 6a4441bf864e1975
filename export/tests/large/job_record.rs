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
#[allow(dead_code)] // tests/job_at_scale.rs uses `record_in_brief` alone
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

/// Where [`record_in_brief`] puts what a large job must show in detail:
/// the steps (by place in the job, from 0) that exit 3, the one that runs
/// 30 times as long and uses 30 times the CPU of its original; the last
/// step has no end (interrupted).
pub(crate) const FAILED_AT: [usize; 3] = [7, 4_000, 9_001];
/// See [`FAILED_AT`].
pub(crate) const LONGEST_AT: usize = 6_543;

/// The text of a job record of `steps` steps as `stepmon run --job` writes
/// it today: each step's end in brief (`StepBrief`, about 2 KB). The steps
/// are copies of the five steps of stepmon-report's `recorded.jsonl` that
/// ended with 0 (a `sleep`, a CPU-bound shell loop, a 300 MiB allocation,
/// two sleeps that ran at once), in turn, each starting 10 ms after the one
/// before it ended, every fourth beside the one before it (two lanes);
/// the steps at [`FAILED_AT`] are copies of its `exit 3` step, the one at
/// [`LONGEST_AT`] lasts and computes 30 times as long, and the last one is
/// its step that never ended.
#[allow(dead_code)] // the bench uses `record` alone
pub(crate) fn record_in_brief(steps: usize) -> String {
    let lines: Vec<Value> = RECORDED.lines().map(|l| serde_json::from_str(l).expect("recorded line")).collect();
    // Each recorded step: its start line and its end in brief (none for the
    // one that never ended).
    let recorded: Vec<(Value, Option<Value>)> = lines
        .iter()
        .filter(|l| l["kind"] == "stepStart")
        .map(|start| {
            let end = lines.iter().find(|l| l["kind"] == "stepEnd" && l["step"] == start["step"]).map(|end| {
                let mut end = end.clone();
                let document: stepmon_model::document::RunDocument =
                    serde_json::from_value(end["document"].take()).expect("a run document");
                let brief = stepmon_model::brief::StepBrief::of(&document).expect("a run's document");
                let object = end.as_object_mut().expect("an object");
                object.remove("document");
                object.insert("brief".to_owned(), serde_json::to_value(brief).expect("JSON"));
                end
            });
            (start.clone(), end)
        })
        .collect();
    let passed: Vec<&(Value, Option<Value>)> =
        recorded.iter().filter(|(_, end)| end.as_ref().is_some_and(|e| e["exitCode"] == 0)).collect();
    let failing = recorded.iter().find(|(_, end)| end.as_ref().is_some_and(|e| e["exitCode"] != 0)).expect("exit 3");
    let unended = recorded.iter().find(|(_, end)| end.is_none()).expect("a step without an end");
    let mut out = String::new();
    let mut push = |v: &Value| {
        let line: stepmon_model::job::Record = serde_json::from_value(v.clone()).expect("a record");
        out.push_str(&serde_json::to_string(&line).expect("JSON"));
        out.push('\n');
    };
    let (mut at_seconds, mut previous_start) = (0.0_f64, 0.0_f64);
    for k in 0..steps {
        let (start, end) = match k {
            _ if k + 1 == steps => unended,
            _ if FAILED_AT.contains(&k) => failing,
            _ => passed[k % passed.len()],
        };
        let wall = end.as_ref().map_or(0.5, |e| e["brief"]["summary"]["wallSeconds"].as_f64().expect("wall"));
        let stretch = if k == LONGEST_AT { 30.0 } else { 1.0 };
        let from = if k % 4 == 3 { previous_start + 0.05 } else { at_seconds };
        previous_start = from;
        at_seconds = at_seconds.max(from + wall * stretch + 0.01);
        let id = format!("{}.{k}", 20_000 + k);
        let mut s = start.clone();
        s["step"] = json!(id);
        s["name"] = json!(format!("{}-{k}", start["name"].as_str().expect("a name")));
        s["start"] = json!(at(from));
        push(&s);
        let Some(end) = end else { continue };
        let mut e = end.clone();
        e["step"] = json!(id);
        e["end"] = json!(at(from + wall * stretch));
        let brief = &mut e["brief"];
        brief["start"] = json!(at(from));
        brief["summary"]["wallSeconds"] = json!(wall * stretch);
        if stretch != 1.0 {
            // Its samples spread over the longer wall time, and its CPU with them.
            for column in ["at"] {
                for t in brief["series"][column].as_array_mut().into_iter().flatten() {
                    *t = json!((t.as_f64().expect("ns") * stretch) as i64);
                }
            }
            for c in brief["series"]["cpuUsageNanos"].as_array_mut().into_iter().flatten() {
                if let Some(n) = c.as_f64() {
                    *c = json!((n * stretch) as u64);
                }
            }
        }
        push(&e);
    }
    out
}
