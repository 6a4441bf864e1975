//! The job as one SVG document: its timeline (`super::timeline_svg`) on
//! top, then each step's chart ([`crate::svg::chart`]) in the
//! table's order, stacked as nested `<svg>` elements. The chart of an
//! interrupted step says so at its top right (`text.status.interrupted`),
//! a cached step's that it did not run.

use std::fmt::Write as _;

use crate::escape::xml;
use crate::svg::{WIDTH, chart_with_height};
use stepmon_report::job::Entry;
use stepmon_report::job::table::job;
use stepmon_report::units::seconds;

/// The job of `entries` as one SVG document.
#[must_use]
pub fn render(entries: &[Entry]) -> String {
    let job = job(entries, &[]);
    let spans = super::timeline::spans(&job, |_, _| true);
    let (timeline, mut offset) = super::timeline_svg::svg(&job, entries, &spans);
    let mut body = timeline.replacen("<svg ", "<svg y=\"0\" ", 1);
    body.push('\n');
    for r in &job.steps {
        let (chart, height) = chart_with_height(&entries[r.entry].step);
        let label = match r.status {
            "interrupted" => Some(format!(
                "interrupted: the record ends at {}",
                r.record_ends.map_or_else(|| "—".to_owned(), |t| t.to_string())
            )),
            "cached" => Some("cached: it did not run".to_owned()),
            _ => None,
        };
        let chart = match label {
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
            None => chart,
        };
        body.push_str(&chart.replacen("<svg ", &format!("<svg y=\"{offset}\" "), 1));
        body.push('\n');
        offset += height;
    }
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"stepmon-charts stepmon-job\" width=\"{WIDTH}\" \
         height=\"{offset}\" viewBox=\"0 0 {WIDTH} {offset}\">\n<title>stepmon: a job of {} steps, wall {}</title>\n{body}</svg>\n",
        job.steps.len(),
        xml(&job.wall_seconds.map_or_else(|| "—".to_owned(), seconds))
    );
    out
}
