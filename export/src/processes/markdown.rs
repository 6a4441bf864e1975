//! The Markdown table of the top commands (CI job summaries).

use std::fmt::Write as _;

use stepmon_model::processes::Processes;

use super::table::HEADERS;
use crate::escape::markdown_inline as md;

/// The table with its heading, or nothing when there are no processes.
/// `step_cpu_seconds` as for
/// `stepmon_report::processes::ProcessesText::summary_lines`.
pub(crate) fn markdown_table(p: &Processes, step_cpu_seconds: Option<f64>) -> String {
    let Some(table) = super::table::table(p, step_cpu_seconds) else { return String::new() };
    let mut out = format!("\n**Top commands** ({})\n\n| {} |\n", table.caption, HEADERS.join(" | "));
    out.push_str("|:--|--:|--:|--:|:--|--:|--:|\n");
    for row in &table.rows {
        // Every cell escaped: the label comes from a process's arguments.
        let cells: Vec<String> = row.iter().map(|c| md(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}
