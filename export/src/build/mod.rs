//! A build's report (`stepmon build`, [`stepmon_report::build::Build`]) as
//! text, Markdown for a CI job summary, and one self-contained HTML page
//! drawn like cargo's `--timings` (a bar per action on lanes, coloured by
//! kind) with the build's memory under it on the same time axis.
//!
//! Each renders the same facts in the same words ([`facts`]): the build's
//! totals, its actions by kind, the remainder, the critical path, the
//! memory at the peak moment, the `-j` advice; then the actions by wall
//! time and by memory peak, the `top` of each in full and the rest
//! summed up. Actions are numbered by their place in the job (`#12`), as
//! every view of the job numbers them.

pub mod html;
pub mod markdown;
pub mod text;

use stepmon_report::build::{ActionKind, Build};
use stepmon_report::job::table::{Row, dash};
use stepmon_report::units::{bytes, percent, seconds};

/// How many actions each ranking shows by default.
pub const TOP: usize = 10;

/// The column heads of an action's row.
pub const HEADER: [&str; 8] = ["#", "action", "start", "wall", "CPU", "mem peak", "IO read/write", "stall"];

/// The cells of the action `i` (an index into [`Build::actions`]) under
/// [`HEADER`].
#[must_use]
pub fn cells(build: &Build, i: usize) -> [String; 8] {
    let action = &build.actions[i];
    let r = build.row(action);
    let failed = if action.failed { " — FAILED" } else { "" };
    [
        format!("#{}", action.row + 1),
        format!("{}{failed}", r.shown_name()),
        format!("+{}", seconds(action.start)),
        dash(r.wall_seconds, seconds),
        dash(r.cpu_seconds, seconds),
        dash(r.memory_peak_bytes, bytes),
        format!("{} / {}", dash(r.io_read_bytes, bytes), dash(r.io_write_bytes, bytes)),
        stall(r),
    ]
}

/// The worst stall of a row: the largest of its CPU, memory and IO shares,
/// with its kind (`cpu 34%`), or a dash.
fn stall(r: &Row) -> String {
    [("cpu", r.cpu_stall_share), ("mem", r.memory_stall_share), ("io", r.io_stall_share)]
        .into_iter()
        .filter_map(|(kind, share)| share.filter(|s| s.is_finite()).map(|s| (kind, s)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or_else(|| "—".to_owned(), |(kind, share)| format!("{kind} {}", percent(share)))
}

/// The name of action `i` with its place: `#12 serde 1.0.219 (lib)`.
#[must_use]
pub fn name(build: &Build, i: usize) -> String {
    let action = &build.actions[i];
    format!("#{} {}", action.row + 1, build.row(action).shown_name())
}

/// What the actions beyond the first `top` of `order` add up to, in words
/// (`None` when there are none).
#[must_use]
pub fn rest(build: &Build, order: &[usize], top: usize) -> Option<String> {
    let rest = order.get(top..).filter(|r| !r.is_empty())?;
    let rows: Vec<&Row> = rest.iter().map(|&i| build.row(&build.actions[i])).collect();
    let wall: f64 = rows.iter().filter_map(|r| r.wall_seconds).sum();
    let cpu: f64 = rows.iter().filter_map(|r| r.cpu_seconds).sum();
    let peak = rows.iter().filter_map(|r| r.memory_peak_bytes).max();
    Some(format!(
        "and {} more: {} wall and {} CPU in all, peaks up to {}",
        rest.len(),
        seconds(wall),
        seconds(cpu),
        dash(peak, bytes)
    ))
}

/// The build's facts, each a line of words: its totals, its actions, the
/// remainder, the critical path, the memory at its peak, the actions'
/// peaks together, the advice.
#[must_use]
pub fn facts(build: &Build) -> Vec<(&'static str, String)> {
    let outer = &build.job.steps[build.outer];
    let mut facts = vec![(
        "build",
        format!(
            "{} — exit {}, {} wall, {} CPU, memory peak {} (its cgroup, which holds every action's)",
            outer.shown_name(),
            dash(build.exit_code, |c| c.to_string()),
            dash(build.wall_seconds, seconds),
            dash(build.cpu_seconds, seconds),
            dash(build.memory_peak_bytes, bytes)
        ),
    )];
    let mut kinds: Vec<String> = Vec::new();
    for kind in ActionKind::ALL {
        let n = build.actions.iter().filter(|a| a.kind == kind).count();
        if n > 0 {
            kinds.push(format!("{} {n}", kind.words()));
        }
    }
    let failed = build.failed().len();
    let probes = match build.probes {
        0 => String::new(),
        n => format!(
            "; {n} probe{} (the build tool asking the compiler about itself, trial compiles: {} CPU)",
            if n == 1 { "" } else { "s" },
            seconds(build.probe_cpu_seconds)
        ),
    };
    facts.push((
        "actions",
        format!(
            "{} ({}), up to {} at once{probes}{}",
            build.actions.len(),
            if kinds.is_empty() { "none".to_owned() } else { kinds.join(", ") },
            build.most_at_once,
            if failed > 0 { format!("; {failed} FAILED") } else { String::new() }
        ),
    ));
    facts.push(("remainder", remainder(build)));
    if let Some(own) = own_cost(build) {
        facts.push(("stepmon", own));
    }
    facts.push(("critical path", critical_path(build)));
    if let Some(peak) = &build.memory.peak {
        let file = peak.file_bytes.map_or_else(String::new, |f| format!(" (page cache {})", bytes(f)));
        let running: Vec<String> = peak
            .running
            .iter()
            .map(|&i| format!("{} {}", build.row(&build.actions[i]).shown_name(), dash(peak_of(build, i), bytes)))
            .collect();
        let who = if running.is_empty() { "no action running".to_owned() } else { running.join(", ") };
        // The readings come on the sampler's schedule: the peak itself
        // (the kernel's high-water mark) may fall between two of them.
        let between = match build.memory_peak_bytes {
            Some(p) if p > peak.bytes => format!(" (the peak, {}, fell between readings)", bytes(p)),
            _ => String::new(),
        };
        let outside = match peak.outside_bytes {
            0 if !peak.running.is_empty() => "; their peaks cover the reading".to_owned(),
            0 => String::new(),
            n => format!("; {} outside them at least", bytes(n)),
        };
        facts.push((
            "memory",
            format!(
                "highest reading at {}: {}{file}{between} — {who} (their peaks){outside}",
                seconds(peak.at),
                bytes(peak.bytes),
            ),
        ));
    }
    if let Some(together) = &build.memory.most_together {
        let running: Vec<String> = together
            .running
            .iter()
            .map(|&i| format!("{} {}", build.row(&build.actions[i]).shown_name(), dash(peak_of(build, i), bytes)))
            .collect();
        facts.push((
            "actions at once",
            format!(
                "their peaks summed were highest at {}: {} — {}",
                seconds(together.at),
                bytes(together.bytes),
                running.join(", ")
            ),
        ));
    }
    facts.push(("-j", build.parallelism.reason.clone()));
    facts
}

fn peak_of(build: &Build, i: usize) -> Option<u64> {
    build.row(&build.actions[i]).memory_peak_bytes
}

fn remainder(build: &Build) -> String {
    let r = &build.remainder;
    let stretches: Vec<String> =
        r.idle_stretches.iter().take(3).map(|(a, b)| format!("+{}–{}", seconds(*a), seconds(*b))).collect();
    let longest = if stretches.is_empty() { String::new() } else { format!(" (longest {})", stretches.join(", ")) };
    let memory = match r.memory_at_peak_bytes {
        Some(n) if n > 0 => format!("; {} of memory at the highest reading at least", bytes(n)),
        _ => String::new(),
    };
    format!(
        "outside every action (the build tool itself, build scripts run, linkers a driver called): {} CPU; \
         {} of wall with no action running{longest}{memory}",
        dash(r.cpu_seconds, seconds),
        dash(r.idle_seconds, seconds),
    )
}

/// stepmon's own CPU: the launchers' (in the remainder) and the build's
/// collector's, against the build's CPU.
fn own_cost(build: &Build) -> Option<String> {
    let own = &build.own_cost;
    let launchers = own.launchers_cpu_seconds.map(|cpu| {
        #[allow(clippy::cast_precision_loss)] // a count of steps
        let each = cpu / own.launchers.max(1) as f64;
        format!(
            "{} of CPU in its {} launcher{} ({} each, part of the remainder)",
            seconds(cpu),
            own.launchers,
            if own.launchers == 1 { "" } else { "s" },
            seconds(each)
        )
    });
    let collector = own.build_cpu_seconds.map(|cpu| format!("{} in the build's own collector", seconds(cpu)));
    let total = own.launchers_cpu_seconds.unwrap_or(0.0) + own.build_cpu_seconds.unwrap_or(0.0);
    let share = build
        .cpu_seconds
        .filter(|c| *c > 0.0 && (own.launchers_cpu_seconds.is_some() || own.build_cpu_seconds.is_some()))
        .map(|c| format!(": {:.1}% of the build's CPU", 100.0 * total / c));
    let parts: Vec<String> = [launchers, collector].into_iter().flatten().collect();
    if parts.is_empty() {
        return None;
    }
    Some(format!("{}{}", parts.join(" and "), share.unwrap_or_default()))
}

fn critical_path(build: &Build) -> String {
    let path = &build.critical_path;
    if path.actions.is_empty() {
        return "no action".to_owned();
    }
    let chain: Vec<String> = path.actions.iter().map(|&i| name(build, i)).collect();
    let shown = if chain.len() > 8 {
        format!("{} … ({} more) … {}", chain[..3].join(" → "), chain.len() - 6, chain[chain.len() - 3..].join(" → "))
    } else {
        chain.join(" → ")
    };
    format!(
        "{} action{}, {} in them and {} outside them: {shown}",
        path.actions.len(),
        if path.actions.len() == 1 { "" } else { "s" },
        seconds(path.action_seconds),
        seconds(path.outside_seconds)
    )
}

/// How the critical path is found, in one sentence (every view says it).
pub const CRITICAL_PATH_METHOD: &str = "The critical path walks back from the action that ended last to the \
     action that ended latest before it started, and so on: without the build tool's dependency graph, \
     that is the likeliest wait, not a known one (an action that waited for a job slot looks the same).";

/// What the remainder is, in one sentence (every view says it).
pub const REMAINDER_METHOD: &str = "The remainder is what the build's own cgroup counted beyond its \
     actions' cgroups, which are nested inside it: the build tool, the build scripts it ran, and any \
     program the build ran that is no compiler through the launcher.";
