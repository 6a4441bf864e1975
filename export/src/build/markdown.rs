//! The build's report as Markdown for a CI job summary
//! (`$GITHUB_STEP_SUMMARY`): its facts as a list, the longest and the
//! heaviest actions as tables (the rest summed up under each), the failed
//! ones, and how the critical path and the remainder are found. No chart:
//! GitHub strips inline SVG; the HTML report draws the build.
//!
//! Text from the record is escaped as every Markdown export escapes it
//! ([`crate::escape`]): `|` cannot end a cell, `<script>` stays text.

use std::fmt::Write as _;

use stepmon_report::build::Build;

use super::{CRITICAL_PATH_METHOD, HEADER, REMAINDER_METHOD, cells, facts, rest};
use crate::escape::{markdown_inline as md, markdown_line as md_line};

/// The report of `build`, the `top` actions of each ranking in full.
#[must_use]
pub fn render(build: &Build, top: usize) -> String {
    let mut out = String::from("## stepmon build\n\n");
    for (label, line) in facts(build) {
        let _ = writeln!(out, "- **{}**: {}", md(label), md_line(&line));
    }
    let rankings = [("Longest actions (wall)", build.by_wall()), ("Heaviest actions (memory peak)", build.by_peak())];
    for (title, order) in rankings {
        if order.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n### {title}\n");
        table(&mut out, build, order.iter().take(top).copied());
        if let Some(line) = rest(build, &order, top) {
            let _ = writeln!(out, "\n{}", md_line(&line));
        }
    }
    let failed = build.failed();
    if !failed.is_empty() {
        out.push_str("\n### Failed actions\n\n");
        table(&mut out, build, failed.into_iter());
    }
    let _ = writeln!(out, "\n{}\n{}", md_line(CRITICAL_PATH_METHOD), md_line(REMAINDER_METHOD));
    out
}

fn table(out: &mut String, build: &Build, actions: impl Iterator<Item = usize>) {
    let _ = writeln!(out, "| {} |", HEADER.iter().map(|h| md(h)).collect::<Vec<_>>().join(" | "));
    // Numbers right-aligned, the name left.
    let _ = writeln!(out, "|--:|:--|--:|--:|--:|--:|--:|--:|");
    for i in actions {
        let row: Vec<String> = cells(build, i).iter().map(|c| md(c)).collect();
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
}
