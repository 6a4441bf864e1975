//! The timeline of a large job as one SVG: steps on lanes (a step takes
//! the lowest lane free at its start, `super::timeline::spans`, as cargo's
//! `--timings` page draws its units), so its height is the most steps that
//! ran at once, not the number of steps. A row per step
//! (`super::timeline_svg`) would be 200,000 px tall for 10,000 steps.
//!
//! At that scale most steps are narrower than a pixel: the plain ones (they
//! ended with status 0 and are not shown in detail) that touch within a
//! pixel on a lane are drawn as one bar, which says how many steps it holds
//! and which. Every other step keeps a bar of its own: a step shown in
//! detail (outlined, a link to its section), one that failed (red), was
//! interrupted (dashed) or cached (a marker).
//!
//! Parts by class: `svg.stepmon-timeline.lanes`; `rect.bar` with
//! `data-row` (the first step's place in the job) and `data-steps` (how
//! many steps it holds: every placed step is in exactly one), plus
//! `steps` for a bar of several, `notable` inside an `a` for a step shown
//! in detail, `failed`, and the status (`ended`, `interrupted`, ...);
//! `circle.marker.cached`; `rect.gap`, `text.tick.x`, `path.event` as the
//! row-per-step timeline has them.

use std::fmt::Write as _;

use super::timeline::Span;
use super::timeline_svg::{BOTTOM, RIGHT, TOP, WIDTH, close, colour, events_and_axis, gaps_and_ticks, open};
use crate::escape::xml;
use stepmon_report::job::Entry;
use stepmon_report::job::notable::failed;
use stepmon_report::job::table::{Job, Row, dash};
use stepmon_report::units::seconds;

/// Left edge of the bars (no names at the left: the lanes are no steps).
const LEFT: f64 = 20.0;
/// Height of a lane, and the space between two.
const LANE: f64 = 12.0;
const LANE_GAP: f64 = 2.0;
/// A failed step's bar.
const FAILED: &str = "#d1242f";

/// Steps merged into one bar: the first and last by start, how many,
/// their extent in pixels and in seconds.
struct Merged {
    first: usize,
    last: usize,
    steps: usize,
    from_px: f64,
    to_px: f64,
    from: f64,
    to: f64,
}

/// The timeline of `job` (of `entries`) on lanes, and its height: its rows
/// lie at `spans` (one per row with a start); `in_detail[row]`: the row has
/// a section or chart of its own in the document (`#step-N`, N its place in
/// the job).
#[must_use]
#[allow(clippy::cast_precision_loss)]
pub(crate) fn svg(job: &Job, entries: &[Entry], spans: &[Span], in_detail: &[bool]) -> (String, f64) {
    let (events, x) = events_and_axis(job, entries, spans);
    let plot = WIDTH - LEFT - RIGHT;
    let px = |t: f64| LEFT + (t / x.top).clamp(0.0, 1.0) * plot;
    let lanes = spans.iter().map(|s| s.lane + 1).max().unwrap_or(1);
    let y = |lane: usize| TOP + lane as f64 * (LANE + LANE_GAP);
    let rows_height = y(lanes);
    let height = rows_height + BOTTOM;
    let unplaced = job.steps.len() - spans.len();
    let title = format!(
        "{} steps over time, on {lanes} lane{} (steps that ran at once on lanes of their own){}",
        job.steps.len(),
        if lanes == 1 { "" } else { "s" },
        if unplaced > 0 { format!("; {unplaced} without a start not drawn") } else { String::new() }
    );
    let mut out = open(height, LEFT, &title);
    gaps_and_ticks(&mut out, job, &x, &px, rows_height - TOP);
    // The run of plain steps being merged on each lane.
    let mut merging: Vec<Option<Merged>> = (0..lanes).map(|_| None).collect();
    // The bars of their own, drawn over the merged ones.
    let mut on_top = String::new();
    for s in spans {
        let r = &job.steps[s.row];
        let plain = r.status == "ended" && !failed(r) && !in_detail[s.row];
        let (from_px, to_px) = (px(s.start), px(s.end));
        if !plain {
            single(&mut on_top, s, r, (from_px, to_px), y(s.lane), in_detail[s.row]);
            continue;
        }
        match &mut merging[s.lane] {
            Some(m) if from_px <= m.to_px + 1.0 => {
                (m.last, m.steps, m.to_px, m.to) = (s.row, m.steps + 1, m.to_px.max(to_px), m.to.max(s.end));
            }
            slot => {
                if let Some(done) = slot.replace(Merged {
                    first: s.row,
                    last: s.row,
                    steps: 1,
                    from_px,
                    to_px,
                    from: s.start,
                    to: s.end,
                }) {
                    merged(&mut out, job, &done, y(s.lane));
                }
            }
        }
    }
    for (lane, m) in merging.iter().enumerate() {
        if let Some(m) = m {
            merged(&mut out, job, m, y(lane));
        }
    }
    out.push_str(&on_top);
    // A downward triangle above the bar at each event's time.
    for s in spans {
        for (t, words) in &events[s.row] {
            let _ = write!(
                out,
                "<path class=\"event\" d=\"M{:.1},{:.1}l-4,-6h8z\" fill=\"#dc2626\"><title>#{} {}</title></path>",
                px(*t),
                y(s.lane) + 3.0,
                s.row + 1,
                xml(words)
            );
        }
    }
    close(&mut out, LEFT + plot / 2.0, height);
    (out, height)
}

/// The bar of plain steps `m`: one step's name and numbers, or how many
/// steps and which.
fn merged(out: &mut String, job: &Job, m: &Merged, y: f64) {
    let title = if m.steps == 1 {
        about(m.first, &job.steps[m.first])
    } else {
        format!(
            "{} steps from #{} to #{}: +{} to +{}",
            m.steps,
            m.first + 1,
            m.last + 1,
            seconds(m.from),
            seconds(m.to)
        )
    };
    let _ = write!(
        out,
        "<rect class=\"bar ended{}\" data-row=\"{}\" data-steps=\"{}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" \
         height=\"{LANE}\" fill=\"{}\"><title>{}</title></rect>",
        if m.steps == 1 { "" } else { " steps" },
        m.first + 1,
        m.steps,
        m.from_px,
        y,
        (m.to_px - m.from_px).max(1.0),
        colour("ended"),
        xml(&title)
    );
}

/// A step's bar of its own (a marker when cached), a link to its section
/// when it has one.
fn single(out: &mut String, s: &Span, r: &Row, (from_px, to_px): (f64, f64), y: f64, linked: bool) {
    if linked {
        let _ = write!(out, "<a href=\"#step-{}\">", s.row + 1);
    }
    let notable = if linked { " notable" } else { "" };
    let title = xml(&about(s.row, r));
    if r.status == "cached" {
        let _ = write!(
            out,
            "<circle class=\"marker cached{notable}\" data-row=\"{}\" data-steps=\"1\" cx=\"{from_px:.1}\" cy=\"{:.1}\" \
             r=\"4\" fill=\"{}\"><title>{title}</title></circle>",
            s.row + 1,
            y + LANE / 2.0,
            colour("cached")
        );
    } else {
        let (fill, failed_class) = if failed(r) { (FAILED, " failed") } else { (colour(r.status), "") };
        let dashed = if r.status == "interrupted" { " fill-opacity=\"0.45\" stroke-dasharray=\"4 2\"" } else { "" };
        let outline = if linked { " stroke=\"currentColor\" stroke-width=\"1.2\"" } else { "" };
        let _ = write!(
            out,
            "<rect class=\"bar {}{failed_class}{notable}\" data-row=\"{}\" data-steps=\"1\" x=\"{from_px:.1}\" y=\"{y:.1}\" \
             width=\"{:.1}\" height=\"{LANE}\" fill=\"{fill}\"{outline}{dashed}><title>{title}</title></rect>",
            r.status,
            s.row + 1,
            (to_px - from_px).max(1.0)
        );
    }
    if linked {
        out.push_str("</a>");
    }
}

/// A step in words: its place, name, start, wall time and verdict.
fn about(row: usize, r: &Row) -> String {
    format!(
        "#{} {}: +{}, {}, {}",
        row + 1,
        r.shown_name(),
        dash(r.start_offset_seconds, seconds),
        dash(r.wall_seconds, seconds),
        r.verdict
    )
}
