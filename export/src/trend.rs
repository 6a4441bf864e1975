//! An SVG chart of one metric over many runs (`stepmon baseline show`),
//! drawn with the step chart's axes, fonts and escaping ([`super::svg`]).
//!
//! The runs are the x axis (oldest left, numbered from 1); each run is a
//! point on the value's line, its hover text (`<title>`) says when it ran,
//! at which commit and what the gate said. The baseline band — the
//! interval the gate's test expected each run in, from the runs before it
//! — is a shaded area behind the line. Parts a test or a page finds by
//! class:
//!
//! | element | class |
//! |---|---|
//! | the `<svg>` | `stepmon-trend` |
//! | the band `<path>` (one subpath per stretch of runs with a baseline) | `band` |
//! | the value `<polyline>` (one vertex per run) | `series value` |
//! | a run's `<circle>` (of more than [`MARKED_ONLY`] runs, only the marked ones) | `point`, plus `regression`, `improvement` or `busy` |
//! | tick labels `<text>` | `tick x`, `tick y` |

use std::fmt::Write as _;

use super::chart::scale::{Axis, Unit};
use super::svg::{LEFT, RIGHT, WIDTH};
use crate::escape::xml;
use stepmon_report::fixed::Fixed;

/// The unit of a trend's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueUnit {
    /// Seconds.
    Seconds,
    /// Bytes.
    Bytes,
    /// A count.
    Count,
}

/// What a run's point is marked as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mark {
    /// Within the band, or no baseline yet.
    Plain,
    /// Above the band by more than the floor.
    Regression,
    /// Below it by more than the floor.
    Improvement,
    /// Its machine was busy (left out of the baselines this metric is
    /// busy-sensitive for).
    Busy,
}

impl Mark {
    fn class(self) -> &'static str {
        match self {
            Mark::Plain => "point",
            Mark::Regression => "point regression",
            Mark::Improvement => "point improvement",
            Mark::Busy => "point busy",
        }
    }

    fn style(self) -> (&'static str, f64) {
        match self {
            Mark::Plain => ("#3b82f6", 2.5),
            Mark::Regression => ("#dc2626", 5.0),
            Mark::Improvement => ("#16a34a", 4.0),
            Mark::Busy => ("#94a3b8", 4.0),
        }
    }
}

/// One run of the trend.
#[derive(Debug, Clone, PartialEq)]
pub struct TrendPoint {
    /// Its value.
    pub value: f64,
    /// The interval the gate expected it in (lower, upper), when the runs
    /// before it were enough for a baseline.
    pub band: Option<(f64, f64)>,
    /// How its point is marked.
    pub mark: Mark,
    /// Its hover text (time, commit, value, verdict).
    pub hover: String,
}

/// Charts of more runs than this draw a circle (and hover text) only for
/// the marked runs.
pub const MARKED_ONLY: usize = 1000;

/// Height of the title line, the plot, and the room below it.
const TITLE: f64 = 30.0;
const PLOT: f64 = 170.0;
const BELOW: f64 = 40.0;

/// The chart of `points` (oldest first) titled `title`.
///
/// ```
/// use stepmon_export::trend::{Mark, TrendPoint, ValueUnit, chart};
/// let point = |value: f64, mark| TrendPoint { value, band: Some((9.0, 11.0)), mark, hover: format!("{value}") };
/// let svg = chart("build cpu-seconds", ValueUnit::Seconds, &[point(10.0, Mark::Plain), point(14.0, Mark::Regression)]);
/// assert!(svg.contains("class=\"point regression\""));
/// assert!(svg.contains("class=\"band\""));
/// ```
#[must_use]
pub fn chart(title: &str, unit: ValueUnit, points: &[TrendPoint]) -> String {
    let finite = |v: f64| v.is_finite().then_some(v);
    let max = points
        .iter()
        .flat_map(|p| [Some(p.value), p.band.map(|b| b.1)])
        .flatten()
        .filter_map(finite)
        .fold(0.0, f64::max);
    let y = Axis::new(
        match unit {
            ValueUnit::Seconds => Unit::Seconds,
            ValueUnit::Bytes => Unit::Bytes,
            ValueUnit::Count => Unit::Cores,
        },
        max,
    );
    #[allow(clippy::cast_precision_loss)]
    let x = Axis::new(Unit::Cores, points.len().max(1) as f64);
    let width = WIDTH - LEFT - RIGHT;
    // Run i (from 0) at x = i + 1.
    #[allow(clippy::cast_precision_loss)]
    let px = |i: usize| LEFT + ((i + 1) as f64 / x.top).clamp(0.0, 1.0) * width;
    let py = |v: f64| TITLE + PLOT - (finite(v).unwrap_or(0.0) / y.top).clamp(0.0, 1.0) * PLOT;
    let height = TITLE + PLOT + BELOW;
    let mut out = String::with_capacity(200 + points.len() * 160);
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"stepmon-trend\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"{t} over {n} runs\" \
         font-family=\"system-ui, -apple-system, 'Segoe UI', sans-serif\" font-size=\"12\" fill=\"currentColor\">\
         <title>{t}</title><text class=\"title\" x=\"{LEFT}\" y=\"20\" font-weight=\"bold\">{t}</text>\
         <rect class=\"frame\" x=\"{LEFT}\" y=\"{TITLE}\" width=\"{width}\" height=\"{PLOT}\" fill=\"none\" \
         stroke=\"currentColor\" stroke-opacity=\"0.35\"/>",
        t = xml(title),
        n = points.len(),
    );
    for &v in &y.ticks {
        let _ = write!(
            out,
            "<line class=\"grid y\" x1=\"{LEFT}\" y1=\"{p}\" x2=\"{}\" y2=\"{p}\" stroke=\"currentColor\" \
             stroke-opacity=\"0.12\"/><text class=\"tick y\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            Fixed::<1>(LEFT + width),
            Fixed::<1>(LEFT - 6.0),
            Fixed::<1>(py(v) + 4.0),
            xml(&y.label(v)),
            p = Fixed::<1>(py(v)),
        );
    }
    for &t in x.ticks.iter().filter(|t| **t >= 1.0) {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let p = Fixed::<1>(px(t as usize - 1));
        let _ = write!(
            out,
            "<text class=\"tick x\" x=\"{p}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            Fixed::<1>(TITLE + PLOT + 15.0),
            x.label(t)
        );
    }
    let _ = write!(
        out,
        "<text class=\"axis-label x\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">runs, oldest first · shaded: the \
         interval the gate expected · red: regression · green: improvement · grey: busy machine</text>",
        Fixed::<1>(LEFT + width / 2.0),
        Fixed::<1>(height - 8.0)
    );
    // The band: upper edge left to right, lower edge back, per stretch.
    let mut band = String::new();
    let mut i = 0;
    while i < points.len() {
        if points[i].band.is_none() {
            i += 1;
            continue;
        }
        let start = i;
        while i < points.len() && points[i].band.is_some() {
            i += 1;
        }
        let stretch = &points[start..i];
        let edge = |j: usize, v: f64| format!("{},{}", Fixed::<1>(px(start + j)), Fixed::<1>(py(v)));
        let _ = write!(band, "M{}", edge(0, stretch[0].band.map_or(0.0, |b| b.1)));
        for (j, p) in stretch.iter().enumerate().skip(1) {
            let _ = write!(band, " L{}", edge(j, p.band.map_or(0.0, |b| b.1)));
        }
        for (j, p) in stretch.iter().enumerate().rev() {
            let _ = write!(band, " L{}", edge(j, p.band.map_or(0.0, |b| b.0)));
        }
        band.push_str(" Z");
    }
    if !band.is_empty() {
        let _ =
            write!(out, "<path class=\"band\" d=\"{band}\" fill=\"#3b82f6\" fill-opacity=\"0.15\" stroke=\"none\"/>");
    }
    out.push_str(
        "<polyline class=\"series value\" fill=\"none\" stroke=\"#3b82f6\" stroke-width=\"1.5\" \
         stroke-linejoin=\"round\" points=\"",
    );
    for (i, p) in points.iter().enumerate() {
        let _ = write!(out, "{}{},{}", if i == 0 { "" } else { " " }, Fixed::<1>(px(i)), Fixed::<1>(py(p.value)));
    }
    out.push_str("\"/>");
    // Past MARKED_ONLY runs a point per run is a blur of circles (and
    // megabytes of SVG): the line carries the values, circles only the
    // marked runs.
    let every_point = points.len() <= MARKED_ONLY;
    for (i, p) in points.iter().enumerate().filter(|(_, p)| every_point || p.mark != Mark::Plain) {
        let (color, r) = p.mark.style();
        let _ = write!(
            out,
            "<circle class=\"{}\" cx=\"{}\" cy=\"{}\" r=\"{r}\" fill=\"{color}\"><title>{}</title></circle>",
            p.mark.class(),
            Fixed::<1>(px(i)),
            Fixed::<1>(py(p.value)),
            xml(&p.hover)
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_vertex_and_one_point_per_run_and_a_band_per_stretch() {
        let points: Vec<TrendPoint> = (0..6)
            .map(|i| TrendPoint {
                value: f64::from(i),
                band: (i != 2).then_some((0.5, 4.0)),
                mark: if i == 5 { Mark::Regression } else { Mark::Plain },
                hover: format!("run <{i}>"),
            })
            .collect();
        let svg = chart("a & b", ValueUnit::Count, &points);
        assert_eq!(svg.matches("<circle").count(), 6);
        assert_eq!(svg.matches("class=\"point regression\"").count(), 1);
        let band = svg.split("class=\"band\" d=\"").nth(1).unwrap().split('"').next().unwrap();
        assert_eq!(band.matches('M').count(), 2, "{band}");
        assert!(svg.contains("run &lt;3&gt;") && svg.contains("a &amp; b"));
        let line = svg.split("class=\"series value\"").nth(1).unwrap();
        let vertices = line.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
        assert_eq!(vertices.split(' ').count(), 6);
    }

    #[test]
    fn long_trends_draw_circles_for_marked_runs_only() {
        let point = |i: usize| TrendPoint {
            value: 1.0,
            band: None,
            mark: if i.is_multiple_of(100) { Mark::Busy } else { Mark::Plain },
            hover: String::new(),
        };
        let points: Vec<TrendPoint> = (0..=MARKED_ONLY).map(point).collect();
        let svg = chart("long", ValueUnit::Count, &points);
        assert_eq!(svg.matches("<circle").count(), MARKED_ONLY / 100 + 1);
        assert_eq!(chart("short", ValueUnit::Count, &points[..MARKED_ONLY]).matches("<circle").count(), MARKED_ONLY);
    }

    #[test]
    fn no_points_no_nan() {
        let svg = chart("empty", ValueUnit::Bytes, &[]);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }
}
