//! The build's analysis on constructed jobs: the critical path, the peak
//! moment, the remainder and the advice, with two actions of one name.

use jiff::{SignedDuration, Timestamp};
use stepmon_model::action::{Action, CrateBuild, CrateKind, Probe};
use stepmon_model::document::{RunDocument, RunInfo};
use stepmon_model::sample::{StepSample, StepUsage};

use super::*;
use crate::job::{Entry, StepStatus};
use crate::step::Step;

const MIB: u64 = 1 << 20;

fn t0() -> Timestamp {
    "2026-03-01T10:00:00Z".parse().unwrap()
}

fn at(seconds: f64) -> Timestamp {
    t0().checked_add(SignedDuration::from_secs_f64(seconds)).unwrap()
}

fn sample(seconds: f64, memory: u64) -> StepSample {
    serde_json::from_value(serde_json::json!({
        "timestamp": at(seconds).to_string(),
        "pidsStat": {},
        "stepmon": {"memoryCurrent": memory},
    }))
    .unwrap()
}

/// A step from `start` to `end` (seconds since the build's start) with
/// `cpu` seconds and a memory peak of `peak`, its samples `samples`.
fn step(name: &str, start: f64, end: f64, cpu: f64, peak: u64, samples: Vec<StepSample>) -> Step {
    let mut info = RunInfo::default();
    info.name = Some(name.to_owned());
    info.command = vec![name.to_owned()];
    (info.start, info.end, info.exit_code) = (Some(at(start)), Some(at(end)), Some(0));
    info.summary.wall_seconds = Some(end - start);
    let mut usage = StepUsage::default();
    usage.resource_usage.samples = samples;
    let mut step = Step::from_run_document(RunDocument::new(usage, info));
    step.summary.cpu.usage_seconds = Some(cpu);
    step.summary.memory.peak_bytes = Some(peak);
    step
}

fn entry(step: Step, action: Option<Action>, exit_code: i32) -> Entry {
    let mut step = step;
    if let Some(a) = action.as_ref().filter(|a| a.names_what_it_builds()) {
        step.name = a.to_string();
    }
    Entry {
        step,
        status: StepStatus::Ended { exit_code },
        from: "job.jsonl".to_owned(),
        group: None,
        collected: None,
        action,
    }
}

fn krate(name: &str, kind: CrateKind) -> Option<Action> {
    let mut c = CrateBuild::new(name.to_owned(), kind, "rustc".to_owned());
    c.version = Some("1.0.0".to_owned());
    Some(Action::Crate(c))
}

/// An action of `name` from `start` to `end` with `cpu` and `peak` MiB.
fn action(name: &str, start: f64, end: f64, cpu: f64, peak_mib: u64) -> Entry {
    entry(step(name, start, end, cpu, peak_mib * MIB, Vec::new()), krate(name, CrateKind::Lib), 0)
}

fn outer(wall: f64, cpu: f64, samples: Vec<StepSample>) -> Entry {
    let peak = samples.iter().filter_map(|s| s.stepmon.memory_current).max().unwrap_or(0);
    entry(step("cargo", 0.0, wall, cpu, peak, samples), None, 0)
}

/// The names of the actions at `indices`.
fn names(build: &Build, indices: &[usize]) -> Vec<String> {
    indices.iter().map(|&i| build.row(&build.actions[i]).label.clone()).collect()
}

#[test]
fn the_critical_path_walks_back_from_the_last_end() {
    let entries = vec![
        outer(10.0, 9.0, Vec::new()),
        action("a", 0.1, 3.0, 2.8, 50),
        action("b", 0.1, 1.0, 0.9, 20),
        action("d", 1.0, 2.0, 1.0, 30),
        // Starts 10 ms after a ends: waited for it.
        action("c", 3.01, 6.0, 2.9, 80),
        action("e", 6.02, 9.0, 2.9, 60),
        // Ran beside c, ended before e started, but after c: not c's wait.
        action("side", 3.5, 5.0, 1.4, 10),
    ];
    // Another build's action in the same record, after this one ended.
    let mut entries = entries;
    entries.push(action("later", 12.0, 13.0, 1.0, 10));
    let build = Build::of_entries(&entries, 0, &[]);
    assert_eq!(build.actions.len(), 6);
    let path = &build.critical_path;
    assert_eq!(names(&build, &path.actions), ["a 1.0.0 (lib)", "c 1.0.0 (lib)", "e 1.0.0 (lib)"]);
    assert!((path.action_seconds - (2.9 + 2.99 + 2.98)).abs() < 1e-6, "{path:?}");
    // 0.1 s before a, 10 ms and 20 ms between, 1 s after e.
    assert!((path.outside_seconds - 1.13).abs() < 1e-6, "{path:?}");
    // Idle: every gap (10 ms and 20 ms on the chain too), the stretches of
    // 50 ms or more listed, the longest first.
    assert_eq!(build.remainder.idle_stretches, [(9.0, 10.0), (0.0, 0.1)]);
    assert!((build.remainder.idle_seconds.unwrap() - 1.13).abs() < 1e-6, "{:?}", build.remainder);
    assert_eq!(build.most_at_once, 2);
}

#[test]
fn two_actions_of_one_name_stay_apart_by_their_place() {
    // serde built twice (a host and a target build): the second is longer
    // and heavier; every ranking finds it by its place.
    let entries = vec![
        outer(6.0, 5.0, Vec::new()),
        action("serde", 0.0, 1.0, 0.9, 40),
        action("serde", 1.5, 5.0, 3.4, 120),
        action("other", 0.0, 1.4, 1.3, 60),
    ];
    let build = Build::of_entries(&entries, 0, &[]);
    let [first, second] = [0, 1].map(|i| build.actions.iter().position(|a| build.row(a).entry == i + 1).unwrap());
    assert_eq!(build.by_wall()[0], second);
    assert_eq!(build.by_peak()[0], second);
    assert_eq!(*build.by_wall().last().unwrap(), first);
    assert_eq!(build.row(&build.actions[second]).wall_seconds, Some(3.5));
    // The chain: serde (second) after `other`, which ended last before it.
    let path: Vec<usize> = build.critical_path.actions.iter().map(|&i| build.row(&build.actions[i]).entry).collect();
    assert_eq!(path, [3, 2]);
    // The largest peak is named in the advice by its action.
    assert_eq!(build.parallelism.largest_input.as_deref(), Some("serde 1.0.0 (lib)"));
    assert_eq!(build.parallelism.instances, Some(3));
    assert_eq!(build.parallelism.observed_concurrency, Some(2));
    assert_eq!(build.parallelism.command.as_deref(), Some("rustc"));
}

#[test]
fn the_peak_moment_names_what_ran_then_and_the_rest_is_the_remainder() {
    let samples = vec![sample(1.0, 100 * MIB), sample(2.0, 400 * MIB), sample(3.0, 200 * MIB)];
    let mut entries = vec![
        outer(4.0, 10.0, samples),
        action("serde_derive", 0.5, 2.5, 1.9, 193),
        action("regex-syntax", 1.5, 3.5, 1.8, 151),
        action("early", 0.0, 1.9, 1.0, 300),
    ];
    // A probe: not an action, its CPU not the remainder's.
    let probe = Action::Probe(Probe::new("rustc".to_owned(), vec!["version".to_owned()]));
    entries.push(entry(step("rustc", 0.0, 0.1, 0.5, MIB, Vec::new()), Some(probe), 0));
    let build = Build::of_entries(&entries, 0, &[]);
    assert_eq!(build.actions.len(), 3);
    assert_eq!((build.probes, build.probe_cpu_seconds), (1, 0.5));
    let peak = build.memory.peak.as_ref().unwrap();
    assert_eq!((peak.at, peak.bytes), (2.0, 400 * MIB));
    assert_eq!(names(&build, &peak.running), ["serde_derive 1.0.0 (lib)", "regex-syntax 1.0.0 (lib)"]);
    assert_eq!(peak.outside_bytes, (400 - 193 - 151) * MIB);
    assert_eq!(build.remainder.memory_at_peak_bytes, Some(56 * MIB));
    // CPU: 10 less 1.9 + 1.8 + 1.0 of the actions and 0.5 of the probe.
    assert!((build.remainder.cpu_seconds.unwrap() - 4.8).abs() < 1e-9);
    // The peaks together were highest when regex-syntax joined the other two.
    let together = build.memory.most_together.as_ref().unwrap();
    assert_eq!((together.at, together.bytes), (1.5, (300 + 193 + 151) * MIB));
    assert_eq!(
        names(&build, &together.running),
        ["early 1.0.0 (lib)", "serde_derive 1.0.0 (lib)", "regex-syntax 1.0.0 (lib)"]
    );
    // The step curve falls back to nothing after the last end.
    assert_eq!(build.memory.together.last().map(|p| (p.t, p.value)), Some((3.5, 0.0)));
}

#[test]
fn a_failed_action_is_notable_and_the_outer_step_is_found() {
    let mut entries = vec![outer(3.0, 2.0, Vec::new())];
    // Overlapping: none waited for another, the chain is short.
    for i in 0..20 {
        let t = f64::from(i) * 0.01;
        entries.push(action(&format!("c{i}"), t, t + 0.5, 0.4, 10 + u64::try_from(i).unwrap()));
    }
    entries.push(entry(step("broken", 2.0, 2.2, 0.1, MIB, Vec::new()), krate("broken", CrateKind::Bin), 1));
    let build = Build::of_entries(&entries, 0, &[]);
    let failed = build.failed();
    assert_eq!(names(&build, &failed), ["broken 1.0.0 (bin)"]);
    assert_eq!(build.actions[failed[0]].kind, ActionKind::Bin);
    assert_eq!(names(&build, &build.critical_path.actions), ["c19 1.0.0 (lib)", "broken 1.0.0 (bin)"]);
    // 3 longest (c0, c1, c2: ties go by place), 3 heaviest (c19, c18,
    // c17), the critical path (c19, broken), the failed one (broken).
    let notable = build.notable(3);
    assert_eq!(notable.len(), 7, "{:?}", names(&build, &notable));
    assert!(notable.contains(&failed[0]));
    // The 3 heaviest (c19, c18, c17) are among them.
    let heaviest = names(&build, &build.by_peak()[..3]);
    assert_eq!(heaviest, ["c19 1.0.0 (lib)", "c18 1.0.0 (lib)", "c17 1.0.0 (lib)"]);
    assert!(build.by_peak()[..3].iter().all(|i| notable.contains(i)));
}

#[test]
fn a_record_is_read_as_a_build() {
    use stepmon_model::job::{Record, StepEnd, StepStart};
    let line = |r: Record| serde_json::to_string(&r).unwrap() + "\n";
    let mut outer = StepStart::new(7, at(0.0), "cargo".to_owned(), vec!["cargo".to_owned(), "build".to_owned()]);
    outer.host = "h".to_owned();
    let mut compile = StepStart::new(8, at(0.5), "rustc".to_owned(), vec!["rustc".to_owned()]);
    compile.action = krate("app", CrateKind::Bin);
    let mut text = line(Record::StepStart(outer.clone())) + &line(Record::StepStart(compile.clone()));
    text += &line(Record::StepEnd(StepEnd::new(compile.step.clone(), at(1.5), 0)));
    text += &line(Record::StepEnd(StepEnd::new(outer.step.clone(), at(2.0), 0)));
    let record = crate::job::read(&text);
    for named in [None, Some(outer.step.as_str())] {
        let build = Build::of_record(&record, "job.jsonl", named).unwrap();
        assert_eq!(build.row(&build.actions[0]).label, "app 1.0.0 (bin)");
        assert_eq!(build.job.steps[build.outer].label, "cargo (cargo build)");
        assert_eq!(build.actions[0].start, 0.5);
    }
    assert_eq!(Build::of_record(&record, "j", Some("1.2")), Err(NoBuild::NoSuchStep("1.2".to_owned())));
}

#[test]
fn stepmons_own_cpu_is_summed_over_the_launchers_that_recorded_it() {
    let with_collector = |mut e: Entry, cpu: f64| {
        e.step.run.as_mut().expect("a run's step").collector.cpu_seconds = Some(cpu);
        e
    };
    let probe = Action::Probe(Probe::new("rustc".to_owned(), vec!["version".to_owned()]));
    let entries = vec![
        with_collector(outer(4.0, 10.0, Vec::new()), 0.02),
        with_collector(action("a", 0.5, 2.5, 1.9, 10), 0.005),
        with_collector(action("b", 1.0, 3.0, 1.8, 10), 0.007),
        // An earlier version's step, without its collector: not counted.
        action("c", 1.0, 3.0, 1.8, 10),
        with_collector(entry(step("rustc", 0.0, 0.1, 0.1, MIB, Vec::new()), Some(probe), 0), 0.003),
    ];
    let own = Build::of_entries(&entries, 0, &[]).own_cost;
    assert_eq!(own.launchers, 3, "{own:?}");
    assert!((own.launchers_cpu_seconds.unwrap() - 0.015).abs() < 1e-9, "{own:?}");
    assert_eq!(own.build_cpu_seconds, Some(0.02));
    // No step recorded one: nothing, not a zero.
    let own = Build::of_entries(&[outer(4.0, 10.0, Vec::new()), action("a", 0.5, 2.5, 1.9, 10)], 0, &[]).own_cost;
    assert_eq!((own.launchers, own.launchers_cpu_seconds, own.build_cpu_seconds), (0, None, None));
}
