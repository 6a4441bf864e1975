//! The job as one Markdown document for `$GITHUB_STEP_SUMMARY`: the job's
//! totals, a table with a row per step (by start), the longest and
//! heaviest steps, the job's verdicts, and what each interrupted or cached
//! step is, the gaps and the lost lines. GitHub caps a step summary at
//! 1 MiB, so the per-step charts are left to the HTML view.
//!
//! Text from the steps is escaped as the single-step Markdown export does
//! ([`crate::markdown`]): `|` cannot end a cell, `<script>` stays text.

use std::fmt::Write as _;

use super::section::{self, Section};
use crate::escape::{markdown_inline as md, markdown_line as md_line};
use stepmon_report::job::Entry;
use stepmon_report::job::table::{HEADER, cells, extremes, headline, job, remarks};

/// The job of `entries` as Markdown, with `notes` (lost lines and the like).
#[must_use]
pub fn render(entries: &[Entry], notes: &[String]) -> String {
    render_with(entries, notes, &[])
}

/// As [`render`], with `sections` (a BuildKit build's summary) under the
/// job's headline.
#[must_use]
pub fn render_with(entries: &[Entry], notes: &[String], sections: &[Section]) -> String {
    let job = job(entries, notes);
    let mut out = String::from("## stepmon job\n\n");
    let _ = writeln!(out, "{}\n", md_line(&headline(&job)));
    section::markdown(&mut out, sections);
    let _ = writeln!(out, "| {} |", HEADER.iter().map(|h| md(h)).collect::<Vec<_>>().join(" | "));
    // Numbers right-aligned, words left.
    let align = ["--:", ":--", "--:", "--:", "--:", "--:", "--:", "--:", "--:", ":--", "--:"];
    let _ = writeln!(out, "|{}|", align.join("|"));
    for (i, r) in job.steps.iter().enumerate() {
        let row: Vec<String> = cells(i, r).iter().map(|c| md(c)).collect();
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    if let Some(line) = extremes(&job) {
        let _ = writeln!(out, "\n{}", md_line(&line));
    }
    if !job.verdicts.is_empty() {
        out.push_str("\n**The job's machine**\n\n");
        for sentence in &job.verdicts {
            let _ = writeln!(out, "- {}", md_line(sentence));
        }
    }
    let remarks = remarks(&job);
    if !remarks.is_empty() {
        out.push_str("\n**Notes**\n\n");
        for line in remarks {
            let _ = writeln!(out, "- {}", md_line(&line));
        }
    }
    out
}
