//! An inline SVG chart of one step, drawn here from its [`StepSeries`] — no
//! external service, font or script.
//!
//! Stacked panels over a shared time axis (seconds since the step started):
//!
//! 1. **Memory** — bytes in use (`memory.current`, else anon + file), anon
//!    and page cache (file) when recorded, the `memory.max` limit and the
//!    peak the kernel saw (`memory.peak` — short spikes fall between samples).
//! 2. **CPU** — cores used over each sampling interval, and the `cpu.max`
//!    limit (quota ÷ period) when one was set.
//! 3. **Waiting and machine** (only when any of it was recorded) — the share
//!    of time some task of the step waited for CPU, memory or IO (PSI
//!    `some`), the machine's busy CPU share and its CPU stall share.
//!
//! A panel with nothing recorded says "not measured" and why (from the
//! samples' `missing` lists or the controllers that could not be enabled)
//! instead of staying blank.
//!
//! The document is standalone XML (`xmlns`, every text escaped, coordinates
//! always finite) so it can be saved as a `.svg` file, put in an `<img>` or
//! inlined into HTML. It uses no `id` attributes (a page with several charts
//! would repeat them); tests and pages find the parts by class:
//!
//! | element | class |
//! |---|---|
//! | the `<svg>` | `stepmon-chart` |
//! | a panel `<g>` | `panel memory`, `panel cpu`, `panel pressure` |
//! | a series `<polyline>` | `series memory`, `series memory-anon`, `series memory-file`, `series cpu`, `series cpu-stall`, `series memory-stall`, `series io-stall`, `series machine-busy`, `series machine-cpu-stall` |
//! | a limit `<line>` | `limit memory`, `limit cpu` |
//! | the peak `<line>` (`memory.peak`, which samples can miss) | `peak memory` |
//! | an event of the step at its time, a `<line>` across the panels with its words as `<title>` | `event` |
//! | tick labels `<text>` | `tick x`, `tick y` |
//! | "not measured" `<text>` | `not-measured` |
//!
//! Each polyline has one vertex per point of its series; a series of fewer
//! than three points also gets a `<circle class="marker …">` per point so
//! that one point is still visible. Text and axes use `currentColor`, so the
//! chart follows the page's (light or dark) text colour.

use std::fmt::Write as _;

use super::chart::scale::{Axis, Unit};
use crate::escape::xml;
use stepmon_report::fixed::Fixed;
use stepmon_report::series::{Point, StepSeries};
use stepmon_report::step::Step;

/// Width of the whole chart, px.
pub(crate) const WIDTH: f64 = 720.0;
/// Left edge of the plots (room for the y tick labels).
pub(crate) const LEFT: f64 = 78.0;
/// Right margin.
pub(crate) const RIGHT: f64 = 28.0;
/// Height of the chart title line.
const TITLE: f64 = 34.0;
/// Height of a panel's header: its title, and its legend on a line below.
const HEADER: f64 = 42.0;
/// Height of a plot.
const PLOT: f64 = 130.0;
/// Room under a plot for the x tick labels and spacing to the next panel.
const BELOW: f64 = 30.0;
/// Room at the bottom for the x axis title.
const BOTTOM: f64 = 20.0;
/// At most this many characters of the step's name in the visible title
/// (the whole name is in the `<title>` element).
const TITLE_CHARS: usize = 72;

/// One line of a panel.
struct Line<'a> {
    class: &'static str,
    label: &'static str,
    color: &'static str,
    dashed: bool,
    points: &'a [Point],
}

/// One panel: a title, a unit, its lines and an optional limit.
struct Panel<'a> {
    class: &'static str,
    title: &'static str,
    unit: Unit,
    lines: Vec<Line<'a>>,
    /// A horizontal limit line (`memory.max`, `cpu.max`), in the panel's unit.
    limit: Option<f64>,
    /// A horizontal peak line: the highest value the kernel saw, which
    /// samples taken every second or so can miss (`memory.peak`).
    peak: Option<f64>,
    /// Why nothing was measured, when no line has a point.
    missing: String,
}

impl Panel<'_> {
    fn is_empty(&self) -> bool {
        self.lines.iter().all(|l| l.points.is_empty())
    }
}

/// Why a series is absent: the first `missing` entry of any sample for one
/// of `fields` (the JSON field of the sample), else the controller that could
/// not be enabled, else that there are no samples.
fn why_missing(step: &Step, fields: &[&str], controller: &str) -> String {
    let from_samples = step
        .usage
        .resource_usage
        .samples
        .iter()
        .flat_map(|s| &s.stepmon.missing)
        .find(|m| fields.iter().any(|f| m.field == *f))
        .map(|m| m.reason.to_string());
    let from_controllers = || {
        step.run.as_ref().and_then(|r| {
            r.controllers_not_enabled
                .iter()
                .find(|c| c.controller == controller)
                .map(|c| format!("the {controller} controller is not enabled: {}", c.reason))
        })
    };
    from_samples.or_else(from_controllers).unwrap_or_else(|| {
        if step.usage.resource_usage.samples.len() < 2 {
            "fewer than two samples were recorded".to_owned()
        } else {
            "the samples hold no such values".to_owned()
        }
    })
}

/// The step's last recorded `memory.max`, bytes (none when `max`).
fn memory_limit(step: &Step) -> Option<f64> {
    #[allow(clippy::cast_precision_loss)]
    step.usage.resource_usage.samples.iter().rev().find_map(|s| s.stepmon.memory_max?.value()).map(|v| v as f64)
}

/// The step's last recorded `cpu.max` as cores (quota ÷ period).
fn cpu_limit(step: &Step) -> Option<f64> {
    step.usage.resource_usage.samples.iter().rev().find_map(|s| {
        let quota = s.stepmon.cpu_max_quota_usec?.value()?;
        let period = s.stepmon.cpu_max_period_usec.filter(|p| *p > 0)?;
        #[allow(clippy::cast_precision_loss)]
        Some(quota as f64 / period as f64)
    })
}

fn panels<'a>(step: &Step, s: &'a StepSeries) -> Vec<Panel<'a>> {
    let line = |class, label, color, dashed, points: &'a Vec<Point>| Line { class, label, color, dashed, points };
    let memory = Panel {
        class: "memory",
        title: "Memory",
        unit: Unit::Bytes,
        lines: vec![
            line("memory", "in use", "#3b82f6", false, &s.memory_bytes),
            line("memory-anon", "anon", "#a855f7", false, &s.memory_anon_bytes),
            line("memory-file", "file (page cache)", "#14b8a6", true, &s.memory_file_bytes),
        ],
        limit: memory_limit(step),
        #[allow(clippy::cast_precision_loss)]
        peak: step.summary.memory.peak_bytes.map(|p| p as f64),
        missing: why_missing(step, &["memoryStat", "stepmon.memoryCurrent"], "memory"),
    };
    let cpu = Panel {
        class: "cpu",
        title: "CPU (cores)",
        unit: Unit::Cores,
        lines: vec![line("cpu", "cores used", "#f97316", false, &s.cpu_cores)],
        limit: cpu_limit(step),
        peak: None,
        missing: why_missing(step, &["cpuStat", "cpuStat.usageNanos"], "cpu"),
    };
    let pressure = Panel {
        class: "pressure",
        title: "Waiting (PSI some, share of time) and machine CPU",
        unit: Unit::Share,
        lines: vec![
            line("cpu-stall", "step waiting: CPU", "#ef4444", false, &s.cpu_stall_share),
            line("memory-stall", "memory", "#eab308", false, &s.memory_stall_share),
            line("io-stall", "IO", "#22c55e", false, &s.io_stall_share),
            line("machine-busy", "machine busy", "#64748b", true, &s.machine_cpu_busy_share),
            line("machine-cpu-stall", "machine waiting: CPU", "#ec4899", true, &s.machine_cpu_stall_share),
        ],
        limit: None,
        peak: None,
        missing: String::new(),
    };
    let mut out = vec![memory, cpu];
    if !pressure.is_empty() {
        out.push(pressure);
    }
    out
}

/// `v` if finite, else `None` (NaN and ±∞ never reach a coordinate).
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// The largest finite value in `values`, if any.
fn max_of(values: impl Iterator<Item = f64>) -> Option<f64> {
    values.filter_map(finite).reduce(f64::max)
}

/// The plot area of one panel and its axes.
struct Frame {
    top: f64,
    x: Axis,
    y: Axis,
}

impl Frame {
    fn width() -> f64 {
        WIDTH - LEFT - RIGHT
    }

    /// Pixel position of time `t`, clamped to the plot.
    fn px(&self, t: f64) -> f64 {
        LEFT + (t / self.x.top).clamp(0.0, 1.0) * Frame::width()
    }

    /// Pixel position of value `v`, clamped to the plot.
    fn py(&self, v: f64) -> f64 {
        self.top + PLOT - (v / self.y.top).clamp(0.0, 1.0) * PLOT
    }
}

/// An SVG chart of `step`'s memory and CPU over time (and the time it
/// waited and the machine's CPU use, when recorded). See the module docs
/// for its parts and classes.
///
/// ```
/// use stepmon_model::document::RunDocument;
/// use stepmon_report::Step;
///
/// let json = r#"{"resourceUsage": {"samples": [
///     {"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {"usageNanos": 0}, "pidsStat": {}},
///     {"timestamp": "2026-11-30T10:00:01Z", "cpuStat": {"usageNanos": 500000000}, "pidsStat": {}},
///     {"timestamp": "2026-11-30T10:00:02Z", "cpuStat": {"usageNanos": 1500000000}, "pidsStat": {}}]},
///   "sysUsage": [],
///   "stepmon": {"command": ["make", "a<b"], "exitCode": 0}}"#;
/// let step = Step::from_run(&serde_json::from_str::<RunDocument>(json)?);
/// let svg = stepmon_export::svg::chart(&step);
/// assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
/// assert!(svg.contains("class=\"series cpu\""));
/// assert!(svg.contains("make &#39;a&lt;b&#39;"));
/// assert!(svg.contains("not measured")); // no memory in these samples
/// # Ok::<(), serde_json::Error>(())
/// ```
#[must_use]
pub fn chart(step: &Step) -> String {
    chart_with_height(step).0
}

/// The charts of `steps` as one SVG document: the chart of a single step as
/// is, several stacked top to bottom (nested `<svg>` elements).
#[must_use]
pub fn charts(steps: &[Step]) -> String {
    if let [step] = steps {
        return chart(step) + "\n";
    }
    let mut body = String::new();
    let mut offset = 0.0;
    for step in steps {
        let (svg, height) = chart_with_height(step);
        // Each chart is a complete <svg> element; nested, it takes a y offset.
        body.push_str(&svg.replacen("<svg ", &format!("<svg y=\"{offset}\" "), 1));
        body.push('\n');
        offset += height;
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"stepmon-charts\" width=\"{WIDTH}\" height=\"{offset}\" \
         viewBox=\"0 0 {WIDTH} {offset}\">\n{body}</svg>\n"
    )
}

/// The chart of `step` and its height in pixels.
pub(crate) fn chart_with_height(step: &Step) -> (String, f64) {
    let series = StepSeries::of(step);
    let panels = panels(step, &series);
    let events = stepmon_report::event::of_step(step);
    let event_times = events.iter().filter_map(|e| e.offset_seconds);
    let t_max = max_of(
        panels
            .iter()
            .flat_map(|p| p.lines.iter().flat_map(|l| l.points.iter().map(|p| p.t)))
            .chain(step.wall_seconds)
            .chain(event_times),
    );
    let x = Axis::new(Unit::Seconds, t_max.unwrap_or(1.0));
    #[allow(clippy::cast_precision_loss)]
    let height = TITLE + panels.len() as f64 * (HEADER + PLOT + BELOW) + BOTTOM;
    let mut out = String::new();
    let name = xml(&stepmon_report::step::elide(&step.name));
    let shown = stepmon_report::step::elide_to(&step.name, TITLE_CHARS);
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"stepmon-chart\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"memory and CPU over time of {name}\" \
         font-family=\"system-ui, -apple-system, 'Segoe UI', sans-serif\" font-size=\"12\" fill=\"currentColor\">\
         <title>stepmon: {name}</title>\
         <text class=\"title\" x=\"{LEFT}\" y=\"22\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        xml(&shown)
    );
    let mut top = TITLE;
    for panel in &panels {
        draw_panel(&mut out, panel, top, &x);
        top += HEADER + PLOT + BELOW;
    }
    // Each event: a line at its time across every panel's plot.
    for placed in &events {
        let Some(t) = placed.offset_seconds.and_then(finite) else { continue };
        let px = LEFT + (t / x.top).clamp(0.0, 1.0) * Frame::width();
        let _ = write!(
            out,
            "<line class=\"event\" x1=\"{px:.1}\" y1=\"{:.1}\" x2=\"{px:.1}\" y2=\"{:.1}\" stroke=\"#dc2626\" \
             stroke-width=\"1.5\" stroke-dasharray=\"1 3\"><title>{}</title></line>",
            TITLE + HEADER,
            top - BELOW,
            xml(&placed.words)
        );
    }
    let _ = write!(
        out,
        "<text class=\"axis-label x\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">time since the step started</text></svg>",
        LEFT + Frame::width() / 2.0,
        height - 6.0
    );
    (out, height)
}

fn draw_panel(out: &mut String, panel: &Panel<'_>, top: f64, x: &Axis) {
    let plot_top = top + HEADER;
    let values = panel.lines.iter().flat_map(|l| l.points.iter().map(|p| p.value)).chain(panel.limit).chain(panel.peak);
    let y = Axis::new(panel.unit, max_of(values).unwrap_or(0.0));
    let frame = Frame { top: plot_top, x: x.clone(), y };
    let _ = write!(
        out,
        "<g class=\"panel {}\"><text class=\"panel-title\" x=\"{LEFT}\" y=\"{}\" font-weight=\"bold\">{}</text>",
        panel.class,
        top + 14.0,
        xml(panel.title)
    );
    // Legend on its own line under the title, left to right: present
    // series only, each a short stroke in its colour and dash, then its label.
    let mut legend_x = LEFT;
    for l in panel.lines.iter().filter(|l| !l.points.is_empty()) {
        let _ = write!(
            out,
            "<line class=\"legend-key {}\" x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{}\" \
             stroke-width=\"3\"{}/><text class=\"legend {}\" x=\"{}\" y=\"{}\">{}</text>",
            l.class,
            Fixed::<1>(legend_x),
            Fixed::<1>(legend_x + 18.0),
            l.color,
            if l.dashed { " stroke-dasharray=\"4 2\"" } else { "" },
            l.class,
            Fixed::<1>(legend_x + 22.0),
            Fixed::<1>(top + 34.0),
            xml(l.label),
            y = Fixed::<1>(top + 30.0)
        );
        // Room for the label: a generous 7 px per character of the 12 px font.
        #[allow(clippy::cast_precision_loss)]
        let text_width = l.label.chars().count() as f64 * 7.0;
        legend_x += 22.0 + text_width + 16.0;
    }
    // Frame, grid and tick labels.
    let _ = write!(
        out,
        "<rect class=\"frame\" x=\"{LEFT}\" y=\"{plot_top}\" width=\"{}\" height=\"{PLOT}\" fill=\"none\" \
         stroke=\"currentColor\" stroke-opacity=\"0.35\"/>",
        Frame::width()
    );
    // A panel without data has no values to label.
    let y_ticks: &[f64] = if panel.is_empty() { &[] } else { &frame.y.ticks };
    for &v in y_ticks {
        let py = frame.py(v);
        let _ = write!(
            out,
            "<line class=\"grid y\" x1=\"{LEFT}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"currentColor\" \
             stroke-opacity=\"0.12\"/><text class=\"tick y\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            Fixed::<1>(py),
            Fixed::<1>(LEFT + Frame::width()),
            Fixed::<1>(py),
            Fixed::<1>(LEFT - 6.0),
            Fixed::<1>(py + 4.0),
            xml(&frame.y.label(v))
        );
    }
    for &t in &frame.x.ticks {
        let px = Fixed::<1>(frame.px(t));
        let _ = write!(
            out,
            "<line class=\"grid x\" x1=\"{px}\" y1=\"{plot_top}\" x2=\"{px}\" y2=\"{}\" stroke=\"currentColor\" \
             stroke-opacity=\"0.12\"/><text class=\"tick x\" x=\"{px}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            Fixed::<1>(plot_top + PLOT),
            Fixed::<1>(plot_top + PLOT + 15.0),
            xml(&frame.x.label(t))
        );
    }
    if panel.is_empty() {
        let _ = write!(
            out,
            "<text class=\"not-measured\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"14\">not measured</text>\
             <text class=\"not-measured-reason\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" \
             fill-opacity=\"0.75\">{}</text></g>",
            LEFT + Frame::width() / 2.0,
            plot_top + PLOT / 2.0 - 4.0,
            LEFT + Frame::width() / 2.0,
            plot_top + PLOT / 2.0 + 14.0,
            xml(&shorten(&panel.missing, 100))
        );
        return;
    }
    let marks = [("limit", "limit", "#dc2626", "6 3", panel.limit), ("peak", "peak", "#64748b", "2 3", panel.peak)];
    for (kind, label, color, dashes, value) in marks {
        let Some(value) = value.and_then(finite) else { continue };
        let py = frame.py(value);
        let shown = frame.y.label(value);
        // Label above the line; the peak's at the left so that it does not
        // cover the limit's when both are at the same height (OOM at the limit).
        let (lx, anchor) = if kind == "limit" { (LEFT + Frame::width() - 4.0, "end") } else { (LEFT + 4.0, "start") };
        let _ = write!(
            out,
            "<line class=\"{kind} {}\" x1=\"{LEFT}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" stroke=\"{color}\" \
             stroke-width=\"1.5\" stroke-dasharray=\"{dashes}\"><title>{label} {}</title></line>\
             <text class=\"{kind}-label\" x=\"{lx:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\" font-size=\"11\" \
             fill=\"{color}\">{label} {}</text>",
            panel.class,
            LEFT + Frame::width(),
            xml(&shown),
            py - 4.0,
            xml(&shown)
        );
    }
    for l in panel.lines.iter().filter(|l| !l.points.is_empty()) {
        draw_line(out, l, &frame);
    }
    out.push_str("</g>");
}

fn draw_line(out: &mut String, l: &Line<'_>, frame: &Frame) {
    // Non-finite times or values never become coordinates: such a point is
    // drawn at the axis (clamped) rather than dropped, so the vertex count
    // stays the series' length.
    let xy = |p: &Point| (frame.px(finite(p.t).unwrap_or(0.0)), frame.py(finite(p.value).unwrap_or(0.0)));
    let _ = write!(
        out,
        "<polyline class=\"series {}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" stroke-linejoin=\"round\"{} points=\"",
        l.class,
        l.color,
        if l.dashed { " stroke-dasharray=\"5 3\"" } else { "" },
    );
    for (i, (x, y)) in l.points.iter().map(&xy).enumerate() {
        let _ = write!(out, "{}{},{}", if i == 0 { "" } else { " " }, Fixed::<1>(x), Fixed::<1>(y));
    }
    out.push_str("\"/>");
    if l.points.len() < 3 {
        for (x, y) in l.points.iter().map(xy) {
            let _ = write!(
                out,
                "<circle class=\"marker {}\" cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>",
                l.class,
                Fixed::<1>(x),
                Fixed::<1>(y),
                l.color
            );
        }
    }
}

/// `text` in at most `max` characters, the elision marked.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    stepmon_report::step::elide_to(text, max).into_owned()
}
