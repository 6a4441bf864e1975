//! The build's report as text for a terminal: its facts, one a line, then
//! the longest and the heaviest actions in aligned columns, and the
//! actions that failed.

use std::fmt::Write as _;

use stepmon_report::build::Build;

use super::{CRITICAL_PATH_METHOD, HEADER, REMAINDER_METHOD, cells, facts, rest};

/// The report of `build`, the `top` actions of each ranking in full.
#[must_use]
pub fn render(build: &Build, top: usize) -> String {
    let mut out = String::new();
    for (label, line) in facts(build) {
        let _ = writeln!(out, "{label}: {line}");
    }
    let failed = build.failed();
    let rankings = [("longest actions (wall)", build.by_wall()), ("heaviest actions (memory peak)", build.by_peak())];
    for (title, order) in rankings {
        if order.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{title}:");
        table(&mut out, build, order.iter().take(top).copied());
        if let Some(line) = rest(build, &order, top) {
            let _ = writeln!(out, "  {line}");
        }
    }
    if !failed.is_empty() {
        out.push_str("\nfailed actions:\n");
        table(&mut out, build, failed.into_iter());
    }
    let _ = writeln!(out, "\n{CRITICAL_PATH_METHOD}\n{REMAINDER_METHOD}");
    out
}

/// The rows of `actions` under [`HEADER`], each column as wide as its
/// widest cell (the name left-aligned, numbers right).
fn table(out: &mut String, build: &Build, actions: impl Iterator<Item = usize>) {
    let rows: Vec<[String; 8]> =
        std::iter::once(HEADER.map(str::to_owned)).chain(actions.map(|i| cells(build, i))).collect();
    let mut widths = [0usize; 8];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in &rows {
        let mut line = String::from(" ");
        for (c, (cell, w)) in row.iter().zip(widths).enumerate() {
            let pad = " ".repeat(w - cell.chars().count());
            if c == 1 {
                let _ = write!(line, " {cell}{pad}");
            } else {
                let _ = write!(line, " {pad}{cell}");
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}
