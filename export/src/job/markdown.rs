//! The job as one Markdown document for `$GITHUB_STEP_SUMMARY`: the job's
//! totals, a table with a row per step (by start), the longest and
//! heaviest steps, the job's verdicts, the `-j` advice of its steps, the
//! job's cores and memory over time as two Mermaid charts, and
//! what each interrupted or cached step is, the gaps and the lost lines.
//!
//! GitHub refuses a step summary over 1 MiB ("Step isolation and limits",
//! <https://docs.github.com/en/actions/writing-workflows/choosing-what-your-workflow-does/workflow-commands-for-github-actions#step-isolation-and-limits>),
//! so nothing here grows without bound with the job: the table keeps at
//! most [`MAX_TABLE_ROWS`] rows (the steps that matter, [`kept_rows`]) and
//! says how many it left out, the notes and the advice are capped the same
//! way, and the charts are one pair for the job (per-step charts are left
//! to the HTML view).
//!
//! Text from the steps is escaped as the single-step Markdown export does
//! ([`crate::markdown`]): `|` cannot end a cell, `<script>` stays text.

mod chart;

use std::fmt::Write as _;

use super::section::{self, Section};
use crate::escape::{markdown_inline as md, markdown_line as md_line};
use stepmon_model::advice::{NoAdvice, ParallelismAdvice};
use stepmon_report::job::Entry;
use stepmon_report::job::notable::{failed, ranked};
use stepmon_report::job::table::{HEADER, Job, Row, cells, extremes, headline, job, remarks};

/// The most rows the table keeps: with the longest names a row is under
/// 1 KB, so the table stays a small part of the 1 MiB.
pub const MAX_TABLE_ROWS: usize = 100;
/// The most lines under **Notes** (a job of many short steps can have a
/// gap between each two).
pub const MAX_NOTES: usize = 50;
/// The most steps whose `-j` advice is listed (those with the most CPU time).
pub const MAX_ADVICE: usize = 20;
/// The most step names shown for one reason why steps have no advice.
const NAMES_PER_REASON: usize = 5;

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
    let kept = kept_rows(&job);
    for &i in &kept {
        let row: Vec<String> = cells(i, &job.steps[i]).iter().map(|c| md(c)).collect();
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    if kept.len() < job.steps.len() {
        let _ = writeln!(
            out,
            "\n*{} of the job's {} steps shown (their numbers are their places by start): the failed, \
             interrupted, longest, heaviest and most memory-hungry; {} left out. \
             `stepmon report --format html` of the job record shows every step.*",
            kept.len(),
            job.steps.len(),
            job.steps.len() - kept.len()
        );
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
    advice(&mut out, entries, &job);
    out.push_str(&chart::render(entries));
    let remarks = remarks(&job);
    if !remarks.is_empty() {
        out.push_str("\n**Notes**\n\n");
        for line in remarks.iter().take(MAX_NOTES) {
            let _ = writeln!(out, "- {}", md_line(line));
        }
        if remarks.len() > MAX_NOTES {
            let _ = writeln!(
                out,
                "- and {} more notes (`stepmon report` of the job record lists them all)",
                remarks.len() - MAX_NOTES
            );
        }
    }
    out
}

/// The rows the table keeps, as indices into [`Job::steps`] by start: every
/// row when there are at most [`MAX_TABLE_ROWS`], else that many: the
/// longest and the heaviest step ([`Job::longest`], [`Job::heaviest`]), then
/// steps taken in turn from five rankings — the interrupted steps, the failed ones (a
/// non-zero exit, or not run), then by wall time, by CPU time and by
/// memory peak, each from the top — so that each kind of step that matters
/// has its place however many of another kind there are.
#[must_use]
pub fn kept_rows(job: &Job) -> Vec<usize> {
    let all = job.steps.len();
    if all <= MAX_TABLE_ROWS {
        return (0..all).collect();
    }
    // The rankings of the steps that matter (stepmon_report::job::notable,
    // as the HTML page's sections), each only of the steps that have the
    // number.
    let by = |key: fn(&Row) -> Option<f64>| -> Vec<usize> {
        ranked(&job.steps, key).into_iter().filter(|&i| key(&job.steps[i]).is_some_and(f64::is_finite)).collect()
    };
    #[allow(clippy::cast_precision_loss)]
    let rankings: [Vec<usize>; 5] = [
        (0..all).filter(|&i| job.steps[i].status == "interrupted").collect(),
        (0..all).filter(|&i| failed(&job.steps[i])).collect(),
        by(|r| r.wall_seconds),
        by(|r| r.cpu_seconds),
        by(|r| r.memory_peak_bytes.filter(|_| !r.memory_not_own).map(|b| b as f64)),
    ];
    // The steps the line under the table names come first.
    let mut kept: std::collections::BTreeSet<usize> = job.longest.into_iter().chain(job.heaviest).collect();
    let longest = rankings.iter().map(Vec::len).max().unwrap_or(0);
    'turns: for turn in 0..longest {
        for ranking in &rankings {
            if let Some(&i) = ranking.get(turn) {
                kept.insert(i);
                if kept.len() == MAX_TABLE_ROWS {
                    break 'turns;
                }
            }
        }
    }
    kept.into_iter().collect()
}

/// The `-j` advice: each step that ran parallel workers (the most CPU time
/// first, at most [`MAX_ADVICE`]), then why the others have none, a line
/// per reason.
fn advice(out: &mut String, entries: &[Entry], job: &Job) {
    let mut advised = Vec::new();
    let mut why_not: Vec<(String, Vec<String>)> = Vec::new();
    for r in &job.steps {
        let Some(entry) = entries.get(r.entry) else { continue };
        if r.status == "cached" {
            continue;
        }
        let Some(p) = entry.step.advice().parallelism else { continue };
        if p.suggested_jobs.is_some() {
            advised.push((r.cpu_seconds.unwrap_or(0.0), r.shown_name(), p.reason));
            continue;
        }
        let mut reason = p.reason;
        if p.no_advice == Some(NoAdvice::NoProcessRecords) {
            // A job record keeps a step in brief: its workers only when a
            // command ran often enough to advise on (StepBrief::workers).
            reason.push_str(&format!(
                " (a job record keeps a step's only when a command ran {} times or more; \
                 `stepmon run --output FILE` keeps them all)",
                ParallelismAdvice::MIN_INSTANCES
            ));
        }
        match why_not.iter_mut().find(|(w, _)| *w == reason) {
            Some((_, names)) => names.push(r.shown_name()),
            None => why_not.push((reason, vec![r.shown_name()])),
        }
    }
    out.push_str("\n**Parallelism (`-j`)**\n\n");
    advised.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (_, name, reason) in advised.iter().take(MAX_ADVICE) {
        let _ = writeln!(out, "- {}", md_line(&format!("{name}: {reason}")));
    }
    if advised.len() > MAX_ADVICE {
        let _ = writeln!(out, "- and {} more steps with advice", advised.len() - MAX_ADVICE);
    }
    for (reason, names) in &why_not {
        let shown: Vec<&str> = names.iter().take(NAMES_PER_REASON).map(String::as_str).collect();
        let more = names.len().saturating_sub(NAMES_PER_REASON);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        let _ = writeln!(out, "- {}", md_line(&format!("{}{more}: {reason}", shown.join(", "))));
    }
}
