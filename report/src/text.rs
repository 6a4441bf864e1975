//! The human summary of a step: one fact per line, then the verdicts.

use crate::processes::ProcessesText as _;
use std::fmt::Write as _;

use stepmon_model::sample::StallSummary;

use crate::step::{Step, WallSource};
use crate::units::{bytes, percent, seconds};
use stepmon_model::source::Group;
use stepmon_model::verdict::Verdicts;

fn or_dash<T>(value: Option<T>, show: impl Fn(T) -> String) -> String {
    value.map_or_else(|| "—".to_owned(), show)
}

fn stall(name: &str, s: &StallSummary) -> Option<String> {
    let some = s.some_seconds?;
    Some(format!("{name} {}{}", seconds(some), s.some_share.map_or_else(String::new, |p| format!(" ({})", percent(p)))))
}

/// ` [process tree]` after a line whose numbers are not from the step's own
/// cgroup (empty for steps that record no sources: their own cgroup).
fn from(step: &Step, group: Group) -> String {
    match step.sources.get(group) {
        Some(source) if source.rung != stepmon_model::source::Rung::CgroupV2 => format!("  [{}]", source.label()),
        _ => String::new(),
    }
}

/// The step as the summary's first line names it: the command in
/// backquotes ([`crate::step::shown_command`]: elided past a bound), after the name when the name is not simply the program's
/// base name, followed by the `--label`s.
fn who(step: &Step) -> String {
    let Some(run) = step.run.as_ref().filter(|r| !r.command.is_empty()) else {
        return format!("`{}`", step.name);
    };
    let command = crate::step::shown_command(&run.command);
    let mut out = match &run.name {
        Some(name) if *name != stepmon_model::labels::default_name(&run.command) => {
            format!("{} `{command}`", crate::step::elide(&stepmon_model::labels::quote(name)))
        }
        _ => format!("`{command}`"),
    };
    if !run.labels.is_empty() {
        let labels: Vec<String> =
            run.labels.iter().map(|l| format!("{}={}", l.key, stepmon_model::labels::quote(&l.value))).collect();
        let _ = write!(out, " [{}]", labels.join(" "));
    }
    out
}

/// Renders the summary of `step` with its `verdicts` (plain text).
#[must_use]
pub fn render(step: &Step, verdicts: &Verdicts) -> String {
    let mut out = String::new();
    let summary = &step.summary;
    let status = match step.run.as_ref().map(|r| (r.exit_code, r.signal)) {
        Some((Some(code), _)) => format!(" exited {code}"),
        Some((None, Some(signal))) => format!(" was killed by signal {signal}"),
        Some((None, None)) => " did not start".to_owned(),
        None => String::new(),
    };
    let wall = match (step.wall_seconds, step.wall_source) {
        (Some(w), WallSource::Measured | WallSource::Vertex) => format!(" after {}", seconds(w)),
        (Some(w), _) => format!(" after about {}", seconds(w)),
        (None, _) => String::new(),
    };
    let _ = writeln!(out, "stepmon: {}{status}{wall}", who(step));
    let c = &summary.cpu;
    let mut cpu = format!(
        "  cpu      user {}  system {}  = {} cores on average",
        or_dash(c.user_seconds, seconds),
        or_dash(c.system_seconds, seconds),
        or_dash(c.average_cores, |v| format!("{v:.2}"))
    );
    if let Some(t) = c.throttled_seconds {
        let _ = write!(cpu, "  throttled {} ({} periods)", seconds(t), c.throttled_periods.unwrap_or(0));
    }
    let _ = writeln!(out, "{cpu}{}", from(step, Group::Cpu));
    let m = &summary.memory;
    if m.peak_bytes.is_some() || m.anon_at_peak_bytes.is_some() {
        let _ = writeln!(
            out,
            "  memory   peak {}{} (anon {}, file {})  oom kills {}{}",
            if crate::source::is_lower_bound(step, Group::Memory) { "≥ " } else { "" },
            or_dash(m.peak_bytes, bytes),
            or_dash(m.anon_at_peak_bytes, bytes),
            or_dash(m.file_at_peak_bytes, bytes),
            or_dash(m.oom_kills, |k| k.to_string()),
            from(step, Group::Memory)
        );
    }
    for placed in crate::event::of_step(step) {
        let _ = writeln!(out, "  event    {}", placed.words);
    }
    if summary.io.read_bytes.is_some() || summary.io.write_bytes.is_some() {
        let _ = writeln!(
            out,
            "  io       read {}  write {}{}",
            or_dash(summary.io.read_bytes, bytes),
            or_dash(summary.io.write_bytes, bytes),
            from(step, Group::Io)
        );
    }
    if let Some(peak) = summary.pids_peak {
        let at_least = if crate::source::is_lower_bound(step, Group::Pids) { "≥ " } else { "" };
        let _ = writeln!(out, "  pids     peak {at_least}{peak}{}", from(step, Group::Pids));
    }
    if summary.pids_peak.is_none()
        && matches!(step.origin, crate::step::Origin::BuildKit { .. })
        && step.usage.resource_usage.samples.len() == 1
    {
        let _ = writeln!(out, "  pids     unknown: {}", crate::step::POST_EXIT_SAMPLE);
    }
    let stalls: Vec<String> =
        [("cpu", &summary.cpu_stall), ("memory", &summary.memory_stall), ("io", &summary.io_stall)]
            .into_iter()
            .filter_map(|(name, s)| stall(name, s))
            .collect();
    if !stalls.is_empty() {
        let _ = writeln!(out, "  stall    {}{}", stalls.join("  "), from(step, Group::Pressure));
    }
    if summary.net_rx_bytes.is_some() || summary.net_tx_bytes.is_some() {
        let _ = writeln!(
            out,
            "  network  rx {}  tx {}",
            or_dash(summary.net_rx_bytes, bytes),
            or_dash(summary.net_tx_bytes, bytes)
        );
    }
    if let Some(busy) = summary.machine.cpu_busy_share {
        let others = summary.machine.others_busy_share.map_or_else(String::new, |o| format!(", others {}", percent(o)));
        let _ = writeln!(out, "  machine  cpu busy {}{others} during the step", percent(busy));
    }
    if let Some(tree) = step.run.as_ref().and_then(|r| r.process_tree) {
        let _ = writeln!(
            out,
            "  tree     {} reaped{}, largest process {}, faults {} minor / {} major, switches {} voluntary / {} involuntary",
            match tree.processes_reaped {
                1 => "1 process".to_owned(),
                n => format!("{n} processes"),
            },
            match tree.leftovers_killed {
                0 => String::new(),
                n => format!(" ({n} left behind, killed)"),
            },
            bytes(tree.max_rss_bytes),
            tree.minor_faults,
            tree.major_faults,
            tree.voluntary_context_switches,
            tree.involuntary_context_switches
        );
    }
    if let Some(p) = step.run.as_ref().and_then(|r| r.processes.as_ref()) {
        let step_cpu = c.usage_seconds.or_else(|| c.user_seconds.zip(c.system_seconds).map(|(u, s)| u + s));
        for line in p.summary_lines(step_cpu) {
            let _ = writeln!(out, "  {line}");
        }
    }
    if let Some(e) = step.run.as_ref().and_then(|r| r.enclosing_cgroup.as_ref()) {
        let cpu = e.cpu_seconds_without_stepmon().map_or_else(String::new, |c| {
            format!(": cpu {} without stepmon's own {}", seconds(c), seconds(e.stepmon_cpu_seconds.unwrap_or(0.0)))
        });
        let _ = writeln!(out, "  around   {}{cpu}", e.covers());
    }
    for missing in step.run.iter().flat_map(|r| &r.not_measured) {
        let _ = writeln!(out, "  not measured: {missing}");
    }
    for sentence in verdicts.sentences() {
        let _ = writeln!(out, "  => {sentence}");
    }
    // Advice only where there is some: "no command ran 3 times" on every
    // small step would be noise (the JSON says it).
    if let Some(p) = step.advice().parallelism.filter(|p| p.suggested_jobs.is_some()) {
        let _ = writeln!(out, "  => {}", p.reason);
    }
    out
}
