//! The job as one self-contained HTML page: the job's totals, its timeline
//! (`super::timeline_svg`) on top, the step table, the job's verdicts and
//! notes, then each step's section with its charts as the single-step page
//! draws them ([`crate::html`]: the same stylesheet and
//! Content-Security-Policy, nothing loaded from elsewhere).
//!
//! Parts a test or a script can find: `p.job-summary`,
//! `section.summary` (a BuildKit build's: `h2`, `ul > li`, `table` with a
//! `caption`; `super::section`), `figure.timeline > svg.stepmon-timeline`,
//! `table.job-steps` (`thead`, and
//! in `tbody` one `tr.job-step` per step with `data-status` and one `td` per
//! column), `ul.job-verdicts > li`, `ul.job-notes > li`, then `section.step`
//! per step in the table's order. An interrupted step's section says so in
//! its status line (and a cached step's that it did not run).

use std::fmt::Write as _;

use crate::chart::facts;
use crate::escape::xml;
use crate::html::{head, section};
use stepmon_report::job::Entry;
use stepmon_report::job::table::{HEADER, cells, extremes, headline, job, remarks, status_sentence};

use super::section::{self as summary, Section};

/// The stylesheet of the job's parts.
const STYLE: &str = "\
table.job-steps { border-collapse: collapse; margin: 1em 0; font-size: .9em; }
table.job-steps th, table.job-steps td { padding: .2em .5em; border-bottom: 1px solid var(--line); text-align: right; }
table.job-steps td.name, table.job-steps td.verdict { text-align: left; }
tr.job-step[data-status=interrupted] td, tr.job-step[data-status=cached] td { font-style: italic; }
figure.timeline { margin: 1em 0; overflow-x: auto; }
svg.stepmon-timeline { max-width: 100%; height: auto; }
";

/// The job of `entries` as one HTML page, with `notes` (lost lines and the like).
#[must_use]
pub fn render(entries: &[Entry], notes: &[String]) -> String {
    render_with(entries, notes, &[])
}

/// As [`render`], with `sections` (a BuildKit build's summary) under the
/// job's summary line.
#[must_use]
pub fn render_with(entries: &[Entry], notes: &[String], sections: &[Section]) -> String {
    let job = job(entries, notes);
    let spans = super::timeline::spans(&job, |_, _| true);
    let style = if sections.is_empty() { STYLE.to_owned() } else { format!("{STYLE}{}", summary::STYLE) };
    let mut out = head(&format!("stepmon: a job of {} steps", job.steps.len()), &style);
    let _ = writeln!(out, "<h1>stepmon job</h1>\n<p class=\"job-summary\">{}</p>", xml(&headline(&job)));
    summary::html(&mut out, sections);
    let _ =
        writeln!(out, "<figure class=\"timeline\">\n{}\n</figure>", super::timeline_svg::svg(&job, entries, &spans).0);
    out.push_str("<table class=\"job-steps\">\n<thead><tr>");
    for h in HEADER {
        let _ = write!(out, "<th scope=\"col\">{}</th>", xml(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (i, r) in job.steps.iter().enumerate() {
        let _ = write!(out, "<tr class=\"job-step\" data-status=\"{}\">", r.status);
        for (c, cell) in cells(i, r).iter().enumerate() {
            let class = match c {
                1 => " class=\"name\"",
                9 => " class=\"verdict\"",
                _ => "",
            };
            let _ = write!(out, "<td{class}>{}</td>", xml(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
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
    for r in &job.steps {
        let step = &entries[r.entry].step;
        let status = status_sentence(r).unwrap_or_else(|| facts::status(step));
        section(&mut out, step, &status);
    }
    out.push_str("</body>\n</html>\n");
    out
}
