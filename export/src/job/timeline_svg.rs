//! The job's timeline as SVG: a row per step (by start, as the table), a
//! bar from its start over its wall time, the gaps in which no step ran as
//! shaded bands across every row, one time axis (seconds since the job's
//! first start).
//!
//! Parts by class: `svg.stepmon-timeline`; per step a `g.step` with
//! `data-status` (`ended`, `notRun`, `interrupted`, `cached`) holding a
//! `rect.bar` (an interrupted step's bar is dashed and open-ended: its end
//! is unknown; a cached step has a marker, not a bar) and `text.step-name`;
//! `rect.gap` per gap; `text.tick.x` tick labels; per event of a step
//! (its memory near what bounds it) a `path.event` at its time on the
//! step's row, its words as `<title>`. Standalone XML, every text escaped,
//! no `id` attributes (it shares pages with the step charts).

use std::fmt::Write as _;

use super::timeline::Span;
use crate::chart::scale::{Axis, Unit};
use crate::escape::xml;
use crate::svg::shorten;
use stepmon_report::job::Entry;
use stepmon_report::job::table::{Job, gaps};
use stepmon_report::units::seconds;

/// Width of the timeline, px (the step charts' width).
pub(super) const WIDTH: f64 = 720.0;
/// Left edge of the bars (room for the step names).
const LEFT: f64 = 170.0;
/// Right margin.
pub(super) const RIGHT: f64 = 28.0;
/// Top margin (the title).
pub(super) const TOP: f64 = 30.0;
/// Height of a step's row.
const ROW: f64 = 20.0;
/// Room under the rows for the tick labels and the axis title.
pub(super) const BOTTOM: f64 = 40.0;
/// At most this many characters of a name at the left.
const NAME_CHARS: usize = 24;

/// Bar colours by status.
pub(super) fn colour(status: &str) -> &'static str {
    match status {
        "interrupted" => "#d97706",
        "notRun" => "#94a3b8",
        "cached" => "#64748b",
        _ => "#2563eb",
    }
}

/// The timeline of `job` (of `entries`), whose rows lie at `spans` (one
/// per row with a start), and its height in pixels.
#[must_use]
pub(crate) fn svg(job: &Job, entries: &[Entry], spans: &[Span]) -> (String, f64) {
    let (events, x) = events_and_axis(job, entries, spans);
    let plot = WIDTH - LEFT - RIGHT;
    let px = |t: f64| LEFT + (t / x.top).clamp(0.0, 1.0) * plot;
    #[allow(clippy::cast_precision_loss)]
    let rows_height = job.steps.len().max(1) as f64 * ROW;
    let height = TOP + rows_height + BOTTOM;
    let mut out = open(height, LEFT, "steps over time");
    gaps_and_ticks(&mut out, job, &x, &px, rows_height);
    for (i, r) in job.steps.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let y = TOP + i as f64 * ROW;
        let shown = shorten(&r.shown_name(), NAME_CHARS);
        let _ = write!(
            out,
            "<g class=\"step\" data-status=\"{}\"><title>{}: {}</title>\
             <text class=\"step-name\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            r.status,
            xml(&r.shown_name()),
            xml(&r.verdict),
            LEFT - 8.0,
            y + ROW - 6.0,
            xml(&shown)
        );
        let color = colour(r.status);
        match of_row(spans, i) {
            None => {
                let _ = write!(
                    out,
                    "<text class=\"no-time\" x=\"{LEFT}\" y=\"{:.1}\" fill-opacity=\"0.7\">— (no start recorded)</text>",
                    y + ROW - 6.0
                );
            }
            Some(s) if r.status == "cached" => {
                let _ = write!(
                    out,
                    "<circle class=\"marker cached\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{color}\"/>\
                     <text class=\"status-label\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">cached</text>",
                    px(s.start),
                    y + ROW / 2.0,
                    px(s.start) + 8.0,
                    y + ROW - 6.0
                );
            }
            Some(s) => {
                let dashed = if r.status == "interrupted" {
                    " fill-opacity=\"0.45\" stroke-dasharray=\"4 2\" stroke-width=\"1.5\""
                } else {
                    ""
                };
                let _ = write!(
                    out,
                    "<rect class=\"bar {}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\" \
                     stroke=\"{color}\"{dashed}/>",
                    r.status,
                    px(s.start),
                    y + 3.0,
                    (px(s.end) - px(s.start)).max(1.0),
                    ROW - 6.0
                );
                if r.status == "interrupted" {
                    let _ = write!(
                        out,
                        "<text class=\"status-label\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">interrupted</text>",
                        px(s.end) + 4.0,
                        y + ROW - 6.0
                    );
                }
            }
        }
        // A downward triangle above the bar at each event's time.
        for (t, words) in &events[i] {
            let _ = write!(
                out,
                "<path class=\"event\" d=\"M{:.1},{:.1}l-4,-6h8z\" fill=\"#dc2626\"><title>{}</title></path>",
                px(*t),
                y + 9.0,
                xml(words)
            );
        }
        out.push_str("</g>");
    }
    close(&mut out, LEFT + plot / 2.0, height);
    (out, height)
}

/// The axis title centred at `middle` above the bottom of a timeline
/// `height` px tall, and the end tag.
pub(super) fn close(out: &mut String, middle: f64, height: f64) {
    let _ = write!(
        out,
        "<text class=\"axis-label x\" x=\"{middle:.1}\" y=\"{:.1}\" text-anchor=\"middle\">time since the job's first step started</text></svg>",
        height - 6.0
    );
}

/// The gaps as shaded bands over the rows (`rect.gap`) and the time axis's
/// grid and tick labels under them (`text.tick.x`), `x` the axis and `px`
/// its pixels; the rows are `rows_height` tall from [`TOP`].
pub(super) fn gaps_and_ticks(out: &mut String, job: &Job, x: &Axis, px: &dyn Fn(f64) -> f64, rows_height: f64) {
    for (from, to) in gaps(job) {
        let _ = write!(
            out,
            "<rect class=\"gap\" x=\"{:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{rows_height}\" fill=\"currentColor\" \
             fill-opacity=\"0.08\"><title>gap: no step ran for {}</title></rect>",
            px(from),
            (px(to) - px(from)).max(0.5),
            xml(&seconds(to - from))
        );
    }
    for &t in &x.ticks {
        let _ = write!(
            out,
            "<line class=\"grid x\" x1=\"{0:.1}\" y1=\"{TOP}\" x2=\"{0:.1}\" y2=\"{1:.1}\" stroke=\"currentColor\" \
             stroke-opacity=\"0.12\"/><text class=\"tick x\" x=\"{0:.1}\" y=\"{2:.1}\" text-anchor=\"middle\">{3}</text>",
            px(t),
            TOP + rows_height,
            TOP + rows_height + 15.0,
            xml(&x.label(t))
        );
    }
}

/// The span of row `row`: `spans` are in row order.
pub(super) fn of_row(spans: &[Span], row: usize) -> Option<&Span> {
    spans.binary_search_by_key(&row, |s| s.row).ok().map(|i| &spans[i])
}

/// Each row's events (seconds since the job's origin, and in words), and
/// the time axis that holds every span and event.
pub(super) fn events_and_axis(job: &Job, entries: &[Entry], spans: &[Span]) -> (Vec<Vec<(f64, String)>>, Axis) {
    let events: Vec<Vec<(f64, String)>> = job
        .steps
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let placed = stepmon_report::event::of_step(&entries[r.entry].step);
            let start = of_row(spans, i).map(|s| s.start);
            placed
                .into_iter()
                .filter_map(|p| Some((start? + p.offset_seconds.filter(|t| t.is_finite())?, p.words)))
                .collect()
        })
        .collect();
    let last_event = events.iter().flatten().map(|(t, _)| *t);
    let end = spans.iter().map(|s| s.end).chain(last_event).fold(job.wall_seconds.unwrap_or(0.0), f64::max);
    (events, Axis::new(Unit::Seconds, end))
}

/// The timeline's `<svg>` start tag, `height` px tall, and its `title`
/// at `left`.
pub(super) fn open(height: f64, left: f64, title: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"stepmon-timeline\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"the job's steps over time\" \
         font-family=\"system-ui, -apple-system, 'Segoe UI', sans-serif\" font-size=\"12\" fill=\"currentColor\">\
         <title>stepmon: the job's steps over time</title>\
         <text class=\"title\" x=\"{left}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        xml(title)
    )
}
