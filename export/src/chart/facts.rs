//! The key numbers of a step as (label, value) rows in words and human
//! units — one list for the Markdown and the HTML table, so both show the
//! same. A number that was not recorded reads "not measured", never 0.

use stepmon_model::sample::StallSummary;

use stepmon_model::source::{Bound, Group, Rung};
use stepmon_report::step::{Step, WallSource};
use stepmon_report::units::{bytes, percent, seconds};

/// What the table says where the summary has no value.
pub(crate) const NOT_MEASURED: &str = "not measured";

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fact {
    /// What the row is (`OOM kills`).
    pub(crate) label: &'static str,
    /// The value in human units, or [`NOT_MEASURED`].
    pub(crate) value: String,
}

fn or_not_measured<T>(value: Option<T>, show: impl Fn(T) -> String) -> String {
    value.map_or_else(|| NOT_MEASURED.to_owned(), show)
}

/// `a / b`, or "not measured" when neither is known.
fn pair<T: Copy>(a: Option<T>, b: Option<T>, show: impl Fn(T) -> String) -> String {
    if a.is_none() && b.is_none() {
        return NOT_MEASURED.to_owned();
    }
    let one = |v: Option<T>| v.map_or_else(|| "—".to_owned(), &show);
    format!("{} / {}", one(a), one(b))
}

fn stall(s: &StallSummary) -> String {
    or_not_measured(s.some_seconds, |some| match s.some_share {
        Some(share) => format!("{} ({} of the step)", seconds(some), percent(share)),
        None => seconds(some),
    })
}

/// How the step ended and how long it took, as a phrase:
/// `exited 7 after 32.7 ms`, `ran about 4.00 s (estimated from samples)`.
pub(crate) fn status(step: &Step) -> String {
    let ended = match step.run.as_ref().map(|r| (r.exit_code, r.signal)) {
        Some((Some(code), _)) => format!("exited {code}"),
        Some((None, Some(signal))) => format!("was killed by signal {signal}"),
        Some((None, None)) => "did not start".to_owned(),
        None => "ran".to_owned(),
    };
    match (step.wall_seconds, step.wall_source) {
        (Some(w), WallSource::Measured | WallSource::Vertex) => format!("{ended} after {}", seconds(w)),
        (Some(w), _) => format!("{ended} after about {} (estimated from samples)", seconds(w)),
        (None, _) => format!("{ended}; wall time unknown"),
    }
}

/// The rows of the summary table of `step`.
pub(crate) fn facts(step: &Step) -> Vec<Fact> {
    let s = &step.summary;
    let (c, m) = (&s.cpu, &s.memory);
    let wall = match (step.wall_seconds, step.wall_source) {
        (Some(w), WallSource::Measured | WallSource::Vertex) => seconds(w),
        (Some(w), _) => format!("about {} (estimated from samples)", seconds(w)),
        (None, _) => "unknown".to_owned(),
    };
    let throttled = or_not_measured(c.throttled_seconds, |t| match c.throttled_periods {
        Some(p) => format!("{} ({p} periods)", seconds(t)),
        None => seconds(t),
    });
    let machine = or_not_measured(s.machine.cpu_busy_share, |busy| {
        let mut text = percent(busy);
        if let Some(others) = s.machine.others_busy_share {
            text.push_str(&format!(" (others {}", percent(others)));
            if let Some(steal) = s.machine.steal_share {
                text.push_str(&format!(", steal {}", percent(steal)));
            }
            text.push(')');
        }
        text
    });
    let count = |v: u64| v.to_string();
    let fact = |label, value| Fact { label, value };
    let mut rows = vec![
        fact("Wall time", wall),
        fact("CPU user / system", pair(c.user_seconds, c.system_seconds, seconds)),
        fact("CPU average", or_not_measured(c.average_cores, |v| format!("{v:.2} cores"))),
        fact("CPU throttled", throttled),
        fact("Memory peak", or_not_measured(m.peak_bytes, bytes)),
        fact("Memory anon / file at peak", pair(m.anon_at_peak_bytes, m.file_at_peak_bytes, bytes)),
        fact("OOM kills", or_not_measured(m.oom_kills, count)),
        fact("memory.max / memory.high hits", pair(m.max_hits, m.high_hits, count)),
        fact("IO read / write", pair(s.io.read_bytes, s.io.write_bytes, bytes)),
        fact("Pids peak", or_not_measured(s.pids_peak, count)),
        fact("Waiting for CPU", stall(&s.cpu_stall)),
        fact("Waiting for memory", stall(&s.memory_stall)),
        fact("Waiting for IO", stall(&s.io_stall)),
        fact("Network rx / tx", pair(s.net_rx_bytes, s.net_tx_bytes, bytes)),
        fact("Machine CPU busy", machine),
    ];
    for row in &mut rows {
        label_source(step, row);
    }
    rows
}

/// The field group a row belongs to.
fn group_of(label: &str) -> Option<Group> {
    match label {
        "CPU user / system" | "CPU average" | "CPU throttled" => Some(Group::Cpu),
        "Memory peak" | "Memory anon / file at peak" | "OOM kills" | "memory.max / memory.high hits" => {
            Some(Group::Memory)
        }
        "IO read / write" => Some(Group::Io),
        "Pids peak" => Some(Group::Pids),
        "Waiting for CPU" | "Waiting for memory" | "Waiting for IO" => Some(Group::Pressure),
        "Network rx / tx" => Some(Group::Network),
        _ => None,
    }
}

/// Appends where a measured row's numbers came from when that is not the
/// step's own cgroup (`2.61 s / 11.9 ms (process tree)`), and marks a lower
/// bound (`≥ 64.0 MiB`).
fn label_source(step: &Step, row: &mut Fact) {
    let Some(source) = group_of(row.label).and_then(|g| step.sources.get(g)) else { return };
    if row.value == NOT_MEASURED || row.label == "CPU throttled" {
        return;
    }
    if source.bound == Bound::LowerBound && matches!(row.label, "Memory peak" | "Pids peak") {
        row.value.insert_str(0, "≥ ");
    }
    if source.bound == Bound::UpperBound && matches!(row.label, "Memory peak" | "Pids peak") {
        row.value.insert_str(0, "≤ ");
    }
    if source.rung != Rung::CgroupV2 {
        row.value.push_str(&format!(" ({})", source.label()));
    }
}
