//! The build's report as one self-contained HTML page, drawn like cargo's
//! `--timings` page: one bar per action on lanes (an action takes the
//! first lane free at its start), coloured by kind, the critical path
//! outlined and failed actions marked; under it, on the same time axis,
//! the build's memory (its own readings) and the actions' peaks together.
//! Then the details of the actions that matter (the longest, the heaviest,
//! those on the critical path, those that failed) and one compact row for
//! every action, so that a build of 10,000 actions stays a few megabytes.
//!
//! Nothing is loaded from elsewhere: the page has the single-step page's
//! Content-Security-Policy ([`crate::html::CSP`]) and stylesheet, and no
//! script. Every text from the record is escaped.
//!
//! Parts a test or a script can find: `ul.build-facts > li`,
//! `svg.stepmon-build` with one `rect.action` per action (`data-row`: its
//! place in the job; `k-<kind>`, `critical`, `failed` classes) in
//! `g.lanes`, its name in a `text.bar-label` after it where it fits, and `g.memory` holding `polyline.build-memory` and
//! `polyline.actions-together`; `section.notable > details.action` per
//! notable action; `table.build-actions` with one `tr` per action.

use std::fmt::Write as _;

use stepmon_report::build::{ActionKind, Build};
use stepmon_report::series::Point;
use stepmon_report::units::{bytes, seconds};

use super::{CRITICAL_PATH_METHOD, HEADER, REMAINDER_METHOD, cells, facts, name, rest};
use crate::escape::xml;
use crate::html::head;

/// The page's own stylesheet, after the single-step page's; a colour per kind.
const STYLE: &str = "\
body { max-width: 1100px; }
ul.build-facts li { margin: .2em 0; }
figure.build-chart { margin: 1em 0; overflow-x: auto; }
svg.stepmon-build { width: 100%; height: auto; font-size: 11px; }
svg.stepmon-build text { fill: currentColor; }
svg.stepmon-build text.bar-label { fill: #ffffff; font-size: 9px; pointer-events: none; }
svg.stepmon-build line.axis, svg.stepmon-build line.grid { stroke: var(--line); }
rect.action { stroke: none; }
rect.critical { stroke: var(--fg); stroke-width: 1.2; }
rect.failed { fill: #d1242f; }
.k-lib { fill: #4c8eda; } .k-bin { fill: #8250df; } .k-proc-macro { fill: #bf8700; }
.k-build-script { fill: #57ab5a; } .k-test { fill: #e16f24; } .k-compile { fill: #1b7c83; }
.k-link { fill: #6e7781; } .k-other { fill: #a0a0a0; }
polyline.build-memory { fill: none; stroke: #cf222e; stroke-width: 1.5; }
polyline.actions-together { fill: none; stroke: #4c8eda; stroke-width: 1; stroke-dasharray: 3 2; }
circle.peak { fill: #cf222e; }
table.build-actions, details.action table { border-collapse: collapse; font-size: .85em; }
table.build-actions td, table.build-actions th, details.action td, details.action th {
  padding: .1em .5em; border-bottom: 1px solid var(--line); text-align: right; }
table.build-actions td:nth-child(2), table.build-actions th:nth-child(2) { text-align: left; }
tr.failed td { color: #d1242f; }
details.action summary { cursor: pointer; }
p.method { color: var(--muted); font-size: .9em; }
";

/// The drawing's width, its left margin (memory labels) and layout.
const WIDTH: f64 = 1000.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 10.0;
const LANE: f64 = 12.0;
const LANE_GAP: f64 = 2.0;
const MEMORY_HEIGHT: f64 = 150.0;

/// The report of `build` as a page, the `top` actions of each ranking in
/// detail.
#[must_use]
pub fn render(build: &Build, top: usize) -> String {
    let outer = &build.job.steps[build.outer];
    let mut out = head(&format!("stepmon build: {}", outer.shown_name()), STYLE);
    out.push_str("<h1>stepmon build</h1>\n<ul class=\"build-facts\">\n");
    for (label, line) in facts(build) {
        let _ = writeln!(out, "<li><strong>{}</strong>: {}</li>", xml(label), xml(&line));
    }
    out.push_str("</ul>\n");
    let _ = writeln!(out, "<figure class=\"build-chart\">\n{}</figure>", svg(build));
    let notable = build.notable(top);
    if !notable.is_empty() {
        out.push_str("<section class=\"notable\">\n<h2>The actions that matter</h2>\n");
        let _ = writeln!(
            out,
            "<p class=\"method\">The {top} longest, the {top} heaviest, the {top} longest on the critical path and those that failed.</p>"
        );
        let critical = build.on_critical_path();
        for i in notable {
            details(&mut out, build, i, critical[i]);
        }
        out.push_str("</section>\n");
    }
    let _ = writeln!(out, "<h2>Every action ({})</h2>", build.actions.len());
    out.push_str("<table class=\"build-actions\">\n<thead><tr>");
    for h in HEADER {
        let _ = write!(out, "<th>{}</th>", xml(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (i, action) in build.actions.iter().enumerate() {
        out.push_str(if action.failed { "<tr class=\"failed\">" } else { "<tr>" });
        for cell in cells(build, i) {
            let _ = write!(out, "<td>{}</td>", xml(&cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    for (title, order) in [("wall", build.by_wall()), ("memory peak", build.by_peak())] {
        if let Some(line) = rest(build, &order, top) {
            let _ =
                writeln!(out, "<p class=\"method\">By {title}: beyond the {top} shown in detail, {}.</p>", xml(&line));
        }
    }
    let _ = writeln!(
        out,
        "<p class=\"method\">{}</p>\n<p class=\"method\">{}</p>",
        xml(CRITICAL_PATH_METHOD),
        xml(REMAINDER_METHOD)
    );
    out.push_str("</body>\n</html>\n");
    out
}

/// The details of action `i`: its numbers as a table under its name.
fn details(out: &mut String, build: &Build, i: usize, critical: bool) {
    let action = &build.actions[i];
    let mut why = Vec::new();
    if critical {
        why.push("on the critical path");
    }
    if action.failed {
        why.push("FAILED");
    }
    let why = if why.is_empty() { String::new() } else { format!(" — {}", why.join(", ")) };
    let _ = write!(
        out,
        "<details class=\"action\" id=\"step-{}\"><summary>{}{}</summary>\n<table><tbody>\n",
        action.row + 1,
        xml(&name(build, i)),
        xml(&why)
    );
    for (head, cell) in HEADER.iter().zip(cells(build, i)).skip(2) {
        let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", xml(head), xml(&cell));
    }
    let r = build.row(action);
    if !r.command.is_empty() {
        let command = stepmon_report::step::quote_command(&r.command);
        let _ =
            writeln!(out, "<tr><th>command</th><td>{}</td></tr>", xml(&stepmon_report::step::elide_to(&command, 400)));
    }
    out.push_str("</tbody></table>\n</details>\n");
}

/// A lane for each action: the first lane free at its start.
fn lanes(build: &Build) -> (Vec<usize>, usize) {
    let mut ends: Vec<f64> = Vec::new();
    let mut order: Vec<usize> = (0..build.actions.len()).collect();
    order.sort_by(|a, b| build.actions[*a].start.total_cmp(&build.actions[*b].start));
    let mut lane_of = vec![0; build.actions.len()];
    for i in order {
        let a = &build.actions[i];
        lane_of[i] = crate::job::timeline::first_free(&mut ends, a.start, a.end.max(a.start));
    }
    (lane_of, ends.len())
}

/// A round step for `span` split in about `parts`: 1, 2 or 5 × 10ⁿ.
fn tick_step(span: f64, parts: f64) -> f64 {
    let raw = (span / parts).max(1e-9);
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * magnitude).find(|s| *s >= raw).unwrap_or(10.0 * magnitude)
}

/// The drawing: the time axis, the lanes, the memory under them.
#[allow(clippy::cast_precision_loss)]
fn svg(build: &Build) -> String {
    let (lane_of, lanes) = lanes(build);
    let end = build.actions.iter().map(|a| a.end).fold(build.wall_seconds.unwrap_or(0.0), f64::max).max(1e-3);
    let plot = WIDTH - LEFT - RIGHT;
    let x = |t: f64| LEFT + plot * (t / end).clamp(0.0, 1.0);
    let lanes_top = 28.0;
    let lanes_height = lanes as f64 * (LANE + LANE_GAP);
    let memory_top = lanes_top + lanes_height + 24.0;
    let height = memory_top + MEMORY_HEIGHT + 24.0;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"stepmon-build\" viewBox=\"0 0 {WIDTH} {height:.0}\" \
         role=\"img\" aria-label=\"the build's actions on lanes over time, its memory under them\">\n"
    );
    // The legend: the kinds present.
    let mut lx = LEFT;
    for kind in ActionKind::ALL.into_iter().filter(|k| build.actions.iter().any(|a| a.kind == *k)) {
        let _ = writeln!(
            out,
            "<rect class=\"k-{}\" x=\"{lx:.1}\" y=\"6\" width=\"10\" height=\"10\"/><text x=\"{:.1}\" y=\"15\">{}</text>",
            kind.name(),
            lx + 13.0,
            kind.words()
        );
        lx += 20.0 + 7.0 * kind.words().len() as f64;
    }
    let _ = writeln!(out, "<text x=\"{:.1}\" y=\"15\">outlined: the critical path</text>", lx + 10.0);
    // The time axis, its grid across lanes and memory.
    let step = tick_step(end, 10.0);
    let mut t = 0.0;
    while t <= end + 1e-9 {
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{lanes_top:.1}\" y2=\"{1:.1}\"/>\
             <text class=\"tick\" x=\"{0:.1}\" y=\"{2:.1}\" text-anchor=\"middle\">{3}</text>",
            x(t),
            memory_top + MEMORY_HEIGHT,
            memory_top + MEMORY_HEIGHT + 14.0,
            xml(&seconds(t))
        );
        t += step;
    }
    out.push_str("<g class=\"lanes\">\n");
    let critical = build.on_critical_path();
    for (i, a) in build.actions.iter().enumerate() {
        let y = lanes_top + lane_of[i] as f64 * (LANE + LANE_GAP);
        let width = (x(a.end) - x(a.start)).max(0.5);
        let mut class = format!("action k-{}", a.kind.name());
        if critical[i] {
            class.push_str(" critical");
        }
        if a.failed {
            class.push_str(" failed");
        }
        let r = build.row(a);
        let _ = writeln!(
            out,
            "<rect class=\"{class}\" data-row=\"{}\" x=\"{:.1}\" y=\"{y:.0}\" width=\"{width:.1}\" height=\"{LANE}\">\
             <title>{}: +{}, {}, {}</title></rect>",
            a.row + 1,
            x(a.start),
            xml(&name(build, i)),
            xml(&seconds(a.start)),
            xml(&r.wall_seconds.map_or_else(|| "—".to_owned(), seconds)),
            xml(&r.memory_peak_bytes.map_or_else(|| "—".to_owned(), bytes))
        );
        // Its name on the bar where it fits (about 5.5 units a character at
        // the labels' size), as cargo's timings page writes its units'.
        let label = r.shown_name();
        if label.chars().count() as f64 * 5.5 + 6.0 <= width {
            let _ = writeln!(
                out,
                "<text class=\"bar-label\" x=\"{:.1}\" y=\"{:.0}\">{}</text>",
                x(a.start) + 3.0,
                y + LANE - 3.0,
                xml(&label)
            );
        }
    }
    out.push_str("</g>\n");
    memory(&mut out, build, &x, memory_top);
    out.push_str("</svg>\n");
    out
}

/// The memory chart: the build's readings, the actions' peaks together
/// (a step curve), the peak moment marked.
#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn memory(out: &mut String, build: &Build, x: &dyn Fn(f64) -> f64, top: f64) {
    let m = &build.memory;
    let highest = m.readings.iter().chain(&m.together).map(|p| p.value).fold(0.0, f64::max).max(1.0);
    // Round steps of MiB (KiB for a small build), which `bytes` prints whole.
    let unit = if highest >= 1_048_576.0 { 1_048_576.0 } else { 1024.0 };
    let step = tick_step(highest / unit, 4.0).max(1.0) * unit;
    let y_max = (highest / step).ceil() * step;
    let y = |v: f64| top + MEMORY_HEIGHT * (1.0 - (v / y_max).clamp(0.0, 1.0));
    out.push_str("<g class=\"memory\">\n");
    let _ = writeln!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{1:.1}\" y2=\"{1:.1}\"/>\
         <text x=\"{LEFT}\" y=\"{2:.1}\">memory: the build's own (solid), the running actions' peaks summed (dashed)</text>",
        WIDTH - RIGHT,
        top + MEMORY_HEIGHT,
        top - 6.0
    );
    let mut v = 0.0;
    while v <= y_max + 1e-9 {
        let _ = writeln!(
            out,
            "<text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT - 4.0,
            y(v) + 4.0,
            xml(&bytes(v as u64))
        );
        v += step;
    }
    let points = |list: &[Point]| -> String {
        list.iter().map(|p| format!("{:.1},{:.1}", x(p.t), y(p.value))).collect::<Vec<_>>().join(" ")
    };
    if !m.readings.is_empty() {
        let _ = writeln!(out, "<polyline class=\"build-memory\" points=\"{}\"/>", points(&m.readings));
    }
    if !m.together.is_empty() {
        // A step curve: each value holds until the next point.
        let mut steps: Vec<Point> = Vec::with_capacity(m.together.len() * 2);
        let mut previous = 0.0;
        for p in &m.together {
            steps.push(Point { t: p.t, value: previous });
            steps.push(*p);
            previous = p.value;
        }
        let _ = writeln!(out, "<polyline class=\"actions-together\" points=\"{}\"/>", points(&steps));
    }
    if let Some(peak) = &m.peak {
        let _ = writeln!(
            out,
            "<circle class=\"peak\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\"><title>the build's peak reading: {} at {}</title></circle>",
            x(peak.at),
            y(peak.bytes as f64),
            xml(&bytes(peak.bytes)),
            xml(&seconds(peak.at))
        );
    }
    out.push_str("</g>\n");
}
