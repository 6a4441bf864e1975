//! A job's steps as one table: a row per step, the job's totals, the
//! longest and heaviest steps, the interrupted steps and the lost lines —
//! as text and as JSON.

use std::fmt::Write as _;

use jiff::Timestamp;
use serde::Serialize;

use super::read::{JobStep, StepStatus};
use crate::step::Step;
use crate::units::{bytes, percent, seconds};
use crate::verdict::Bottleneck;

/// One step of a job and how it ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Entry {
    /// The step.
    pub step: Step,
    /// How it ended.
    pub status: StepStatus,
    /// The file it was read from.
    pub from: String,
    /// The group it belongs to (a BuildKit build's platform): one track
    /// per group in the views that draw tracks.
    pub group: Option<String>,
}

impl Entry {
    /// A step of a run file (or a provenance): it ended, with the run's exit
    /// status when the file has one.
    #[must_use]
    pub fn of_run(step: Step, from: String) -> Entry {
        let exit_code = step.run.as_ref().and_then(|r| r.exit_code.or(r.signal.map(|s| 128 + s))).unwrap_or(0);
        Entry { step, status: StepStatus::Ended { exit_code }, from, group: None }
    }

    /// The entry in `group`.
    #[must_use]
    pub fn in_group(self, group: String) -> Entry {
        Entry { group: Some(group), ..self }
    }

    /// A step of a job record.
    #[must_use]
    pub fn of_job(step: &JobStep, from: String) -> Entry {
        Entry { step: step.to_step(), status: step.status(), from, group: None }
    }
}

/// A row of the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    name: String,
    from: String,
    /// `ended`, `notRun`, `interrupted` or `cached`.
    status: &'static str,
    exit_code: Option<i32>,
    error: Option<String>,
    start: Option<Timestamp>,
    start_offset_seconds: Option<f64>,
    wall_seconds: Option<f64>,
    cpu_seconds: Option<f64>,
    average_cores: Option<f64>,
    memory_peak_bytes: Option<u64>,
    io_read_bytes: Option<u64>,
    io_write_bytes: Option<u64>,
    cpu_stall_share: Option<f64>,
    memory_stall_share: Option<f64>,
    io_stall_share: Option<f64>,
    verdict: String,
    samples: usize,
    /// Interrupted steps: the time of the record's last line of the step.
    record_ends: Option<Timestamp>,
}

/// The whole job.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Job {
    steps: Vec<Row>,
    /// First start to last end (or last record of an interrupted step).
    wall_seconds: Option<f64>,
    /// Sum of the steps' CPU time.
    cpu_seconds: f64,
    longest: Option<String>,
    heaviest: Option<String>,
    interrupted: usize,
    notes: Vec<String>,
}

fn verdict(step: &Step, status: &StepStatus) -> String {
    match status {
        StepStatus::Interrupted { .. } => return "INTERRUPTED".to_owned(),
        StepStatus::NotRun { .. } => return "not run".to_owned(),
        StepStatus::Cached => return "cached".to_owned(),
        StepStatus::Ended { .. } => {}
    }
    let mut out = match step.verdicts().bottleneck.class {
        Bottleneck::CpuBound => "cpu-bound",
        Bottleneck::MemoryBound => "memory-bound",
        Bottleneck::IoBound => "io-bound",
        Bottleneck::NotStalled => "not stalled",
        _ => "unknown",
    }
    .to_owned();
    if step.summary.memory.oom_kills.is_some_and(|n| n > 0) {
        out.push_str(", OOM kill");
    }
    out
}

fn row(entry: &Entry, origin: Option<Timestamp>) -> Row {
    let (step, summary) = (&entry.step, &entry.step.summary);
    let (status, exit_code, error, record_ends) = match &entry.status {
        StepStatus::Ended { exit_code } => ("ended", Some(*exit_code), None, None),
        StepStatus::NotRun { exit_code, error } => ("notRun", Some(*exit_code), Some(error.clone()), None),
        StepStatus::Interrupted { record_ends } => ("interrupted", None, None, *record_ends),
        StepStatus::Cached => ("cached", None, None, None),
    };
    let start = step.time_origin();
    Row {
        name: step.name.clone(),
        from: entry.from.clone(),
        status,
        exit_code,
        error,
        start,
        start_offset_seconds: start.zip(origin).map(|(s, o)| s.duration_since(o).as_secs_f64()),
        wall_seconds: step.wall_seconds,
        cpu_seconds: summary.cpu.usage_seconds,
        average_cores: summary.cpu.average_cores,
        memory_peak_bytes: summary.memory.peak_bytes,
        io_read_bytes: summary.io.read_bytes,
        io_write_bytes: summary.io.write_bytes,
        cpu_stall_share: summary.cpu_stall.some_share,
        memory_stall_share: summary.memory_stall.some_share,
        io_stall_share: summary.io_stall.some_share,
        verdict: verdict(step, &entry.status),
        samples: step.usage.resource_usage.samples.len(),
        record_ends,
    }
}

fn end_of(row: &Row) -> Option<Timestamp> {
    let wall = jiff::SignedDuration::try_from_secs_f64(row.wall_seconds?).ok()?;
    row.start?.checked_add(wall).ok()
}

fn job(entries: &[Entry], notes: &[String]) -> Job {
    let origin = entries.iter().filter_map(|e| e.step.time_origin()).min();
    let mut steps: Vec<Row> = entries.iter().map(|e| row(e, origin)).collect();
    steps.sort_by_key(|r| r.start);
    let last = steps.iter().filter_map(end_of).max();
    let pick = |key: fn(&Row) -> Option<f64>| {
        steps
            .iter()
            .filter_map(|r| key(r).map(|k| (k, r)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, r)| r.name.clone())
    };
    Job {
        wall_seconds: origin.zip(last).map(|(o, l)| l.duration_since(o).as_secs_f64()),
        cpu_seconds: steps.iter().filter_map(|r| r.cpu_seconds).sum(),
        longest: pick(|r| r.wall_seconds),
        heaviest: pick(|r| r.cpu_seconds),
        interrupted: steps.iter().filter(|r| r.status == "interrupted").count(),
        notes: notes.to_vec(),
        steps,
    }
}

fn dash<T>(value: Option<T>, show: impl Fn(T) -> String) -> String {
    value.map_or_else(|| "—".to_owned(), show)
}

/// The job of `entries` as JSON: a row per step (by start), the totals,
/// the longest and heaviest steps and `notes` (lost lines and the like).
#[must_use]
pub fn to_json(entries: &[Entry], notes: &[String]) -> String {
    serde_json::to_string_pretty(&job(entries, notes)).unwrap_or_default() + "\n"
}

/// The job of `entries` as a text table, a row per step by start; then the
/// job's totals, its longest and heaviest steps, what each interrupted step
/// had, and `notes` (lost lines and the like).
#[must_use]
pub fn render(entries: &[Entry], notes: &[String]) -> String {
    let job = job(entries, notes);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "job: {} step{}, wall {} (first start to last end), CPU {}",
        job.steps.len(),
        if job.steps.len() == 1 { "" } else { "s" },
        dash(job.wall_seconds, seconds),
        seconds(job.cpu_seconds)
    );
    let header = ["#", "step", "start", "wall", "CPU", "cores", "mem peak", "IO read/write", "stall cpu/mem/io"];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|h| (*h).to_owned()).collect()];
    table[0].extend(["verdict".to_owned(), "exit".to_owned()]);
    for (i, r) in job.steps.iter().enumerate() {
        let share = |s: Option<f64>| dash(s, percent);
        table.push(vec![
            (i + 1).to_string(),
            r.name.clone(),
            dash(r.start_offset_seconds, |s| format!("+{}", seconds(s))),
            dash(r.wall_seconds, seconds),
            dash(r.cpu_seconds, seconds),
            dash(r.average_cores, |c| format!("{c:.2}")),
            dash(r.memory_peak_bytes, bytes),
            format!("{} / {}", dash(r.io_read_bytes, bytes), dash(r.io_write_bytes, bytes)),
            format!("{}/{}/{}", share(r.cpu_stall_share), share(r.memory_stall_share), share(r.io_stall_share)),
            r.verdict.clone(),
            dash(r.exit_code, |c| c.to_string()),
        ]);
    }
    let widths: Vec<usize> =
        (0..table[0].len()).map(|c| table.iter().map(|row| row[c].chars().count()).max().unwrap_or(0)).collect();
    for row in &table {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
        let _ = writeln!(out, "  {}", cells.join("  ").trim_end());
    }
    let pick = |name: &Option<String>, value: fn(&Row) -> Option<f64>, unit: &str| {
        name.as_ref()
            .and_then(|n| job.steps.iter().find(|r| r.name == *n))
            .map(|r| format!("{} ({}{unit})", r.name, dash(value(r), seconds)))
    };
    if let Some(longest) = pick(&job.longest, |r| r.wall_seconds, "") {
        let heaviest = pick(&job.heaviest, |r| r.cpu_seconds, " CPU").unwrap_or_else(|| "—".to_owned());
        let _ = writeln!(out, "longest: {longest}; heaviest: {heaviest}");
    }
    for r in job.steps.iter().filter(|r| r.status == "interrupted") {
        let _ = writeln!(
            out,
            "interrupted: {} ({}): no end in the record — stepmon was killed (or its host went away) while it ran; \
             the record ends at {}, {} sample{}, wall so far {}; its numbers cover that part only",
            r.name,
            r.from,
            dash(r.record_ends, |t| t.to_string()),
            r.samples,
            if r.samples == 1 { "" } else { "s" },
            dash(r.wall_seconds, seconds),
        );
    }
    for r in job.steps.iter().filter_map(|r| r.error.as_ref().map(|e| (r, e))) {
        let _ = writeln!(out, "not run: {}: {}", r.0.name, r.1);
    }
    for note in &job.notes {
        let _ = writeln!(out, "{note}");
    }
    out
}
