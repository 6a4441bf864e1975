//! Job records for the job tests: lines of steps with samples, their ends
//! with run documents, and the recorded job in `tests/data/job/`.

use std::path::Path;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};
use stepmon_model::document::RunDocument;
use stepmon_model::job::{Record, SampleOf, SampleRecord, StepEnd, StepStart};
use stepmon_model::sample::StepSample;
use stepmon_report::job::{self, Entry};

pub(crate) fn ts(s: &str) -> jiff::Timestamp {
    s.parse().unwrap()
}

/// A step sample at `at` with `cpu_ns` of CPU so far.
pub(crate) fn sample(at: &str, cpu_ns: u64) -> StepSample {
    serde_json::from_str(&format!(
        r#"{{"timestamp": "{at}", "cpuStat": {{"usageNanos": {cpu_ns}}}, "pidsStat": {{}}}}"#
    ))
    .unwrap()
}

/// A step sample at `at` with `cpu_ns` of CPU so far, `memory` bytes in
/// use and `stall_us` of CPU stall (PSI some total) so far.
pub(crate) fn sample_with(at: jiff::Timestamp, cpu_ns: u64, memory: u64, stall_us: u64) -> StepSample {
    serde_json::from_value(json!({
        "timestamp": at.to_string(),
        "cpuStat": {"usageNanos": cpu_ns, "pressure": {"some": {"total": stall_us}}},
        "pidsStat": {},
        "stepmon": {"memoryCurrent": memory},
    }))
    .unwrap()
}

pub(crate) fn line(record: Record) -> String {
    serde_json::to_string(&record).unwrap() + "\n"
}

pub(crate) fn start(pid: u32, at: &str, name: &str) -> StepStart {
    StepStart::new(pid, ts(at), name.to_owned(), vec![name.to_owned()])
}

/// The sample lines of `step`.
pub(crate) fn sample_lines(step: &StepStart, samples: &[StepSample]) -> String {
    samples
        .iter()
        .map(|s| line(Record::Sample(Box::new(SampleRecord::new(step.step.clone(), SampleOf::Step, s.clone())))))
        .collect()
}

pub(crate) fn samples(step: &StepStart, list: &[(&str, u64)]) -> String {
    sample_lines(step, &list.iter().map(|(at, cpu)| sample(at, *cpu)).collect::<Vec<_>>())
}

/// The end line of `step` at `at` with `code`, its document holding
/// `samples` and the machine's `sys` samples (JSON).
pub(crate) fn end_with(
    step: &StepStart,
    at: jiff::Timestamp,
    code: i32,
    samples: &[StepSample],
    sys: &[Value],
) -> String {
    let mut usage = stepmon_model::sample::StepUsage::default();
    usage.resource_usage.samples = samples.to_vec();
    usage.sys_usage = sys.iter().map(|s| serde_json::from_value(s.clone()).unwrap()).collect();
    let mut info = stepmon_model::document::RunInfo::default();
    info.command.clone_from(&step.command);
    info.name = Some(step.name.clone());
    info.exit_code = Some(code);
    info.start = Some(step.start);
    info.end = Some(at);
    info.summary.wall_seconds = Some(at.duration_since(step.start).as_secs_f64());
    let mut record = StepEnd::new(step.step.clone(), at, code);
    record.document = Some(Box::new(RunDocument::new(usage, info)));
    line(Record::StepEnd(record))
}

pub(crate) fn end(step: &StepStart, at: &str, code: i32, samples: &[(&str, u64)]) -> String {
    let samples: Vec<StepSample> = samples.iter().map(|(t, c)| sample(t, *c)).collect();
    end_with(step, ts(at), code, &samples, &[])
}

/// A machine sample at `at`: `busy` and `idle` CPU seconds so far,
/// `mem_total_kb` of memory, `cpus` online CPUs, `stall_us` of CPU
/// pressure so far.
pub(crate) fn sys(at: jiff::Timestamp, busy: f64, idle: f64, mem_total_kb: u64, cpus: usize, stall_us: u64) -> Value {
    let per_cpu: Vec<Value> = (0..cpus)
        .map(|i| {
            json!({"cpu": i, "user": 0.0, "nice": 0.0, "system": 0.0, "idle": 0.0, "iowait": 0.0,
                        "irq": 0.0, "softirq": 0.0, "steal": 0.0, "guest": 0.0, "guestNice": 0.0})
        })
        .collect();
    json!({
        "timestamp": at.to_string(),
        "cpuStat": {"user": busy, "nice": 0.0, "system": 0.0, "idle": idle, "iowait": 0.0, "irq": 0.0,
                    "softirq": 0.0, "steal": 0.0, "guest": 0.0, "guestNice": 0.0},
        "memoryStat": {"total": mem_total_kb},
        "cpuPressure": {"some": {"total": stall_us}},
        "stepmon": {"perCpu": per_cpu},
    })
}

/// `tests/data/job/<name>`'s text.
pub(crate) fn recorded_text(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/job").join(name)).unwrap()
}

/// The entries of a job record's text.
pub(crate) fn entries_of(text: &str) -> Vec<Entry> {
    job::read(text).steps.iter().map(|s| Entry::of_job(s, "job.jsonl".to_owned())).collect()
}

pub(crate) fn at(offset: f64) -> Timestamp {
    ts("2026-12-01T10:00:00Z").checked_add(SignedDuration::from_secs_f64(offset)).unwrap()
}

/// A sample: (t, CPU ns, memory bytes, CPU stall µs).
pub(crate) type Reading = (f64, u64, u64, u64);

/// A job of steps `(name, start, wall, [(t, cpu ns, memory bytes, stall µs)])`
/// (times in s since the job's start, samples' relative to the step's)
/// on a machine of `cpus` CPUs and 16 GiB.
pub(crate) fn job(steps: &[(&str, f64, f64, &[Reading])], cpus: usize) -> String {
    let mut text = String::new();
    for (i, (name, from, wall, samples)) in steps.iter().enumerate() {
        let step = start(i as u32 + 1, &at(*from).to_string(), name);
        let samples: Vec<_> = samples.iter().map(|(t, c, m, s)| sample_with(at(from + t), *c, *m, *s)).collect();
        let machine = [sys(at(*from), 0.0, 0.0, 16 << 20, cpus, 0), sys(at(from + wall), 1.0, 1.0, 16 << 20, cpus, 0)];
        text += &line(Record::StepStart(step.clone()));
        text += &sample_lines(&step, &samples);
        text += &end_with(&step, at(from + wall), 0, &samples, &machine);
    }
    text
}
