//! The Markdown table of the top commands (CI job summaries): count, CPU
//! and its share, the largest peak RSS with its pid, and storage IO.

use std::fmt::Write as _;

use super::Processes;
use crate::export::chart::escape::markdown_inline as md;
use crate::units::{bytes, percent, seconds};

/// Commands in the table.
const ROWS: usize = 10;

impl Processes {
    /// The table with its heading, or nothing when there are no processes.
    /// `step_cpu_seconds` as for [`Processes::summary_lines`].
    #[must_use]
    pub fn markdown_table(&self, step_cpu_seconds: Option<f64>) -> String {
        if self.source.is_none() || self.commands.is_empty() {
            return String::new();
        }
        let lost = match self.lost_at_most {
            0 => "none lost".to_owned(),
            n => format!("up to {n} records lost, totals partial"),
        };
        let mut out = format!("\n**Top commands** ({} processes, {lost})\n\n", self.processes);
        out.push_str("| Command | Processes | CPU | Share of the step's CPU | Largest peak RSS | Read | Written |\n");
        out.push_str("|:--|--:|--:|--:|:--|--:|--:|\n");
        let total = step_cpu_seconds.filter(|c| *c > 0.0).unwrap_or_else(|| self.cpu_seconds());
        for c in self.commands.iter().take(ROWS) {
            let share = if total > 0.0 { percent(c.cpu_seconds / total) } else { "—".to_owned() };
            let largest = c
                .max_peak_rss_bytes
                .zip(c.max_peak_rss_pid)
                .map_or_else(|| "—".to_owned(), |(b, pid)| format!("{} (pid {pid})", bytes(b)));
            let _ = writeln!(
                out,
                "| {} | {} | {} | {share} | {largest} | {} | {} |",
                md(&c.command),
                c.count,
                seconds(c.cpu_seconds),
                bytes(c.read_bytes),
                bytes(c.write_bytes)
            );
        }
        out
    }
}
