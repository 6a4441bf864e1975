//! A build's own families in the fleet expositions, after the job's
//! ([`stepmon_export::job::metrics`]): its steps by state, its wall time, its
//! critical path, and each platform's totals. Every sample is labelled
//! `build` (the history record's ref: a bundle of `export --all` holds
//! several builds), a platform's also `platform`; what is unknown has no
//! sample, never a 0.

use super::build::Build;
use super::summary::{critical_path_seconds, platform_totals};
use stepmon_export::families::{Family, Given, Kind, Value, lines, states};

const STATES: [&str; 4] = ["executed", "cached", "failed", "incomplete"];
const OUTCOMES: [&str; 2] = ["succeeded", "failed"];

const STEPS: Family = Family::described(
    "stepmon_build_steps",
    Kind::Gauge,
    None,
    "The build's steps (vertexes of its status stream) by how they ended: executed, cached, failed, incomplete (never completed).",
);
const OUTCOME: Family =
    Family::described("stepmon_build_outcome", Kind::StateSet, None, "Whether the build succeeded or failed.");
const WALL: Family = Family::described(
    "stepmon_build_wall_seconds",
    Kind::Gauge,
    Some("seconds"),
    "The build's wall time: its history record's created to completed.",
);
const CRITICAL_PATH: Family = Family::described(
    "stepmon_build_critical_path_seconds",
    Kind::Gauge,
    Some("seconds"),
    "The wall time of the build's critical path: the longest chain of steps by the vertex inputs, cached steps counting nothing.",
);
const CRITICAL_STEPS: Family =
    Family::described("stepmon_build_critical_path_steps", Kind::Gauge, None, "Steps on the build's critical path.");
const PLATFORM_STEPS: Family = Family::described(
    "stepmon_build_platform_steps",
    Kind::Gauge,
    None,
    "A platform's steps by how they ended (BuildKit's internal steps without a platform are in stepmon_build_steps only).",
);
const PLATFORM_WALL: Family = Family::described(
    "stepmon_build_platform_wall_seconds",
    Kind::Gauge,
    Some("seconds"),
    "A platform's wall time: its first step's start to its last step's end.",
);
const PLATFORM_STEP_TIME: Family = Family::described(
    "stepmon_build_platform_step_time_seconds",
    Kind::Gauge,
    Some("seconds"),
    "A platform's steps' wall times added up (steps running at once count each; cached steps nothing).",
);
const PLATFORM_CPU: Family = Family::described(
    "stepmon_build_platform_cpu_usage_seconds",
    Kind::Counter,
    Some("seconds"),
    "CPU time of a platform's steps that have per-step usage (resourceUsage in the provenance); no sample when none has.",
);

fn build_label(b: &Build) -> Vec<(&'static str, String)> {
    vec![("build", b.reference.clone())]
}

/// The builds' families with their samples (those with none left out).
pub(crate) fn families(builds: &[Build]) -> Vec<(&'static Family, String)> {
    let mut given: [(&'static Family, Vec<Given>); 9] = [
        (&STEPS, Vec::new()),
        (&OUTCOME, Vec::new()),
        (&WALL, Vec::new()),
        (&CRITICAL_PATH, Vec::new()),
        (&CRITICAL_STEPS, Vec::new()),
        (&PLATFORM_STEPS, Vec::new()),
        (&PLATFORM_WALL, Vec::new()),
        (&PLATFORM_STEP_TIME, Vec::new()),
        (&PLATFORM_CPU, Vec::new()),
    ];
    for b in builds {
        let c = &b.counts;
        let labelled = |extra: Vec<(&'static str, String)>, value: Value| -> Given {
            (None, build_label(b).into_iter().chain(extra).collect(), value)
        };
        let by_state = |counts: [usize; 4]| STATES.iter().zip(counts).map(|(s, n)| ((*s).to_owned(), n as u64));
        for (state, n) in by_state([c.executed, c.cached, c.failed, c.incomplete]) {
            given[0].1.push(labelled(vec![("state", state)], Value::Unsigned(n)));
        }
        let outcome = if b.error.is_some() { "failed" } else { "succeeded" };
        for (labels, value) in states(OUTCOME.name, &OUTCOMES, outcome) {
            given[1].1.push(labelled(labels, value));
        }
        given[2].1.extend(b.wall_seconds.map(|w| labelled(Vec::new(), Value::Float(w))));
        given[3].1.extend(critical_path_seconds(b).map(|w| labelled(Vec::new(), Value::Float(w))));
        if !b.critical_path.is_empty() {
            given[4].1.push(labelled(Vec::new(), Value::Unsigned(b.critical_path.len() as u64)));
        }
        for t in platform_totals(b) {
            let platform = || vec![("platform", t.platform.clone())];
            for (state, n) in by_state([t.executed, t.cached, t.failed, t.incomplete]) {
                given[5].1.push(labelled(vec![("platform", t.platform.clone()), ("state", state)], Value::Unsigned(n)));
            }
            given[6].1.extend(t.wall_seconds.map(|w| labelled(platform(), Value::Float(w))));
            given[7].1.push(labelled(platform(), Value::Float(t.step_seconds)));
            given[8].1.extend(t.cpu_seconds.map(|c| labelled(platform(), Value::Float(c))));
        }
    }
    given
        .into_iter()
        .map(|(family, given)| (family, lines(family, &[], &given)))
        .filter(|(_, lines)| !lines.is_empty())
        .collect()
}
