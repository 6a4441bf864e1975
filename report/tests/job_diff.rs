//! `stepmon diff` of two jobs: the jobs' totals (wall, CPU, peak memory)
//! judged by the step fields' noise model, and gated on.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::job::{Reading, entries_of, job};
use stepmon_report::diff::{DiffVerdict, JobTotals, RunDiff};
use stepmon_report::job::Entry;

const BUILD: &[Reading] =
    &[(0.0, 0, 100 << 20, 0), (5.0, 4_000_000_000, 200 << 20, 0), (10.0, 8_000_000_000, 200 << 20, 0)];
const TEST: &[Reading] =
    &[(0.0, 0, 50 << 20, 0), (5.0, 2_000_000_000, 60 << 20, 0), (10.0, 4_000_000_000, 60 << 20, 0)];

/// A job of a build then a test, the test starting `gap` s after the build ends.
fn two_steps(gap: f64) -> Vec<Entry> {
    entries_of(&job(&[("build", 0.0, 10.0, BUILD), ("test", 10.0 + gap, 10.0, TEST)], 4))
}

fn diff(before: &[Entry], after: &[Entry]) -> RunDiff {
    let steps = |e: &[Entry]| e.iter().map(|e| e.step.clone()).collect::<Vec<_>>();
    RunDiff::between(&steps(before), &steps(after)).with_totals(JobTotals::of(before), JobTotals::of(after))
}

#[test]
fn the_same_job_twice_is_the_same_within_noise() {
    let (a, b) = (two_steps(0.0), two_steps(0.0));
    let d = diff(&a, &b);
    let totals = d.totals.as_ref().unwrap();
    assert_eq!(totals.before.wall_seconds, Some(20.0));
    assert_eq!(totals.before.cpu_seconds, Some(12.0));
    assert_eq!(totals.before.memory_peak_bytes, Some(f64::from(200 << 20)));
    assert_eq!(totals.verdict, DiffVerdict::SameWithinNoise, "{}", totals.reason);
    assert!(!d.heavier());
}

#[test]
fn a_job_whose_steps_are_unchanged_but_waits_between_them_is_heavier() {
    // Every step the same; 10 s between them: only the job's wall grew.
    let d = diff(&two_steps(0.0), &two_steps(10.0));
    assert!(d.steps.iter().all(|s| s.verdict == DiffVerdict::SameWithinNoise), "{}", d.render_text());
    let totals = d.totals.as_ref().unwrap();
    assert_eq!(totals.verdict, DiffVerdict::Heavier, "{}", totals.reason);
    let wall = totals.fields.iter().find(|f| f.field == "job.wallSeconds").unwrap();
    assert!(wall.significant && wall.change == Some(10.0), "{wall:?}");
    assert!(d.heavier(), "--fail-if-heavier gates on the totals");
    let text = d.render_text();
    assert!(text.contains("stepmon diff: the jobs' totals\n  verdict  heavier: job wall time +50.0%"), "{text}");
    // Without the totals the same diff sees nothing heavier.
    let steps = |e: &[Entry]| e.iter().map(|e| e.step.clone()).collect::<Vec<_>>();
    assert!(!RunDiff::between(&steps(&two_steps(0.0)), &steps(&two_steps(10.0))).heavier());
}

#[test]
fn the_same_steps_run_at_once_halve_the_wall_and_add_their_memory() {
    // The same two steps run at once: the job's wall halves, its peak is
    // what both held at the same time (200 + 60 MiB), more than either's.
    let parallel = entries_of(&job(&[("build", 0.0, 10.0, BUILD), ("test", 0.0, 10.0, TEST)], 4));
    let d = diff(&two_steps(0.0), &parallel);
    let totals = d.totals.as_ref().unwrap();
    assert_eq!(totals.after.wall_seconds, Some(10.0));
    assert_eq!(totals.after.memory_peak_bytes, Some(f64::from(260 << 20)));
    assert_eq!(totals.verdict, DiffVerdict::Mixed, "{}", totals.reason);
}
