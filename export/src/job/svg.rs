//! The job as one SVG document: its timeline on top, then each step's chart
//! ([`crate::svg::chart`]) in the table's order, stacked as nested `<svg>`
//! elements. The chart of an interrupted step says so at its top right
//! (`text.status.interrupted`), a cached step's that it did not run.
//!
//! A job of more than [`super::html::EVERY_STEP_UP_TO`] steps is drawn as its HTML page
//! draws it ([`super::html`]): the timeline on lanes
//! (`super::timeline_lanes`), where plain steps that ran one after another
//! share a bar, and a chart only for each step that matters
//! ([`stepmon_report::job::notable`]), which says why at its top right and
//! is the target of its bar's link (`#step-N`). A chart per step of a
//! build's 10,000 actions would be a document of hundreds of megabytes.

use std::fmt::Write as _;

use crate::escape::xml;
use crate::svg::{WIDTH, chart_with_height};
use stepmon_report::job::Entry;
use stepmon_report::job::table::job;
use stepmon_report::units::seconds;

/// The height of the line above a chart that says why its step matters.
const WHY_LINE: f64 = 20.0;

/// The job of `entries` as one SVG document.
#[must_use]
pub fn render(entries: &[Entry]) -> String {
    let job = job(entries, &[]);
    let spans = super::timeline::spans(&job, |_, _| true);
    let (every_step, why) = super::html::in_detail(&job, entries);
    let (timeline, mut offset) = if every_step {
        super::timeline_svg::svg(&job, entries, &spans)
    } else {
        let in_detail: Vec<bool> = why.iter().map(Option::is_some).collect();
        super::timeline_lanes::svg(&job, entries, &spans, &in_detail)
    };
    let mut body = timeline.replacen("<svg ", "<svg y=\"0\" ", 1);
    body.push('\n');
    let mut charts = 0;
    for (place, r) in job.steps.iter().enumerate() {
        let Some(why) = &why[place] else { continue };
        charts += 1;
        let (chart, height) = chart_with_height(&entries[r.entry].step);
        let status = match r.status {
            "interrupted" => Some(format!(
                "interrupted: the record ends at {}",
                r.record_ends.map_or_else(|| "—".to_owned(), |t| t.to_string())
            )),
            "cached" => Some("cached: it did not run".to_owned()),
            _ => None,
        };
        let chart = match status {
            None => chart,
            Some(label) => {
                let mark = format!(
                    "<text class=\"status {}\" x=\"{:.1}\" y=\"22\" text-anchor=\"end\" font-size=\"12\" \
                 fill=\"#d97706\">{}</text></svg>",
                    r.status,
                    WIDTH - 28.0,
                    xml(&label)
                );
                chart.strip_suffix("</svg>").map_or(chart.clone(), |c| c.to_owned() + &mark)
            }
        };
        // A step drawn because it matters: a line above its chart saying why.
        let id = if why.is_empty() {
            String::new()
        } else {
            let _ = writeln!(
                body,
                "<text class=\"why\" x=\"20\" y=\"{:.1}\" font-size=\"12\" fill=\"#d97706\">#{} why: {}</text>",
                offset + WHY_LINE - 6.0,
                place + 1,
                xml(why)
            );
            offset += WHY_LINE;
            format!("id=\"step-{}\" ", place + 1)
        };
        body.push_str(&chart.replacen("<svg ", &format!("<svg {id}y=\"{offset}\" "), 1));
        body.push('\n');
        offset += height;
    }
    let drawn = if every_step { String::new() } else { format!(", charts of the {charts} that matter") };
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"stepmon-charts stepmon-job\" width=\"{WIDTH}\" \
         height=\"{offset}\" viewBox=\"0 0 {WIDTH} {offset}\">\n<title>stepmon: a job of {} steps{drawn}, wall {}</title>\n{body}</svg>\n",
        job.steps.len(),
        xml(&job.wall_seconds.map_or_else(|| "—".to_owned(), seconds))
    );
    out
}
