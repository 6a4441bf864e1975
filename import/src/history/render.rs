//! A build as text and as JSON: the timeline, the critical path, the top
//! steps, cached vs executed counts, the per-platform totals
//! ([`super::summary`]), the machine, and each step's own usage where
//! BuildKit recorded it.

use std::fmt::Write as _;

use jiff::Timestamp;
use serde::Serialize;

use super::build::{Build, BuildStep, MachineWindow, StepState};
use super::summary::{
    PlatformTotals, counts_line, critical_path_seconds, critical_steps, executed_wall, label, platform_totals,
    state_word, steps,
};
use stepmon_report::units::{bytes, percent, seconds};

/// How many steps each "top" list shows.
const TOP: usize = 5;

fn offset(build: &Build, t: Option<Timestamp>) -> Option<f64> {
    let origin = build.created.or_else(|| build.steps.iter().find_map(|s| s.started))?;
    Some(t?.duration_since(origin).as_secs_f64())
}

fn dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "—".to_owned())
}

fn machine_words(m: &MachineWindow) -> String {
    let mut parts = Vec::new();
    if let Some(b) = m.cpu_busy_share {
        parts.push(format!("cpu busy {}", percent(b)));
    }
    if let Some(s) = m.cpu_stall_share {
        parts.push(format!("cpu stall {}", percent(s)));
    }
    if m.saturated == Some(true) {
        parts.push("SATURATED".to_owned());
    }
    parts.join(", ")
}

/// A "top steps" list: its title, the steps with their values, how a value prints.
type TopList<'a> = (&'static str, Vec<(&'a BuildStep, f64)>, fn(f64) -> String);

/// Steps sorted by `key`, largest first, those without a value left out.
fn top(build: &Build, key: impl Fn(&BuildStep) -> Option<f64>) -> Vec<(&BuildStep, f64)> {
    let mut v: Vec<(&BuildStep, f64)> = build.steps.iter().filter_map(|s| Some((s, key(s)?))).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v.truncate(TOP);
    v
}

#[allow(clippy::cast_precision_loss)]
fn memory_peak(s: &BuildStep) -> Option<f64> {
    s.usage.as_ref()?.summary.memory.peak_bytes.map(|b| b as f64)
}

fn cpu_seconds(s: &BuildStep) -> Option<f64> {
    s.usage.as_ref()?.summary.cpu.usage_seconds
}

/// The builds as text.
#[must_use]
pub fn render(builds: &[Build]) -> String {
    let mut out = String::new();
    for (i, build) in builds.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        render_one(&mut out, build);
    }
    out
}

#[allow(clippy::too_many_lines)]
fn render_one(out: &mut String, b: &Build) {
    let platforms = if b.platforms.is_empty() { String::new() } else { format!(" for {}", b.platforms.join(", ")) };
    let target = b.target.as_ref().map_or_else(String::new, |t| format!(" target {t}"));
    let _ = writeln!(out, "build {} ({}{target}){platforms}", b.reference, b.dockerfile_path);
    let when = b.created.map_or_else(|| "created at an unknown time".to_owned(), |c| format!("created {c}"));
    let wall = b.wall_seconds.map_or_else(|| "wall time unknown".to_owned(), |w| format!("took {}", seconds(w)));
    let outcome = if b.error.is_some() { "FAILED" } else { "succeeded" };
    let _ = writeln!(out, "  {outcome}: {when}, {wall}");
    let _ = writeln!(out, "  steps    {}", counts_line(&b.counts));
    if let Some(e) = &b.error {
        let _ = writeln!(out, "  error    {e}");
        for s in b.steps.iter().filter(|s| matches!(s.state, StepState::Failed { .. })) {
            let code = s.exit_code.map_or_else(String::new, |c| format!(" (exit code {c})"));
            let _ = writeln!(out, "  failing  {}{code}", label(s));
            if let Some(cmd) = &s.command {
                let _ = writeln!(out, "           command: {}", stepmon_report::step::elide(cmd));
            }
        }
    }
    for source in &b.sources {
        let _ = writeln!(out, "  read     {source}");
    }
    if let Some(n) = &b.notice {
        let _ = writeln!(out, "  notice   {n}");
    }
    let _ = writeln!(out, "\n  timeline (seconds from the build's start)");
    let _ = writeln!(out, "  {:>7} {:>7}  {:<10} step", "start", "wall", "state");
    for s in &b.steps {
        let start = dash(offset(b, s.started).map(|o| format!("{o:.2}")));
        let wall = dash(s.wall_seconds.map(|w| format!("{w:.2}")));
        let machine = machine_words(&s.machine);
        let machine = if machine.is_empty() { String::new() } else { format!("  [{machine}]") };
        let _ = writeln!(out, "  {start:>7} {wall:>7}  {:<10} {}{machine}", state_word(&s.state), label(s));
        if s.state == StepState::Unrecorded {
            let _ = writeln!(out, "  {:>7} {:>7}  {:<10}   {}", "", "", "", super::NO_STEP_USAGE);
        }
    }
    if let Some(total) = critical_path_seconds(b) {
        let _ = writeln!(out, "\n  critical path ({} over {})", seconds(total), steps(b.critical_path.len()));
        for s in critical_steps(b) {
            let _ = writeln!(out, "    {:>8}  {}", dash(executed_wall(s).map(seconds)), label(s));
        }
    }
    let lists: [TopList<'_>; 3] = [
        ("wall", top(b, executed_wall), seconds),
        ("CPU", top(b, cpu_seconds), seconds),
        (
            "memory peak",
            top(b, memory_peak),
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            |v| bytes(v as u64),
        ),
    ];
    for (what, list, show) in lists {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n  top steps by {what}");
        for (s, v) in list {
            let _ = writeln!(out, "    {:>10}  {}", show(v), label(s));
        }
    }
    let totals = platform_totals(b);
    if !totals.is_empty() {
        let _ = writeln!(out, "\n  per platform");
        for t in totals {
            let cpu = t
                .cpu_seconds
                .map_or_else(String::new, |c| format!(", CPU {} ({} with usage)", seconds(c), t.steps_with_usage));
            let _ = writeln!(
                out,
                "    {}: {}, {} ran, {} cached, {} failed, {} incomplete; wall {}, {} of step time{cpu}",
                t.platform,
                steps(t.steps),
                t.executed,
                t.cached,
                t.failed,
                t.incomplete,
                dash(t.wall_seconds.map(seconds)),
                seconds(t.step_seconds)
            );
        }
    }
    let saturated: Vec<&BuildStep> = b.steps.iter().filter(|s| s.machine.saturated == Some(true)).collect();
    if !b.machine.is_empty() {
        let whole = super::build::machine_window(&b.machine, b.created, b.completed);
        let _ = writeln!(
            out,
            "\n  machine  {} samples; over the build: {}",
            b.machine.len(),
            dash(Some(machine_words(&whole)).filter(|w| !w.is_empty()))
        );
        if saturated.is_empty() {
            let _ = writeln!(out, "           no step ran while the machine was saturated");
        }
        for s in saturated {
            let _ = writeln!(out, "           saturated while {} ran", label(s));
        }
    }
    for s in b.steps.iter().filter(|s| s.usage.is_some()) {
        if let Some(step) = &s.usage {
            let _ = writeln!(out, "\n  usage of {}", label(s));
            let text = stepmon_report::text::render(step, &step.verdicts());
            for line in text.lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonStep<'a> {
    digest: &'a str,
    name: &'a str,
    vertex_name: &'a str,
    platform: Option<&'a str>,
    location: Option<&'a str>,
    command: Option<&'a str>,
    #[serde(flatten)]
    state: &'a StepState,
    started: Option<Timestamp>,
    completed: Option<Timestamp>,
    start_offset_seconds: Option<f64>,
    wall_seconds: Option<f64>,
    inputs: &'a [String],
    on_critical_path: bool,
    machine: &'a MachineWindow,
    usage: Option<stepmon_export::StepJson<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonBuild<'a> {
    reference: &'a str,
    dockerfile: &'a str,
    target: Option<&'a str>,
    platforms: &'a [String],
    created: Option<Timestamp>,
    completed: Option<Timestamp>,
    wall_seconds: Option<f64>,
    error: Option<&'a str>,
    counts: &'a super::build::Counts,
    timeline_from: Option<&'a str>,
    sources: &'a [String],
    notice: Option<&'a str>,
    machine_samples: usize,
    critical_path: Vec<&'a str>,
    critical_path_seconds: Option<f64>,
    per_platform: Vec<PlatformTotals>,
    steps: Vec<JsonStep<'a>>,
}

/// The builds as JSON (an array, one object per build).
#[must_use]
pub fn to_json(builds: &[Build]) -> String {
    let json: Vec<JsonBuild<'_>> = builds
        .iter()
        .map(|b| JsonBuild {
            reference: &b.reference,
            dockerfile: &b.dockerfile,
            target: b.target.as_deref(),
            platforms: &b.platforms,
            created: b.created,
            completed: b.completed,
            wall_seconds: b.wall_seconds,
            error: b.error.as_deref(),
            counts: &b.counts,
            timeline_from: b.timeline_from,
            sources: &b.sources,
            notice: b.notice.as_deref(),
            machine_samples: b.machine.len(),
            critical_path: critical_steps(b).map(|s| s.digest.as_str()).collect(),
            critical_path_seconds: critical_path_seconds(b),
            per_platform: platform_totals(b),
            steps: b
                .steps
                .iter()
                .enumerate()
                .map(|(i, s)| JsonStep {
                    digest: &s.digest,
                    name: &s.name,
                    vertex_name: &s.vertex_name,
                    platform: s.platform.as_deref(),
                    location: s.location.as_deref(),
                    command: s.command.as_deref(),
                    state: &s.state,
                    started: s.started,
                    completed: s.completed,
                    start_offset_seconds: offset(b, s.started),
                    wall_seconds: s.wall_seconds,
                    inputs: &s.inputs,
                    on_critical_path: b.critical_path.contains(&i),
                    machine: &s.machine,
                    usage: s.usage.as_ref().map(stepmon_export::StepJson::of),
                })
                .collect(),
        })
        .collect();
    serde_json::to_string_pretty(&json).unwrap_or_default() + "\n"
}
