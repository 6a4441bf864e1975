//! Two BuildKit builds compared step by step (`stepmon diff A.dockerbuild
//! B.dockerbuild`): history entries are job entries, paired by name with
//! their platform, the build's totals compared as a job's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::bundle::{TWO_PLATFORM, V, Writer, data, many_platforms, one, stream, three_steps, v};
use stepmon_import::history::{self, Build};
use stepmon_report::Step;
use stepmon_report::diff::{DiffVerdict, JobTotals, RunDiff};
use stepmon_report::job::Entry;

fn steps(entries: &[Entry]) -> Vec<Step> {
    entries.iter().map(|e| e.step.clone()).collect()
}

fn diff(before: &Build, after: &Build) -> RunDiff {
    let (a, _) = history::diff_entries(std::slice::from_ref(before));
    let (b, _) = history::diff_entries(std::slice::from_ref(after));
    RunDiff::between(&steps(&a), &steps(&b)).with_totals(JobTotals::of(&a), JobTotals::of(&b))
}

fn build_of(vs: &[V]) -> Build {
    let mut w = Writer::default();
    w.record("b", vec![(history::bundle::STATUS, stream(vs), None)], None);
    one(&w.finish())
}

#[test]
fn a_step_that_took_longer_is_heavier_and_so_is_the_build() {
    let before = build_of(&three_steps());
    // The same build with `RUN make` 2–60 s instead of 2–20 s, and its
    // install step run instead of cached.
    let after = build_of(&[
        v(1, "[linux/amd64 1/3] FROM docker.io/library/alpine", &[], 0.5, 2.0),
        v(2, "[linux/amd64 2/3] RUN make", &[1], 2.0, 60.0),
        v(3, "[linux/amd64 3/3] RUN make install", &[2], 60.0, 61.0),
    ]);
    let d = diff(&before, &after);
    assert!(d.only_before.is_empty() && d.only_after.is_empty(), "{d:?}");
    assert_eq!(d.steps.len(), 3);
    let make =
        d.steps.iter().find(|s| s.after.name == "[2/3] RUN make [linux/amd64]").expect("named with its platform");
    assert_eq!(make.before.name, make.after.name);
    assert_eq!(make.verdict, DiffVerdict::Heavier, "{}", make.render_text());
    let wall = make.fields.iter().find(|f| f.field == "wallSeconds").unwrap();
    assert_eq!((wall.before, wall.after), (Some(18.0), Some(58.0)));
    assert!(wall.significant);
    // The status stream's times are the step's: no BuildKit-estimate warning.
    assert!(!make.warnings.iter().any(|w| w.contains("estimated")), "{:?}", make.warnings);
    let totals = d.totals.as_ref().unwrap();
    assert_eq!(totals.verdict, DiffVerdict::Heavier, "{}", totals.reason);
    assert!(d.heavier());
    // The same build against itself: nothing heavier.
    assert!(!diff(&before, &before).heavier());
}

#[test]
fn each_platforms_step_is_paired_with_the_same_platforms() {
    // Four same-named RUN steps, one per platform, each of a different wall
    // time (8 + i s); the after side lists them the other way round.
    let build = one(&many_platforms());
    let (before, _) = history::diff_entries(std::slice::from_ref(&build));
    let (mut after, _) = history::diff_entries(std::slice::from_ref(&build));
    after.reverse();
    let d = RunDiff::between(&steps(&before), &steps(&after));
    assert_eq!(d.steps.len(), 4);
    for s in &d.steps {
        assert_eq!(s.before.name, s.after.name);
        assert_eq!(s.verdict, DiffVerdict::SameWithinNoise, "{}", s.render_text());
    }
}

#[test]
fn the_real_two_platform_build_against_itself_is_the_same() {
    let build = one(&data(TWO_PLATFORM));
    let d = diff(&build, &build);
    assert_eq!(d.steps.len(), build.steps.len());
    assert!(d.steps.iter().all(|s| s.verdict != DiffVerdict::Heavier));
    let names: Vec<&str> = d.steps.iter().map(|s| s.after.name.as_str()).collect();
    assert!(names.contains(&"[2/2] RUN echo \"Hello world!\" (Dockerfile:3) [linux/arm64]"), "{names:?}");
    assert!(!d.heavier());
}

#[test]
fn steps_that_never_completed_are_left_out_by_name() {
    let build = one(&data(common::bundle::FAILED));
    let (kept, left_out) = history::diff_entries(std::slice::from_ref(&build));
    assert_eq!(kept.len() + left_out.len(), build.steps.len());
    assert_eq!(left_out, ["[stage-2 2/2] COPY --from=build /usr/bin/app /bin/app"]);
}
