//! The job in the fleet expositions (OpenMetrics and Prometheus text
//! 0.0.4): every step's family set as the single-step exports write it
//! (`crate::families`, labelled `step`, `origin`, `index` with
//! `index` its row in the job table), then the job's own families: each
//! step's status as a stateset (so an interrupted or cached step is named
//! as such, while the numbers it lacks have no sample at all, never a 0),
//! and the job's totals without a step label.

use crate::families::{Family, Given, Kind, Value, families, lines, states};
use crate::{openmetrics, prometheus};
use stepmon_report::job::Entry;
use stepmon_report::job::table::{Job, job};
use stepmon_report::step::Step;

/// A step's status, one state true.
pub(super) const STATUS: Family = Family::described(
    "stepmon_job_step_status",
    Kind::StateSet,
    None,
    "How the step ended in the job's record: ended, notRun, interrupted (stepmon was killed; its numbers stop where the record does) or cached (BuildKit took it from its cache; no usage).",
);
pub(super) const STATUS_STATES: [&str; 4] = ["ended", "notRun", "interrupted", "cached"];
const STEPS: Family = Family::described("stepmon_job_steps", Kind::Gauge, None, "Steps in the job.");
pub(super) const WALL: Family = Family::described(
    "stepmon_job_wall_seconds",
    Kind::Gauge,
    Some("seconds"),
    "The job's wall time: its first step's start to its last step's end.",
);
pub(super) const CPU: Family = Family::described(
    "stepmon_job_cpu_usage_seconds",
    Kind::Counter,
    Some("seconds"),
    "CPU time of all the job's steps.",
);
pub(super) const MEMORY_PEAK: Family = Family::described(
    "stepmon_job_memory_peak_bytes",
    Kind::Gauge,
    Some("bytes"),
    "The job's peak memory: the most its running steps held at once (time-aligned samples), at least its largest step's peak.",
);
const BUSIEST: Family = Family::described(
    "stepmon_job_busiest_cores",
    Kind::Gauge,
    None,
    "The most cores the job's running steps used at once (time-aligned samples).",
);

/// The job's families with their samples (those with none left out).
fn job_families(job: &Job, steps: &[&Step]) -> Vec<(&'static Family, String)> {
    let status: Vec<Given> = job
        .steps
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            let current = STATUS_STATES.iter().find(|s| **s == r.status).copied().unwrap_or("ended");
            states(STATUS.name, &STATUS_STATES, current)
                .into_iter()
                .map(move |(labels, value)| (Some(i), labels, value))
        })
        .collect();
    let total = |value: Option<Value>| -> Vec<Given> { value.map(|v| (None, Vec::new(), v)).into_iter().collect() };
    let v = &job.verdict;
    let list: [(&'static Family, Vec<Given>); 6] = [
        (&STATUS, status),
        (&STEPS, total(Some(Value::Unsigned(job.steps.len() as u64)))),
        (&WALL, total(job.wall_seconds.map(Value::Float))),
        (&CPU, total(Some(Value::Float(job.cpu_seconds)))),
        (&MEMORY_PEAK, total(v.memory_peak_bytes.map(Value::Unsigned))),
        (&BUSIEST, total(v.busiest_cores.map(Value::Float))),
    ];
    list.into_iter()
        .map(|(family, given)| (family, lines(family, steps, &given)))
        .filter(|(_, lines)| !lines.is_empty())
        .collect()
}

/// Every family of the job: the steps' (in table order), then the job's.
#[must_use]
pub fn all(entries: &[Entry]) -> Vec<(&'static Family, String)> {
    let job = job(entries, &[]);
    let steps: Vec<&Step> = job.steps.iter().map(|r| &entries[r.entry].step).collect();
    let mut out = families(&steps);
    out.extend(job_families(&job, &steps));
    out
}

/// The job as an OpenMetrics text exposition ending in `# EOF`.
#[must_use]
pub fn openmetrics(entries: &[Entry]) -> String {
    openmetrics::frame(all(entries))
}

/// The job in the Prometheus text format 0.0.4.
#[must_use]
pub fn prometheus(entries: &[Entry]) -> String {
    prometheus::frame(all(entries))
}
