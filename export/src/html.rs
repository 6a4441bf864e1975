//! A self-contained HTML page: per step a heading, how it ended, the table
//! of key numbers (the same rows as the Markdown), the verdicts as a list and
//! the inline SVG chart ([`super::svg::chart`]).
//!
//! Nothing is loaded from elsewhere — no stylesheet, script, font or image
//! URL — so the file can be archived as a CI artifact and opened offline.
//! Its Content-Security-Policy says so to the browser too (`default-src
//! 'none'`, only the inline stylesheet allowed): should any text ever slip
//! through unescaped, it still could not run a script or load anything.
//! The small embedded stylesheet follows `prefers-color-scheme`; the charts
//! draw text and axes in `currentColor` and so follow it too. Every text
//! from the step is escaped.
//!
//! Parts a test or a script can find: `section.step` per step,
//! `table.summary` (`th` label, `td` value), `ul.verdicts > li`,
//! `ul.events > li` (each event of the step at its time: its memory near
//! what bounds it; the chart marks it too, `line.event`),
//! `ul.not-measured > li`, `figure.chart > svg.stepmon-chart`.

use std::fmt::Write as _;

use super::chart::facts;
use crate::escape::xml;
use stepmon_report::step::Step;

/// Nothing but the page's own inline stylesheet may load or run.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'";

/// The page's stylesheet: readable defaults, light and dark.
const STYLE: &str = "\
:root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #59636e; --line: #d1d9e0; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d; } }
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; color: var(--fg); background: var(--bg);
  max-width: 780px; margin: 2em auto; padding: 0 1em; line-height: 1.45; }
h2 { font-size: 1.2em; overflow-wrap: anywhere; border-bottom: 1px solid var(--line); padding-bottom: .3em; }
p.status { color: var(--muted); margin-top: 0; }
table.summary { border-collapse: collapse; margin: 1em 0; }
table.summary th, table.summary td { text-align: left; padding: .25em .8em; border-bottom: 1px solid var(--line); }
table.summary th { font-weight: 600; white-space: nowrap; }
td.not-measured { color: var(--muted); font-style: italic; }
figure.chart { margin: 1em 0; overflow-x: auto; }
svg.stepmon-chart { max-width: 100%; height: auto; }
";

/// Renders `steps` as one HTML page.
///
/// ```
/// use stepmon_model::document::RunDocument;
/// use stepmon_report::Step;
///
/// let json = r#"{"resourceUsage": {"samples": []}, "sysUsage": [],
///   "stepmon": {"command": ["<script>alert(1)</script>"], "exitCode": 0}}"#;
/// let step = Step::from_run(&serde_json::from_str::<RunDocument>(json)?);
/// let html = stepmon_export::html::render(&[step]);
/// assert!(html.starts_with("<!DOCTYPE html>"));
/// assert!(!html.contains("<script>"));
/// assert!(html.contains("&lt;script&gt;"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[must_use]
pub fn render(steps: &[Step]) -> String {
    let title = match steps {
        [one] => format!("stepmon: {}", stepmon_report::step::elide(&one.name)),
        _ => format!("stepmon: {} steps", steps.len()),
    };
    let mut out = head(&title, "");
    out.push_str("<h1>stepmon report</h1>\n");
    for step in steps {
        section(&mut out, step, &facts::status(step), None, "");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The page up to `<body>`, titled `title`, with `style` after the page's
/// own stylesheet.
pub(crate) fn head(title: &str, style: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}{style}</style>\n</head>\n<body>\n",
        xml(title)
    )
}

/// The section of `step`, its status line saying `status`; `place`: its
/// place in a job (from 1), which gives the section its anchor
/// (`id="step-N"`, as the build report's details have) and its heading
/// its number; `why`, when not empty, why a large job shows it in detail.
pub(crate) fn section(out: &mut String, step: &Step, status: &str, place: Option<usize>, why: &str) {
    let (id, number) = place.map_or_else(Default::default, |n| (format!(" id=\"step-{n}\""), format!("#{n} ")));
    let _ = write!(
        out,
        "<section class=\"step\"{id}>\n<h2>{number}{}</h2>\n<p class=\"status\">{}</p>\n",
        xml(&stepmon_report::step::elide(&step.name)),
        xml(status)
    );
    if !why.is_empty() {
        let _ = writeln!(out, "<p class=\"why\">why: {}</p>", xml(why));
    }
    out.push_str("<table class=\"summary\">\n<tbody>\n");
    for f in facts::facts(step) {
        let class = if f.value == facts::NOT_MEASURED { " class=\"not-measured\"" } else { "" };
        let _ = writeln!(out, "<tr><th scope=\"row\">{}</th><td{class}>{}</td></tr>", xml(f.label), xml(&f.value));
    }
    out.push_str("</tbody>\n</table>\n<h3>Verdicts</h3>\n<ul class=\"verdicts\">\n");
    for sentence in step.verdicts().sentences() {
        let _ = writeln!(out, "<li>{}</li>", xml(sentence));
    }
    out.push_str("</ul>\n");
    let events = stepmon_report::event::of_step(step);
    if !events.is_empty() {
        out.push_str("<h3>Events</h3>\n<ul class=\"events\">\n");
        for placed in events {
            let _ = writeln!(out, "<li>{}</li>", xml(&placed.words));
        }
        out.push_str("</ul>\n");
    }
    if let Some(advice) = step.advice().parallelism.filter(|p| p.suggested_jobs.is_some()) {
        let _ = writeln!(out, "<h3>Advice</h3>\n<ul>\n<li>{}</li>\n</ul>", xml(&advice.reason));
    }
    let not_measured: Vec<&String> = step.run.iter().flat_map(|r| &r.not_measured).collect();
    if !not_measured.is_empty() {
        out.push_str("<h3>Not measured</h3>\n<ul class=\"not-measured\">\n");
        for item in not_measured {
            let _ = writeln!(out, "<li>{}</li>", xml(item));
        }
        out.push_str("</ul>\n");
    }
    if let Some(p) = step.run.as_ref().and_then(|r| r.processes.as_ref()) {
        out.push_str(&crate::processes::html_table(p, step.summary.cpu.usage_seconds));
    }
    let _ = write!(out, "<figure class=\"chart\">\n{}\n</figure>\n</section>\n", super::svg::chart(step));
}
