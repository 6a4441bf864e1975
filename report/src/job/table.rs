//! The job's table: a row per step (by start), the totals, the longest and
//! heaviest steps — the one model the text, JSON and every other view of a
//! job read, so that they cannot disagree (`stepmon-export` draws its
//! views from it).

use jiff::Timestamp;
use serde::Serialize;

use super::Entry;
use super::read::StepStatus;
use crate::step::Step;
use crate::units::{bytes, percent, seconds};
use stepmon_model::verdict::Bottleneck;

/// A row of the table: one step, its numbers as recorded (absent when not
/// measured).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// The step's name.
    pub name: String,
    /// The command it ran (argv), when known.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// What it builds, when a launcher ran it as an action of a build
    /// ([`Entry::action`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<stepmon_model::action::Action>,
    /// Its name in the list ([`Entry::label`]): its action's words, else
    /// its name and a short form of its command (`Step::label`).
    #[serde(skip)]
    pub label: String,
    /// Its index in the entries the table was made of.
    #[serde(skip)]
    pub entry: usize,
    /// Where the entry came from ([`Entry::from`]).
    pub from: String,
    /// Its group ([`Entry::group`]): a platform of a multi-platform build.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// `ended`, `notRun`, `interrupted` or `cached`.
    pub status: &'static str,
    /// Its exit code, when it ended or could not run.
    pub exit_code: Option<i32>,
    /// Why it could not run (`notRun`).
    pub error: Option<String>,
    /// Its start ([`Step::time_origin`]).
    pub start: Option<Timestamp>,
    /// Its start in seconds since the job's origin ([`Job::origin`]).
    pub start_offset_seconds: Option<f64>,
    /// Its wall time.
    pub wall_seconds: Option<f64>,
    /// Its CPU time.
    pub cpu_seconds: Option<f64>,
    /// Its CPU time over its wall time.
    pub average_cores: Option<f64>,
    /// Its peak memory.
    pub memory_peak_bytes: Option<u64>,
    /// Its memory is not its own but the cgroup's around it (or the
    /// machine's), other processes included: at most that
    /// ([`super::memory_not_own`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub memory_not_own: bool,
    /// Bytes it read from storage.
    pub io_read_bytes: Option<u64>,
    /// Bytes it wrote to storage.
    pub io_write_bytes: Option<u64>,
    /// The share of its wall time some of its tasks waited for a CPU (PSI).
    pub cpu_stall_share: Option<f64>,
    /// The share of its wall time some of its tasks waited for memory (PSI).
    pub memory_stall_share: Option<f64>,
    /// The share of its wall time some of its tasks waited for IO (PSI).
    pub io_stall_share: Option<f64>,
    /// Its verdict in a few words (`cpu-bound, OOM kill`, `INTERRUPTED`, `cached`).
    pub verdict: String,
    /// How many samples it has.
    pub samples: usize,
    /// Interrupted steps: the time of the record's last line of the step.
    pub record_ends: Option<Timestamp>,
    /// Interrupted steps: who finished it (`stepmon gc`) and when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collected: Option<String>,
    /// Interrupted steps: their line cut short by a short write (the disk
    /// may have filled), when the record stops with one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torn_line: Option<super::TornLine>,
}

/// The whole job.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Job {
    /// The earliest step's start: where the job's time axis starts.
    #[serde(skip)]
    pub origin: Option<Timestamp>,
    /// A row per step, by start.
    pub steps: Vec<Row>,
    /// First start to last end (or last record of an interrupted step).
    pub wall_seconds: Option<f64>,
    /// Sum of the steps' CPU time.
    pub cpu_seconds: f64,
    /// The step with the most wall time: its index in [`Job::steps`]
    /// (two steps may share a name: a step is found by its place, never
    /// by its name).
    pub longest: Option<usize>,
    /// The step with the most CPU time: its index in [`Job::steps`].
    pub heaviest: Option<usize>,
    /// How many steps were interrupted.
    pub interrupted: usize,
    /// How many steps BuildKit took from its cache.
    pub cached: usize,
    /// Whether the job had the right machine.
    pub verdict: crate::job::JobVerdict,
    /// The verdict in words.
    pub verdicts: Vec<String>,
    /// Notes on the record (lost lines and the like).
    pub notes: Vec<String>,
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
        action: entry.action.clone(),
        label: entry.label(),
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
        memory_not_own: super::memory_not_own(step),
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

/// Time between steps shorter than this is not a gap: it is stepmon's own
/// exit and the next stepmon's start-up between two wrapped steps of a
/// script (a few milliseconds), not time the job spent elsewhere.
pub const MIN_GAP_SECONDS: f64 = 0.05;

impl Row {
    /// Where the row lies, `(start, end)` in seconds since the job's
    /// origin; `None` without a start (it cannot be placed). A cached step,
    /// or one whose wall time is unknown, ends where it starts.
    #[must_use]
    pub fn extent(&self) -> Option<(f64, f64)> {
        let start = self.start_offset_seconds.filter(|s| s.is_finite())?;
        Some((start, start + self.wall_seconds.filter(|w| w.is_finite() && *w > 0.0).unwrap_or(0.0)))
    }
}

/// The stretches of the job's span in which no step ran, at least
/// [`MIN_GAP_SECONDS`] long, as `(from, to)` seconds since the origin.
#[must_use]
pub fn gaps(job: &Job) -> Vec<(f64, f64)> {
    uncovered(job.steps.iter().filter_map(Row::extent).collect())
}

/// The stretches between `extents` (any order) that none covers, at least
/// [`MIN_GAP_SECONDS`] long.
fn uncovered(mut by_start: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    by_start.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = Vec::new();
    let mut reach: Option<f64> = None;
    for (start, end) in by_start {
        if let Some(r) = reach
            && start - r >= MIN_GAP_SECONDS
        {
            out.push((r, start));
        }
        reach = Some(reach.map_or(end, |r: f64| r.max(end)));
    }
    out
}

fn end_of(row: &Row) -> Option<Timestamp> {
    let wall = jiff::SignedDuration::try_from_secs_f64(row.wall_seconds?).ok()?;
    row.start?.checked_add(wall).ok()
}

/// The table of `entries` (any order: rows are sorted by start), with
/// `notes` kept under it.
#[must_use]
pub fn job(entries: &[Entry], notes: &[String]) -> Job {
    let origin = entries.iter().filter_map(|e| e.step.time_origin()).min();
    let mut steps: Vec<Row> = entries.iter().enumerate().map(|(i, e)| row(i, e, origin)).collect();
    steps.sort_by_key(|r| r.start);
    let last = steps.iter().filter_map(end_of).max();
    let verdict = crate::job::JobVerdict::of(entries);
    let pick = |key: fn(&Row) -> Option<f64>| {
        steps
            .iter()
            .enumerate()
            .filter_map(|(i, r)| key(r).filter(|k| !k.is_nan()).map(|k| (k, i)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, i)| i)
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
pub fn dash<T>(value: Option<T>, show: impl Fn(T) -> String) -> String {
    value.map_or_else(|| "—".to_owned(), show)
}

/// The table's column heads.
pub const HEADER: [&str; 11] =
    ["#", "step", "start", "wall", "CPU", "cores", "mem peak", "IO read/write", "stall cpu/mem/io", "verdict", "exit"];

impl Row {
    /// Its name and command label with its group: steps of a
    /// multi-platform build share names and differ by platform, steps of
    /// one program differ by command.
    pub fn shown_name(&self) -> String {
        match &self.group {
            Some(group) => format!("{} [{group}]", crate::step::elide(&self.label)),
            None => crate::step::elide(&self.label).into_owned(),
        }
    }
}

/// The cells of row number `i` (from 0) under [`HEADER`]: what the step
/// lacks is a dash.
pub fn cells(i: usize, r: &Row) -> Vec<String> {
    let share = |s: Option<f64>| dash(s, percent);
    vec![
        (i + 1).to_string(),
        r.shown_name(),
        dash(r.start_offset_seconds, |s| format!("+{}", seconds(s))),
        dash(r.wall_seconds, seconds),
        dash(r.cpu_seconds, seconds),
        dash(r.average_cores, |c| crate::fixed::string(c, 2)),
        dash(r.memory_peak_bytes, |b| if r.memory_not_own { format!("≤{}", bytes(b)) } else { bytes(b) }),
        format!("{} / {}", dash(r.io_read_bytes, bytes), dash(r.io_write_bytes, bytes)),
        format!("{}/{}/{}", share(r.cpu_stall_share), share(r.memory_stall_share), share(r.io_stall_share)),
        r.verdict.clone(),
        dash(r.exit_code, |c| c.to_string()),
    ]
}

/// What an interrupted or cached row is, as a sentence (`None` for the others).
pub fn status_sentence(r: &Row) -> Option<String> {
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

/// The lines under the table: each interrupted and cached step, each gap,
/// each step that could not run, and the notes (lost lines and the like).
pub fn remarks(job: &Job) -> Vec<String> {
    let mut out: Vec<String> = job.steps.iter().filter_map(status_sentence).collect();
    out.extend(gaps(job).into_iter().map(|(from, to)| {
        format!("gap: +{} to +{} ({}): no step ran", seconds(from), seconds(to), seconds(to - from))
    }));
    out.extend(job.steps.iter().filter_map(|r| r.error.as_ref().map(|e| format!("not run: {}: {e}", r.shown_name()))));
    let upper = job.steps.iter().filter(|r| r.memory_not_own && r.memory_peak_bytes.is_some()).count();
    if upper > 0 {
        out.push(format!(
            "≤: the memory peak of {upper} step{} is the cgroup's around {}, other processes included: {} had no \
             cgroup of {} own",
            if upper == 1 { "" } else { "s" },
            if upper == 1 { "it" } else { "them" },
            if upper == 1 { "it" } else { "they" },
            if upper == 1 { "its" } else { "their" },
        ));
    }
    out.extend(job.notes.iter().cloned());
    out
}

/// The job's first line: how many steps, its wall and CPU time.
pub fn headline(job: &Job) -> String {
    format!(
        "job: {} step{}, wall {} (first start to last end), CPU {}",
        job.steps.len(),
        if job.steps.len() == 1 { "" } else { "s" },
        dash(job.wall_seconds, seconds),
        seconds(job.cpu_seconds)
    )
}

/// The longest and the heaviest step, when any step has a wall time.
pub fn extremes(job: &Job) -> Option<String> {
    let pick = |at: Option<usize>, value: fn(&Row) -> Option<f64>, unit: &str| {
        at.and_then(|i| job.steps.get(i)).map(|r| format!("{} ({}{unit})", r.shown_name(), dash(value(r), seconds)))
    };
    let longest = pick(job.longest, |r| r.wall_seconds, "")?;
    let heaviest = pick(job.heaviest, |r| r.cpu_seconds, " CPU").unwrap_or_else(|| "—".to_owned());
    Some(format!("longest: {longest}; heaviest: {heaviest}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use stepmon_model::RunDocument;

    /// A step of `command` (named by its program) started at second
    /// `start` of the job that took `wall` s and `cpu` s of CPU.
    fn entry(command: &[&str], start: u32, wall: f64, cpu: f64) -> Entry {
        let at = |s: f64| format!("2026-12-04T10:00:{:09.6}Z", f64::from(start) + s);
        let document: RunDocument = serde_json::from_value(serde_json::json!({
            "resourceUsage": {"samples": [
                {"timestamp": at(0.0), "cpuStat": {"usageNanos": 0}},
                {"timestamp": at(wall), "cpuStat": {"usageNanos": (cpu * 1e9) as u64}}]},
            "sysUsage": [],
            "stepmon": {"command": command, "name": command[0], "start": at(0.0), "end": at(wall),
                        "exitCode": 0}
        }))
        .unwrap();
        Entry::of_run(Step::from_run_document(document), "job.jsonl".to_owned())
    }

    #[test]
    fn the_longest_and_heaviest_are_found_by_place_not_by_name() {
        // Two steps of one shown name (one program, one command line): the
        // second is the longest and the heaviest.
        let command = ["rustc", "--crate-name", "x"];
        let entries = [entry(&command, 0, 0.0086, 0.0082), entry(&command, 1, 3.24, 2.5)];
        let job = job(&entries, &[]);
        assert_eq!(job.steps[0].shown_name(), job.steps[1].shown_name());
        assert_eq!((job.longest, job.heaviest), (Some(1), Some(1)));
        let line = extremes(&job).unwrap();
        assert_eq!(
            line,
            "longest: rustc (rustc --crate-name x) (3.24 s); heaviest: rustc (rustc --crate-name x) (2.50 s CPU)"
        );
        // In the JSON too: the place in `steps`.
        let json: serde_json::Value = serde_json::from_str(&super::super::to_json(&entries, &[])).unwrap();
        assert_eq!((json["longest"].as_u64(), json["heaviest"].as_u64()), (Some(1), Some(1)));
    }

    #[test]
    fn a_launchers_steps_are_listed_by_what_they_build() {
        use stepmon_model::action::{Action, Compile, CrateBuild, CrateKind, Program};
        use stepmon_model::job::{Record, StepEnd, StepStart};
        let mut serde = CrateBuild::new("serde".into(), CrateKind::Lib, "rustc".into());
        serde.version = Some("1.0.219".into());
        let actions = [
            Some(Action::Crate(serde)),
            Some(Action::Compile(Compile::new("cc".into(), Some("main.o".into()), Some("main.c".into())))),
            Some(Action::Program(Program::new("ar".into()))),
            None,
        ];
        let mut text = String::new();
        for (i, action) in actions.iter().enumerate() {
            let at: Timestamp = format!("2026-12-04T10:00:0{i}Z").parse().unwrap();
            let command = vec!["prog".to_owned(), format!("arg{i}")];
            let mut start = StepStart::new(7, at, "prog".into(), command);
            start.action.clone_from(action);
            let end = StepEnd::new(start.step.clone(), at, 0);
            for record in [Record::StepStart(start), Record::StepEnd(end)] {
                text += &(serde_json::to_string(&record).unwrap() + "\n");
            }
        }
        let entries: Vec<Entry> =
            crate::job::read(&text).steps.iter().map(|s| Entry::of_job(s, "job.jsonl".to_owned())).collect();
        let job = job(&entries, &[]);
        let names: Vec<String> = job.steps.iter().map(Row::shown_name).collect();
        // A program names nothing it builds: its command tells it apart.
        assert_eq!(names, ["serde 1.0.219 (lib)", "main.o (cc)", "prog (prog arg2)", "prog (prog arg3)"]);
        assert_eq!(entries[0].step.name, "serde 1.0.219 (lib)", "every view of the step");
        assert_eq!(job.steps[0].action, actions[0]);
        let json: serde_json::Value = serde_json::from_str(&super::super::to_json(&entries, &[])).unwrap();
        assert_eq!(json["steps"][0]["action"]["crate"], "serde");
        assert!(json["steps"][3].get("action").is_none());
    }

    #[test]
    fn gaps_are_the_uncovered_stretches() {
        // 0–2 and 1–3 overlap; 3.02 starts within MIN_GAP_SECONDS; 5 after a gap.
        let extents = vec![(0.0, 2.0), (1.0, 3.0), (3.02, 4.0), (5.0, 6.0)];
        assert_eq!(uncovered(extents), [(4.0, 5.0)]);
        assert_eq!(uncovered(Vec::new()), []);
    }
}
