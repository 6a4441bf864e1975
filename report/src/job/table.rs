//! The job's table: a row per step (by start), the totals, the longest and
//! heaviest steps — the one model the text, JSON and every other view of a
//! job read, so that they cannot disagree.

use jiff::Timestamp;
use serde::Serialize;

use super::Entry;
use super::read::StepStatus;
use crate::step::Step;
use crate::units::{bytes, percent, seconds};
use crate::verdict::Bottleneck;

/// A row of the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Row {
    pub(crate) name: String,
    /// The command it ran (argv), when known.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) command: Vec<String>,
    /// Its name and a short form of its command (`Step::label`).
    #[serde(skip)]
    pub(crate) label: String,
    /// Its index in the entries the table was made of.
    #[serde(skip)]
    pub(crate) entry: usize,
    pub(crate) from: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) group: Option<String>,
    /// `ended`, `notRun`, `interrupted` or `cached`.
    pub(crate) status: &'static str,
    pub(crate) exit_code: Option<i32>,
    pub(crate) error: Option<String>,
    pub(crate) start: Option<Timestamp>,
    pub(crate) start_offset_seconds: Option<f64>,
    pub(crate) wall_seconds: Option<f64>,
    pub(crate) cpu_seconds: Option<f64>,
    pub(crate) average_cores: Option<f64>,
    pub(crate) memory_peak_bytes: Option<u64>,
    pub(crate) io_read_bytes: Option<u64>,
    pub(crate) io_write_bytes: Option<u64>,
    pub(crate) cpu_stall_share: Option<f64>,
    pub(crate) memory_stall_share: Option<f64>,
    pub(crate) io_stall_share: Option<f64>,
    pub(crate) verdict: String,
    pub(crate) samples: usize,
    /// Interrupted steps: the time of the record's last line of the step.
    pub(crate) record_ends: Option<Timestamp>,
    /// Interrupted steps: who finished it (`stepmon gc`) and when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) collected: Option<String>,
    /// Interrupted steps: their line cut short by a short write (the disk
    /// may have filled), when the record stops with one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) torn_line: Option<super::TornLine>,
}

/// The whole job.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Job {
    /// The earliest step's start: where the job's time axis starts.
    #[serde(skip)]
    pub(crate) origin: Option<Timestamp>,
    pub(crate) steps: Vec<Row>,
    /// First start to last end (or last record of an interrupted step).
    pub(crate) wall_seconds: Option<f64>,
    /// Sum of the steps' CPU time.
    pub(crate) cpu_seconds: f64,
    pub(crate) longest: Option<String>,
    pub(crate) heaviest: Option<String>,
    pub(crate) interrupted: usize,
    pub(crate) cached: usize,
    /// Whether the job had the right machine.
    pub(crate) verdict: crate::job::JobVerdict,
    /// The verdict in words.
    pub(crate) verdicts: Vec<String>,
    pub(crate) notes: Vec<String>,
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

fn row(index: usize, entry: &Entry, origin: Option<Timestamp>) -> Row {
    let (step, summary) = (&entry.step, &entry.step.summary);
    let (status, exit_code, error, record_ends, torn_line) = match &entry.status {
        StepStatus::Ended { exit_code } => ("ended", Some(*exit_code), None, None, None),
        StepStatus::NotRun { exit_code, error } => ("notRun", Some(*exit_code), Some(error.clone()), None, None),
        StepStatus::Interrupted { record_ends, torn } => ("interrupted", None, None, *record_ends, *torn),
        StepStatus::Cached => ("cached", None, None, None, None),
    };
    let start = step.time_origin();
    Row {
        name: step.name.clone(),
        command: step.command().to_vec(),
        label: step.label(),
        entry: index,
        from: entry.from.clone(),
        group: entry.group.clone(),
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
        collected: entry.collected.as_ref().map(|c| format!("collected by {} at {}", c.by, c.at)),
        torn_line,
    }
}

pub(crate) fn end_of(row: &Row) -> Option<Timestamp> {
    let wall = jiff::SignedDuration::try_from_secs_f64(row.wall_seconds?).ok()?;
    row.start?.checked_add(wall).ok()
}

pub(crate) fn job(entries: &[Entry], notes: &[String]) -> Job {
    let origin = entries.iter().filter_map(|e| e.step.time_origin()).min();
    let mut steps: Vec<Row> = entries.iter().enumerate().map(|(i, e)| row(i, e, origin)).collect();
    steps.sort_by_key(|r| r.start);
    let last = steps.iter().filter_map(end_of).max();
    let verdict = crate::job::JobVerdict::of(entries);
    let pick = |key: fn(&Row) -> Option<f64>| {
        steps
            .iter()
            .filter_map(|r| key(r).map(|k| (k, r)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, r)| r.shown_name())
    };
    Job {
        origin,
        wall_seconds: origin.zip(last).map(|(o, l)| l.duration_since(o).as_secs_f64()),
        cpu_seconds: steps.iter().filter_map(|r| r.cpu_seconds).sum(),
        longest: pick(|r| r.wall_seconds),
        heaviest: pick(|r| r.cpu_seconds),
        interrupted: steps.iter().filter(|r| r.status == "interrupted").count(),
        cached: steps.iter().filter(|r| r.status == "cached").count(),
        verdicts: verdict.sentences(),
        verdict,
        notes: notes.to_vec(),
        steps,
    }
}

/// `value` shown by `show`, or a dash when it is absent.
pub(crate) fn dash<T>(value: Option<T>, show: impl Fn(T) -> String) -> String {
    value.map_or_else(|| "—".to_owned(), show)
}

/// The table's column heads.
pub(crate) const HEADER: [&str; 11] =
    ["#", "step", "start", "wall", "CPU", "cores", "mem peak", "IO read/write", "stall cpu/mem/io", "verdict", "exit"];

impl Row {
    /// Its name and command label with its group: steps of a
    /// multi-platform build share names and differ by platform, steps of
    /// one program differ by command.
    pub(crate) fn shown_name(&self) -> String {
        match &self.group {
            Some(group) => format!("{} [{group}]", crate::step::elide(&self.label)),
            None => crate::step::elide(&self.label).into_owned(),
        }
    }
}

/// The cells of row number `i` (from 0) under [`HEADER`]: what the step
/// lacks is a dash.
pub(crate) fn cells(i: usize, r: &Row) -> Vec<String> {
    let share = |s: Option<f64>| dash(s, percent);
    vec![
        (i + 1).to_string(),
        r.shown_name(),
        dash(r.start_offset_seconds, |s| format!("+{}", seconds(s))),
        dash(r.wall_seconds, seconds),
        dash(r.cpu_seconds, seconds),
        dash(r.average_cores, |c| crate::fixed::string(c, 2)),
        dash(r.memory_peak_bytes, bytes),
        format!("{} / {}", dash(r.io_read_bytes, bytes), dash(r.io_write_bytes, bytes)),
        format!("{}/{}/{}", share(r.cpu_stall_share), share(r.memory_stall_share), share(r.io_stall_share)),
        r.verdict.clone(),
        dash(r.exit_code, |c| c.to_string()),
    ]
}

/// What an interrupted or cached row is, as a sentence (`None` for the others).
pub(crate) fn status_sentence(r: &Row) -> Option<String> {
    match r.status {
        "interrupted" => Some(format!(
            "interrupted: {} ({}): no end in the record — {}; \
             the record ends at {}, {} sample{}, wall so far {}; its numbers cover that part only{}",
            r.shown_name(),
            r.from,
            match r.torn_line {
                None => "stepmon was killed (or its host went away) while it ran".to_owned(),
                Some(torn) => format!(
                    "the disk may have filled: line {} ({} bytes) is its line cut short by a short write; \
                     or stepmon was killed (or its host went away) while it ran",
                    torn.line, torn.bytes
                ),
            },
            dash(r.record_ends, |t| t.to_string()),
            r.samples,
            if r.samples == 1 { "" } else { "s" },
            dash(r.wall_seconds, seconds),
            r.collected
                .as_ref()
                .map_or_else(String::new, |c| format!("; {c} (its processes killed, its cgroups removed)")),
        )),
        "cached" => Some(format!(
            "cached: {}: BuildKit took it from its cache; it did not run, so it has no usage",
            r.shown_name()
        )),
        _ => None,
    }
}

/// The lines under the table: each interrupted and cached step, each step
/// that could not run, and the notes (lost lines and the like).
pub(crate) fn remarks(job: &Job) -> Vec<String> {
    let mut out: Vec<String> = job.steps.iter().filter_map(status_sentence).collect();
    let spans = super::views::timeline::spans(job, |_, _| true);
    out.extend(super::views::timeline::gaps(&spans).into_iter().map(|(from, to)| {
        format!("gap: +{} to +{} ({}): no step ran", seconds(from), seconds(to), seconds(to - from))
    }));
    out.extend(job.steps.iter().filter_map(|r| r.error.as_ref().map(|e| format!("not run: {}: {e}", r.shown_name()))));
    out.extend(job.notes.iter().cloned());
    out
}

/// The job's first line: how many steps, its wall and CPU time.
pub(crate) fn headline(job: &Job) -> String {
    format!(
        "job: {} step{}, wall {} (first start to last end), CPU {}",
        job.steps.len(),
        if job.steps.len() == 1 { "" } else { "s" },
        dash(job.wall_seconds, seconds),
        seconds(job.cpu_seconds)
    )
}

/// The longest and the heaviest step, when any step has a wall time.
pub(crate) fn extremes(job: &Job) -> Option<String> {
    let pick = |name: &Option<String>, value: fn(&Row) -> Option<f64>, unit: &str| {
        name.as_ref()
            .and_then(|n| job.steps.iter().find(|r| r.shown_name() == *n))
            .map(|r| format!("{} ({}{unit})", r.shown_name(), dash(value(r), seconds)))
    };
    let longest = pick(&job.longest, |r| r.wall_seconds, "")?;
    let heaviest = pick(&job.heaviest, |r| r.cpu_seconds, " CPU").unwrap_or_else(|| "—".to_owned());
    Some(format!("longest: {longest}; heaviest: {heaviest}"))
}
