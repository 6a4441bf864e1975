//! The table of the top commands, shared by the Markdown and HTML reports:
//! count, CPU and its share, the largest peak RSS with its pid and label
//! (its input file), and storage IO.

use stepmon_model::processes::Processes;
use stepmon_report::processes::largest;
use stepmon_report::units::{bytes, percent, seconds};

/// Commands in the table.
const ROWS: usize = 10;

/// The column headers.
pub(crate) const HEADERS: [&str; 7] =
    ["Command", "Processes", "CPU", "Share of the step's CPU", "Largest peak RSS", "Read", "Written"];

/// The table's caption and its rows as text, unescaped.
pub(crate) struct Table {
    /// "N processes, none lost".
    pub(crate) caption: String,
    /// One row per command, most CPU first, [`HEADERS`] in order.
    pub(crate) rows: Vec<[String; 7]>,
}

/// The table, or `None` when there are no processes. `step_cpu_seconds`
/// as for
/// `stepmon_report::processes::ProcessesText::summary_lines`.
pub(crate) fn table(p: &Processes, step_cpu_seconds: Option<f64>) -> Option<Table> {
    if p.source.is_none() || p.commands.is_empty() {
        return None;
    }
    let caption = format!("{} processes, {}", p.processes, p.losses());
    let total = step_cpu_seconds.filter(|c| *c > 0.0).unwrap_or_else(|| p.cpu_seconds());
    let rows = p
        .commands
        .iter()
        .take(ROWS)
        .map(|c| {
            let share = if total > 0.0 { percent(c.cpu_seconds / total) } else { "—".to_owned() };
            let largest = largest(c).unwrap_or_else(|| "—".to_owned());
            [
                c.command.clone(),
                c.count.to_string(),
                seconds(c.cpu_seconds),
                share,
                largest,
                bytes(c.read_bytes),
                bytes(c.write_bytes),
            ]
        })
        .collect();
    Some(Table { caption, rows })
}
