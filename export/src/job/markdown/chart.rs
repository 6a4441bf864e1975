//! The job over time for its Markdown: two Mermaid `xychart-beta` blocks,
//! the cores its steps used together and the memory they held together,
//! on the job's time axis (from its first step's start).
//!
//! Why these two, and why one pair for the whole job: the question a job
//! summary answers first is whether the job had the right machine, and
//! the job's verdict judges it from exactly these sums (its busiest cores
//! and its memory peak: `stepmon_report::job::JobVerdict`); the chart shows
//! when the job was near them and when it idled. Charts per step would
//! grow with the job (two blocks a step), where GitHub refuses a summary
//! over 1 MiB; this pair is at most [`MAX_CHART_POINTS`] points each
//! whatever the job. Mermaid and not SVG or an image: see
//! [`crate::markdown`] (GitHub's sanitizer drops inline SVG and `data:`
//! images; it renders Mermaid).
//!
//! The sums are taken as the verdict takes them: memory at a bucket's end
//! is the sum of the running steps' last readings at or before it (a
//! gauge: a peak between two bucket ends may not show, the verdict has
//! it); cores over a bucket are the CPU time all steps spent in it over
//! its width (each step's rate over each of its sample intervals, the part
//! of the interval inside the bucket). Where no step ran, the steps used
//! nothing: that zero is measured, not made up. A step with no CPU or
//! memory series of its own (its memory the cgroup's around it:
//! [`stepmon_report::job::memory_not_own`]) adds nothing to that chart,
//! and the chart says how many such steps there were.

use stepmon_report::job::Entry;
use stepmon_report::job::axis::on_job_axis;
use stepmon_report::series::Point;

use crate::chart::scale::nice_step;
use crate::markdown::{Grid, MAX_CHART_POINTS, SLACK, bucket_range, xychart};

/// A step's series on the job's axis (seconds since the job's origin).
struct Placed {
    /// `(start, end, cores)`: the step's rate over each sample interval.
    cores: Vec<(f64, f64, f64)>,
    /// Its memory readings, by time.
    memory: Vec<Point>,
    /// When it ran: its memory counts from `start` to `end`.
    start: f64,
    end: f64,
}

/// The job's steps on its axis ([`stepmon_report::job::axis`], as the
/// job's verdict sums them), each rate with the interval it covers.
fn place(entries: &[Entry]) -> Vec<Placed> {
    on_job_axis(entries)
        .into_iter()
        .map(|step| {
            let mut previous = step.cores_from;
            let mut cores = Vec::with_capacity(step.cores.len());
            for p in &step.cores {
                let from = previous.unwrap_or(p.t);
                previous = Some(p.t);
                if p.t > from {
                    cores.push((from, p.t, p.value));
                }
            }
            Placed { cores, memory: step.memory, start: step.start, end: step.end }
        })
        .collect()
}

/// The job's grid width and bucket ends from its origin to `to`.
#[allow(clippy::cast_precision_loss)]
fn buckets(to: f64) -> (f64, Vec<f64>) {
    let mut width = nice_step(to / MAX_CHART_POINTS as f64);
    while bucket_range(0.0, to, width, true).count() > MAX_CHART_POINTS {
        width = nice_step(width * 1.5);
    }
    // `+ 0.0` turns -0.0 into 0.0 for the label.
    #[allow(clippy::cast_precision_loss)]
    let ends = bucket_range(0.0, to, width, true).map(|k| k as f64 * width + 0.0).collect();
    (width, ends)
}

fn cores_in(steps: &[Placed], end: f64, width: f64) -> f64 {
    let area: f64 =
        steps.iter().flat_map(|s| &s.cores).map(|&(a, b, v)| (b.min(end) - a.max(end - width)).max(0.0) * v).sum();
    area / width
}

fn memory_at(steps: &[Placed], end: f64, width: f64) -> f64 {
    steps
        .iter()
        .filter(|s| s.start <= end + SLACK * width && end <= s.end + SLACK * width)
        .filter_map(|s| s.memory.iter().rev().find(|p| p.t <= end + SLACK * width).map(|p| p.value))
        .sum()
}

/// A chart: its title, its unit, whether a step has readings for it, its
/// value at a bucket's end (given the width), and the scale into its unit.
type Chart = (&'static str, &'static str, fn(&Placed) -> bool, fn(&[Placed], f64, f64) -> f64, fn(f64) -> f64);

/// The two charts of the job of `entries` (or a sentence for each saying
/// why there is none), under a heading.
#[must_use]
pub(crate) fn render(entries: &[Entry]) -> String {
    let steps = place(entries);
    let to = steps.iter().map(|s| s.end).fold(0.0, f64::max);
    let mut out = String::from("\n**The job over time**\n\n");
    if steps.is_empty() || to <= 0.0 {
        out.push_str("*No chart: no step of the job has a start and a time span.*\n");
        return out;
    }
    let (width, ends) = buckets(to);
    #[allow(clippy::cast_precision_loss)]
    let mib = |v: f64| v / (1024.0 * 1024.0);
    let charts: [Chart; 2] = [
        ("CPU of the job's steps together", "cores", |s| !s.cores.is_empty(), cores_in, |v| v),
        ("Memory in use by the job's steps together", "MiB", |s| !s.memory.is_empty(), memory_at, mib),
    ];
    for (title, unit, has, value, scale) in charts {
        let without = steps.iter().filter(|s| !has(s)).count();
        if without == steps.len() {
            out.push_str(&format!("*{title} over time: not measured.*\n\n"));
            continue;
        }
        let points = ends.iter().map(|&t| Point { t, value: value(&steps, t, width) }).collect();
        out.push_str(&xychart(title, unit, "time since the job started", &Grid { width, points }, scale));
        if without > 0 {
            out.push_str(&format!(
                "\n*{without} of the job's {} steps have no {unit} readings of their own and add nothing to it.*\n",
                steps.len()
            ));
        }
        out.push('\n');
    }
    out
}
