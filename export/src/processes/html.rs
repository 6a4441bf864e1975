//! The HTML table of the top commands, the Markdown one's twin.

use std::fmt::Write as _;

use stepmon_model::processes::Processes;

use super::table::HEADERS;
use crate::escape::xml;

/// The table with its heading, or nothing when there are no processes.
/// `step_cpu_seconds` as for
/// `stepmon_report::processes::ProcessesText::summary_lines`.
pub(crate) fn html_table(p: &Processes, step_cpu_seconds: Option<f64>) -> String {
    let Some(table) = super::table::table(p, step_cpu_seconds) else { return String::new() };
    let mut out = format!(
        "<h3>Top commands</h3>\n<table class=\"processes\">\n<caption>{}</caption>\n<thead>\n<tr>",
        xml(&table.caption)
    );
    for h in HEADERS {
        let _ = write!(out, "<th scope=\"col\">{}</th>", xml(h));
    }
    out.push_str("</tr>\n</thead>\n<tbody>\n");
    for [command, rest @ ..] in &table.rows {
        let _ = write!(out, "<tr><th scope=\"row\">{}</th>", xml(command));
        for cell in rest {
            let _ = write!(out, "<td>{}</td>", xml(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    out
}
