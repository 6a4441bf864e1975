//! A job's steps as one table: a row per step, the job's totals, the
//! longest and heaviest steps, the steps' events (their memory near what
//! bounds it), the interrupted steps and the lost lines — as text and as
//! JSON.

use std::fmt::Write as _;

use super::Entry;
use super::table::{HEADER, cells, extremes, headline, job, remarks};
use crate::units::seconds;

/// The job of `entries` as JSON: a row per step (by start), the totals,
/// the longest and heaviest steps and `notes` (lost lines and the like).
#[must_use]
pub fn to_json(entries: &[Entry], notes: &[String]) -> String {
    serde_json::to_string_pretty(&job(entries, notes)).unwrap_or_default() + "\n"
}

/// The job of `entries` as a text table, a row per step by start; then the
/// job's totals, its longest and heaviest steps, each step's events at
/// their time (into the step, and into the job), what each interrupted
/// step had, and `notes` (lost lines and the like).
#[must_use]
pub fn render(entries: &[Entry], notes: &[String]) -> String {
    let job = job(entries, notes);
    let mut out = String::new();
    let _ = writeln!(out, "{}", headline(&job));
    let mut table: Vec<Vec<String>> = vec![HEADER.iter().map(|h| (*h).to_owned()).collect()];
    table.extend(job.steps.iter().enumerate().map(|(i, r)| cells(i, r)));
    let widths: Vec<usize> =
        (0..table[0].len()).map(|c| table.iter().map(|row| row[c].chars().count()).max().unwrap_or(0)).collect();
    for row in &table {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
        let _ = writeln!(out, "  {}", cells.join("  ").trim_end());
    }
    if let Some(line) = extremes(&job) {
        let _ = writeln!(out, "{line}");
    }
    for r in &job.steps {
        for placed in crate::event::of_step(&entries[r.entry].step) {
            let in_job = r
                .start_offset_seconds
                .zip(placed.offset_seconds)
                .map(|(s, e)| format!(" (+{} in the job)", seconds(s + e)));
            let _ = writeln!(out, "event: {}: {}{}", r.shown_name(), placed.words, in_job.unwrap_or_default());
        }
    }
    for sentence in &job.verdicts {
        let _ = writeln!(out, "machine: {sentence}");
    }
    for line in remarks(&job) {
        let _ = writeln!(out, "{line}");
    }
    out
}
