//! The job as one self-contained HTML page: the job's totals, its timeline
//! on top, the step table, the job's verdicts and notes, then the steps'
//! sections with their charts as the single-step page draws them
//! ([`crate::html`]: the same stylesheet and Content-Security-Policy,
//! nothing loaded from elsewhere).
//!
//! A job of at most [`EVERY_STEP_UP_TO`] steps shows every step in detail
//! and its timeline a row per step (`super::timeline_svg`). A larger one —
//! a build's 10,000 actions — stays a few megabytes, as the build report
//! does (`crate::build::html`): its timeline puts the steps on lanes
//! (`super::timeline_lanes`), the table keeps a compact row for every step,
//! and only the steps that matter ([`stepmon_report::job::notable`]: the
//! longest, the heaviest by CPU and by memory, those that failed or were
//! interrupted, the one the job's verdict names, those with an event) get
//! a section, under `section.notable`, each saying why it matters
//! (`p.why`).
//!
//! Parts a test or a script can find: `p.job-summary`,
//! `section.summary` (a BuildKit build's: `h2`, `ul > li`, `table` with a
//! `caption`; `super::section`), `figure.timeline > svg.stepmon-timeline`,
//! `table.job-steps` (`thead`, and
//! in `tbody` one `tr.job-step` per step with `data-status` and one `td` per
//! column; the first cell a link to the step's section when it has one; a
//! large job's in parts of [`ROWS_PER_TABLE`] rows, each a table with its
//! head in a `div.job-rows`),
//! `ul.job-verdicts > li`, `ul.job-notes > li`, then `section.step` (with
//! `id="step-N"`, N the step's place in the table) per step shown in
//! detail, in the table's order. An interrupted step's section says so in
//! its status line (and a cached step's that it did not run).

use std::fmt::Write as _;

use crate::chart::facts;
use crate::escape::xml;
use crate::html::{head, section};
use stepmon_report::job::Entry;
use stepmon_report::job::notable::{MOST_OF_A_KIND, TOP, notable};
use stepmon_report::job::table::{HEADER, Job, Row, cells, extremes, headline, job, remarks, status_sentence};

use super::section::{self as summary, Section};

/// The stylesheet of the job's parts.
const STYLE: &str = "\
table.job-steps { border-collapse: collapse; margin: 1em 0; font-size: .9em; }
table.job-steps th, table.job-steps td { padding: .2em .5em; border-bottom: 1px solid var(--line); text-align: right; }
table.job-steps td.name, table.job-steps td.verdict { text-align: left; }
tr.job-step[data-status=interrupted] td, tr.job-step[data-status=cached] td { font-style: italic; }
figure.timeline { margin: 1em 0; overflow-x: auto; }
svg.stepmon-timeline { max-width: 100%; height: auto; }
p.method, p.why { color: var(--muted); font-size: .9em; }
";

/// A large job's parts of the table: laid out when in view, each of the
/// same column widths (a fixed layout takes them from the head), on a
/// page as wide as the build report's.
const LARGE_STYLE: &str = "\
body { max-width: 1100px; }
div.job-rows { content-visibility: auto; contain-intrinsic-size: auto 5000px; }
div.job-rows table.job-steps { table-layout: fixed; width: 100%; margin: 0; }
div.job-rows th:nth-child(1), div.job-rows th:nth-child(6), div.job-rows th:nth-child(11) { width: 4%; }
div.job-rows th:nth-child(2) { width: 18%; }
div.job-rows th:nth-child(8), div.job-rows th:nth-child(9) { width: 11%; }
div.job-rows th:nth-child(10) { width: 8%; }
div.job-rows td.name { overflow-wrap: anywhere; }
";

/// How many rows each part of a large job's table holds.
pub const ROWS_PER_TABLE: usize = 200;

/// A job of at most this many steps shows each in detail; a larger one
/// only the steps that matter.
pub const EVERY_STEP_UP_TO: usize = 50;

/// The job of `entries` as one HTML page, with `notes` (lost lines and the like).
#[must_use]
pub fn render(entries: &[Entry], notes: &[String]) -> String {
    render_with(entries, notes, &[])
}

/// Which steps of `job` (of `entries`) a view shows in detail, and why
/// each matters: every step of a job of at most [`EVERY_STEP_UP_TO`] steps
/// (`true`, and nothing to say), else the notable ones
/// ([`stepmon_report::job::notable`]); `None` for a step not in detail.
pub(crate) fn in_detail(job: &Job, entries: &[Entry]) -> (bool, Vec<Option<String>>) {
    let every_step = job.steps.len() <= EVERY_STEP_UP_TO;
    let mut why: Vec<Option<String>> = vec![None; job.steps.len()];
    if every_step {
        why.fill(Some(String::new()));
    } else {
        for n in notable(job, entries, TOP) {
            why[n.row] = Some(n.why.iter().map(|w| w.words()).collect::<Vec<_>>().join(", "));
        }
    }
    (every_step, why)
}

/// As [`render`], with `sections` (a BuildKit build's summary) under the
/// job's summary line.
#[must_use]
pub fn render_with(entries: &[Entry], notes: &[String], sections: &[Section]) -> String {
    let job = job(entries, notes);
    let spans = super::timeline::spans(&job, |_, _| true);
    let (every_step, why) = in_detail(&job, entries);
    let in_detail: Vec<bool> = why.iter().map(Option::is_some).collect();
    let mut style = STYLE.to_owned();
    if !every_step {
        style.push_str(LARGE_STYLE);
    }
    if !sections.is_empty() {
        style.push_str(summary::STYLE);
    }
    let mut out = head(&format!("stepmon: a job of {} steps", job.steps.len()), &style);
    let _ = writeln!(out, "<h1>stepmon job</h1>\n<p class=\"job-summary\">{}</p>", xml(&headline(&job)));
    summary::html(&mut out, sections);
    let timeline = if every_step {
        super::timeline_svg::svg(&job, entries, &spans).0
    } else {
        super::timeline_lanes::svg(&job, entries, &spans, &in_detail).0
    };
    let _ = writeln!(out, "<figure class=\"timeline\">\n{timeline}\n</figure>");
    // A large job's table in parts a browser lays out only when they come
    // into view (`content-visibility: auto`, which a table's row groups do
    // not take): one table of 10,000 rows took Chromium seconds to lay out.
    let per_table = if every_step { job.steps.len().max(1) } else { ROWS_PER_TABLE };
    // An empty job still has the table's head.
    let parts: Vec<&[Row]> = if job.steps.is_empty() { vec![&[]] } else { job.steps.chunks(per_table).collect() };
    for (part, rows) in parts.into_iter().enumerate() {
        let first = part * per_table;
        if !every_step {
            out.push_str("<div class=\"job-rows\">\n");
        }
        out.push_str("<table class=\"job-steps\">\n<thead><tr>");
        for h in HEADER {
            let _ = write!(out, "<th scope=\"col\">{}</th>", xml(h));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for (i, r) in rows.iter().enumerate().map(|(i, r)| (first + i, r)) {
            row(&mut out, i, r, in_detail[i]);
        }
        out.push_str("</tbody>\n</table>\n");
        if !every_step {
            out.push_str("</div>\n");
        }
    }
    if let Some(line) = extremes(&job) {
        let _ = writeln!(out, "<p class=\"extremes\">{}</p>", xml(&line));
    }
    let lists = [("job-verdicts", "The job's machine", job.verdicts.clone()), ("job-notes", "Notes", remarks(&job))];
    for (class, title, items) in lists {
        if items.is_empty() {
            continue;
        }
        let _ = writeln!(out, "<h2>{title}</h2>\n<ul class=\"{class}\">");
        for item in items {
            let _ = writeln!(out, "<li>{}</li>", xml(&item));
        }
        out.push_str("</ul>\n");
    }
    if !every_step {
        let shown = in_detail.iter().filter(|d| **d).count();
        let _ = writeln!(
            out,
            "<section class=\"notable\">\n<h2>The steps that matter ({shown} of {})</h2>\n<p class=\"method\">In detail: \
             the {TOP} longest, the {TOP} with the most CPU, the {TOP} with the highest memory peak, the step the \
             job's verdict names, and the first {MOST_OF_A_KIND} that failed, that were interrupted and that have \
             an event; every step has its row in the table above.</p>",
            job.steps.len()
        );
    }
    for (i, r) in job.steps.iter().enumerate() {
        let Some(why) = &why[i] else { continue };
        let step = &entries[r.entry].step;
        let status = status_sentence(r).unwrap_or_else(|| facts::status(step));
        section(&mut out, step, &status, Some(i + 1), why);
    }
    if !every_step {
        out.push_str("</section>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// Row `i` of the table, its first cell a link to its section when it has one.
fn row(out: &mut String, i: usize, r: &Row, linked: bool) {
    let _ = write!(out, "<tr class=\"job-step\" data-status=\"{}\">", r.status);
    for (c, cell) in cells(i, r).iter().enumerate() {
        match c {
            0 if linked => {
                let _ = write!(out, "<td><a href=\"#step-{}\">{}</a></td>", i + 1, xml(cell));
            }
            1 => {
                let _ = write!(out, "<td class=\"name\">{}</td>", xml(cell));
            }
            9 => {
                let _ = write!(out, "<td class=\"verdict\">{}</td>", xml(cell));
            }
            _ => {
                let _ = write!(out, "<td>{}</td>", xml(cell));
            }
        }
    }
    out.push_str("</tr>\n");
}
