//! A build's summary as one model every view reads — the counts by state,
//! the critical path, the per-platform totals — and as the sections
//! the Markdown and HTML views draw, so that text, JSON, Markdown, HTML
//! and OpenMetrics cannot disagree.

use serde::Serialize;

use super::build::{Build, BuildStep, Counts, StepState};
use stepmon_export::job::section::{Section, Table};
use stepmon_report::units::seconds;

/// One platform's steps (`op.platform`, else the progress name's prefix);
/// BuildKit's internal steps without a platform are in the build's counts
/// only.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PlatformTotals {
    /// `linux/arm64`.
    pub platform: String,
    /// Its steps.
    pub steps: usize,
    /// Of those, ran.
    pub executed: usize,
    /// From the cache.
    pub cached: usize,
    /// Failed.
    pub failed: usize,
    /// Never completed.
    pub incomplete: usize,
    /// Its first step's start to its last step's end, s (`None` when no step
    /// has both).
    pub wall_seconds: Option<f64>,
    /// The wall times of its steps that ran, added up, s (steps running at
    /// once count each).
    pub step_seconds: f64,
    /// The CPU time of its steps with per-step usage, s (`None` when none has).
    pub cpu_seconds: Option<f64>,
    /// How many of its steps have per-step usage (what `cpu_seconds` covers).
    pub steps_with_usage: usize,
}

/// How a step ended, one word.
pub(super) fn state_word(s: &StepState) -> &'static str {
    match s {
        StepState::Executed => "ran",
        StepState::Cached => "cached",
        StepState::Failed { .. } => "FAILED",
        StepState::Incomplete => "incomplete",
        StepState::Unrecorded => "unrecorded",
    }
}

/// A step's wall time when it ran (a cached step's took no time of its own).
pub(super) fn executed_wall(s: &BuildStep) -> Option<f64> {
    s.wall_seconds.filter(|_| s.state != StepState::Cached)
}

/// `[linux/amd64] RUN make (Dockerfile:12)`.
pub(super) fn label(s: &BuildStep) -> String {
    match &s.platform {
        Some(p) => format!("[{p}] {}", s.title()),
        None => s.title(),
    }
}

/// `10 vertexes: 9 ran, 1 cached, 0 failed, 0 incomplete (the record: …)`.
pub(super) fn counts_line(c: &Counts) -> String {
    let record = match (c.record_total, c.record_completed) {
        (Some(t), Some(d)) => format!(
            " (the record: {t} total, {d} completed{})",
            c.record_cached.map_or_else(String::new, |n| format!(", {n} cached"))
        ),
        _ => String::new(),
    };
    if c.unrecorded > 0 {
        // A bare predicate: its steps, and nothing of how they ended.
        return format!("{} exec steps in the build's definition; how each ended is not recorded", c.unrecorded);
    }
    format!(
        "{} vertexes: {} ran, {} cached, {} failed, {} incomplete{record}",
        c.vertexes, c.executed, c.cached, c.failed, c.incomplete
    )
}

/// The steps on the critical path, in order.
pub(super) fn critical_steps(build: &Build) -> impl Iterator<Item = &BuildStep> {
    build.critical_path.iter().filter_map(|i| build.steps.get(*i))
}

/// The critical path's length: the wall times of its steps that ran, s
/// (`None` when there is no path).
#[must_use]
pub fn critical_path_seconds(build: &Build) -> Option<f64> {
    (!build.critical_path.is_empty()).then(|| critical_steps(build).filter_map(executed_wall).sum())
}

/// Each of the build's platforms' totals, in the build's platform order.
#[must_use]
pub fn platform_totals(build: &Build) -> Vec<PlatformTotals> {
    build
        .platforms
        .iter()
        .map(|p| {
            let steps: Vec<&BuildStep> = build.steps.iter().filter(|s| s.platform.as_deref() == Some(p)).collect();
            let count = |f: fn(&StepState) -> bool| steps.iter().filter(|s| f(&s.state)).count();
            let first = steps.iter().filter_map(|s| s.started).min();
            let last = steps.iter().filter_map(|s| s.completed).max();
            let cpu: Vec<f64> =
                steps.iter().filter_map(|s| s.usage.as_ref().and_then(|u| u.summary.cpu.usage_seconds)).collect();
            PlatformTotals {
                platform: p.clone(),
                steps: steps.len(),
                executed: count(|s| *s == StepState::Executed),
                cached: count(|s| *s == StepState::Cached),
                failed: count(|s| matches!(s, StepState::Failed { .. })),
                incomplete: count(|s| *s == StepState::Incomplete),
                wall_seconds: first.zip(last).map(|(a, b)| b.duration_since(a).as_secs_f64().max(0.0)),
                // A fold from +0.0: the sum of no steps is 0, not -0.0.
                step_seconds: steps.iter().filter_map(|s| executed_wall(s)).fold(0.0, |a, b| a + b),
                cpu_seconds: (!cpu.is_empty()).then(|| cpu.iter().sum()),
                steps_with_usage: steps.iter().filter(|s| s.usage.is_some()).count(),
            }
        })
        .collect()
}

/// `1 step`, `3 steps`.
pub(super) fn steps(n: usize) -> String {
    format!("{n} step{}", if n == 1 { "" } else { "s" })
}

fn dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "—".to_owned())
}

/// The build's summary for the Markdown and HTML views: what it was, how
/// it ended, its counts, error and notice; then its critical path and its
/// per-platform totals as tables.
pub(crate) fn sections(builds: &[Build]) -> Vec<Section> {
    builds.iter().map(section).collect()
}

fn section(b: &Build) -> Section {
    let mut lines = Vec::new();
    let target = b.target.as_ref().map_or_else(String::new, |t| format!(", target {t}"));
    let platforms = if b.platforms.is_empty() { String::new() } else { format!(", for {}", b.platforms.join(", ")) };
    lines.push(format!("{}{target}{platforms}", b.dockerfile_path));
    let when = b.created.map_or_else(|| "created at an unknown time".to_owned(), |c| format!("created {c}"));
    let wall = b.wall_seconds.map_or_else(|| "wall time unknown".to_owned(), |w| format!("took {}", seconds(w)));
    lines.push(format!("{}: {when}, {wall}", if b.error.is_some() { "FAILED" } else { "succeeded" }));
    lines.push(format!("steps: {}", counts_line(&b.counts)));
    if let Some(e) = &b.error {
        lines.push(format!("error: {e}"));
        for s in b.steps.iter().filter(|s| matches!(s.state, StepState::Failed { .. })) {
            let code = s.exit_code.map_or_else(String::new, |c| format!(" (exit code {c})"));
            let command = s
                .command
                .as_ref()
                .map_or_else(String::new, |c| format!("; command: {}", stepmon_report::step::elide(c)));
            lines.push(format!("failing step: {}{code}{command}", label(s)));
        }
    }
    if let Some(total) = critical_path_seconds(b) {
        lines.push(format!("critical path: {} over {}", seconds(total), steps(b.critical_path.len())));
    }
    if let Some(n) = &b.notice {
        lines.push(format!("notice: {n}"));
    }
    let mut tables = Vec::new();
    if let Some(total) = critical_path_seconds(b) {
        tables.push(Table {
            class: "build-critical-path",
            caption: format!(
                "Critical path: {} over {} (the longest chain by the vertex inputs)",
                seconds(total),
                steps(b.critical_path.len())
            ),
            header: vec!["#", "wall", "state", "platform", "step"],
            numeric: vec![true, true, false, false, false],
            rows: critical_steps(b)
                .enumerate()
                .map(|(i, s)| {
                    vec![
                        (i + 1).to_string(),
                        dash(executed_wall(s).map(seconds)),
                        state_word(&s.state).to_owned(),
                        dash(s.platform.clone()),
                        s.title(),
                    ]
                })
                .collect(),
        });
    }
    let totals = platform_totals(b);
    if !totals.is_empty() {
        tables.push(Table {
            class: "build-platforms",
            caption: "Per platform (wall: its first step's start to its last step's end; step time: its steps' \
                      wall times added up; CPU: of its steps with per-step usage)"
                .to_owned(),
            header: vec!["platform", "steps", "ran", "cached", "failed", "incomplete", "wall", "step time", "CPU"],
            numeric: vec![false, true, true, true, true, true, true, true, true],
            rows: totals
                .iter()
                .map(|t| {
                    vec![
                        t.platform.clone(),
                        t.steps.to_string(),
                        t.executed.to_string(),
                        t.cached.to_string(),
                        t.failed.to_string(),
                        t.incomplete.to_string(),
                        dash(t.wall_seconds.map(seconds)),
                        seconds(t.step_seconds),
                        dash(t.cpu_seconds.map(|c| format!("{} ({})", seconds(c), steps(t.steps_with_usage)))),
                    ]
                })
                .collect(),
        });
    }
    Section { class: "build", title: format!("build {}", b.reference), lines, tables }
}
