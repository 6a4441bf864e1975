//! Runs measured without a cgroup of their own (the "never refuses a step"
//! ladder): the summary from each group's rung, the labels in the text, the
//! verdicts, every export and `diff`. Input: a CPU-bound step recorded on
//! this repo's hybrid host inside a simulated container (read-only
//! cgroupfs: CPU and IO from the process tree, stall from the root cgroup,
//! i.e. the whole machine), beside the same workload recorded in its own
//! cgroup, and copies edited to hold an enclosing cgroup's memory.

use std::path::PathBuf;

use serde_json::Value;
use stepmon_report::diff::{Comparability, StepDiff};
use stepmon_report::export::{self, Format};
use stepmon_report::source::{Bound, EnclosingCgroup, Group, Rung, Source};
use stepmon_report::verdict::Bottleneck;
use stepmon_report::{RunDocument, Step};

fn data(path: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const CONTAINER: &str = "runs/container-process-tree-cpu-3s.json";
const OWN_CGROUP: &str = "runs/hybrid-cpu-3s.json";

fn document(path: &str) -> RunDocument {
    serde_json::from_str(&data(path)).unwrap()
}

#[test]
fn the_summary_takes_each_group_from_its_rung() {
    let doc = document(CONTAINER);
    let run = doc.stepmon.as_ref().unwrap();
    assert_eq!(run.sources.rung(Group::Cpu), Some(Rung::ProcessTree));
    assert_eq!(run.sources.rung(Group::Pressure), Some(Rung::Machine));
    assert!(doc.resource_usage.samples.is_empty(), "no BuildKit samples without a step cgroup");
    let step = Step::from_run(&doc);
    let tree = run.process_tree.unwrap();
    assert_eq!(step.summary.cpu.usage_seconds, Some(tree.cpu_seconds()));
    assert_eq!(step.summary.cpu.user_seconds, Some(tree.user_seconds));
    let wall = step.wall_seconds.unwrap();
    let cores = step.summary.cpu.average_cores.unwrap();
    assert!((cores - tree.cpu_seconds() / wall).abs() < 1e-9);
    assert_eq!(step.summary.io.write_bytes, Some(tree.block_write_bytes));
    // The enclosing (root) cgroup's own CPU includes everyone's: it is not
    // the step's CPU.
    let around = run.enclosing_cgroup.as_ref().unwrap().cpu_seconds_without_stepmon().unwrap();
    assert!(around > tree.cpu_seconds(), "{around} vs {}", tree.cpu_seconds());
    // The stored summary is what the report recomputes.
    assert_eq!(step.summary, run.summary);
    // Throttling is the step cgroup's cpu controller's: not measured here.
    assert_eq!(step.summary.cpu.throttled_seconds, None);
}

#[test]
fn the_text_labels_lines_and_the_verdicts_do_not_claim_the_machines_stall() {
    let step = Step::from_run(&document(CONTAINER));
    let verdicts = step.verdicts();
    let text = stepmon_report::text::render(&step, &verdicts);
    let line = |start: &str| text.lines().find(|l| l.starts_with(start)).unwrap_or_else(|| panic!("{start}: {text}"));
    assert!(line("  cpu ").ends_with("[process tree]"), "{text}");
    assert!(line("  io ").ends_with("[process tree]"), "{text}");
    assert!(line("  stall ").ends_with("[whole machine]"), "{text}");
    assert!(line("  tree ").contains("1 process reaped"), "{text}");
    assert!(line("  around ").contains("every process on the machine"), "{text}");
    // The machine's stall is no bottleneck of the step's.
    assert_eq!(verdicts.bottleneck.class, Bottleneck::Unknown, "{}", verdicts.bottleneck.reason);
    assert!(verdicts.bottleneck.reason.contains("only the whole machine's"), "{}", verdicts.bottleneck.reason);
    assert!(!verdicts.machine.reason.contains("outside the step"), "{}", verdicts.machine.reason);
}

#[test]
fn every_export_carries_the_sources() {
    let step = Step::from_run(&document(CONTAINER));
    let steps = std::slice::from_ref(&step);
    let om = export::render(Format::OpenMetrics, steps);
    assert!(om.contains(r#"stepmon_step_source_info{"#), "{om}");
    assert!(om.lines().any(|l| l.contains(r#"group="cpu""#) && l.contains(r#"rung="processTree""#)), "{om}");
    let trace: Value = serde_json::from_str(&export::render(Format::Trace, steps)).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let slice = events.iter().find(|e| e["ph"] == "X").unwrap();
    assert_eq!(slice["args"]["sources"]["cpu"]["rung"], "processTree", "{slice}");
    for format in [Format::Markdown, Format::Html] {
        let out = export::render(format, steps);
        assert!(out.contains("(process tree)"), "{format:?}: {out}");
        assert!(out.contains("(whole machine)"), "{format:?}");
    }
    // A step in its own cgroup has no such labels.
    let own = Step::from_run(&document(OWN_CGROUP));
    assert!(!export::render(Format::Markdown, std::slice::from_ref(&own)).contains("(process tree)"));
}

#[test]
fn diff_does_not_compare_numbers_from_different_rungs() {
    let own = Step::from_run(&document(OWN_CGROUP));
    let container = Step::from_run(&document(CONTAINER));
    let diff = StepDiff::between(&own, &container);
    let cpu = diff.fields.iter().find(|f| f.field == "cpu.usageSeconds").unwrap();
    assert_eq!(cpu.comparability, Comparability::DifferentSources, "{cpu:?}");
    assert_eq!(cpu.change, None);
    assert!(!cpu.significant);
    assert!(
        diff.warnings
            .iter()
            .any(|w| w
                .contains("CPU time not comparable: measured from the step cgroup before and the process tree after")),
        "{:?}",
        diff.warnings
    );
    // Wall time is the same quantity whatever the placement.
    let wall = diff.fields.iter().find(|f| f.field == "wallSeconds").unwrap();
    assert_eq!(wall.comparability, Comparability::Compared);
    // The same placement twice compares as before.
    let same = StepDiff::between(&container, &container);
    let cpu = same.fields.iter().find(|f| f.field == "cpu.usageSeconds").unwrap();
    assert_eq!(cpu.comparability, Comparability::Compared);
}

/// The container recording with an enclosing cgroup that accounts memory:
/// `memory.current` sampled at `currents` (bytes), `memory.peak` as given.
fn with_enclosing_memory(currents: &[u64], peaks: Option<(u64, u64)>, reset: Option<u64>) -> RunDocument {
    let mut doc = document(CONTAINER);
    let run = doc.stepmon.as_mut().unwrap();
    let enclosing = run.enclosing_cgroup.as_mut().unwrap();
    let mut e = EnclosingCgroup::default();
    e.cgroup = "/sys/fs/cgroup/docker/abc".into();
    e.other_processes_at_start = Some(3);
    e.memory_peak_since_start = reset;
    e.samples.clone_from(&enclosing.samples);
    let last = e.samples.len() - 1;
    for (i, sample) in e.samples.iter_mut().enumerate() {
        sample.stepmon.memory_current = Some(currents[i.min(currents.len() - 1)]);
        if let Some((first, end)) = peaks {
            let mut memory = sample.memory_stat.unwrap_or_default();
            memory.peak = Some(if i == last { end } else { first });
            sample.memory_stat = Some(memory);
        }
    }
    let bound = match (reset, peaks) {
        (Some(_), _) => Bound::Exact,
        (None, Some((first, end))) if end > first => Bound::Exact,
        _ => Bound::LowerBound,
    };
    *enclosing = e;
    let covers = enclosing.covers();
    run.sources.set(
        Group::Memory,
        Some(if bound == Bound::Exact {
            Source::exact(Rung::EnclosingCgroup, covers)
        } else {
            Source::lower_bound(Rung::EnclosingCgroup, covers)
        }),
    );
    doc
}

#[test]
fn an_enclosing_memory_peak_is_exact_or_a_lower_bound_and_says_so() {
    const MIB: u64 = 1 << 20;
    // Only memory.current samples: the largest is a lower bound.
    let step = Step::from_run(&with_enclosing_memory(&[10 * MIB, 80 * MIB, 40 * MIB], None, None));
    assert_eq!(step.summary.memory.peak_bytes, Some(80 * MIB));
    let verdicts = step.verdicts();
    let text = stepmon_report::text::render(&step, &verdicts);
    let memory = text.lines().find(|l| l.starts_with("  memory ")).unwrap();
    assert!(memory.contains("peak ≥ 80.0 MiB") && memory.ends_with("[enclosing cgroup, lower bound]"), "{memory}");
    assert!(verdicts.memory.reason.contains("lower bound"), "{}", verdicts.memory.reason);
    assert!(verdicts.memory.reason.contains("held 3 other processes"), "{}", verdicts.memory.reason);
    let md = export::render(Format::Markdown, std::slice::from_ref(&step));
    assert!(md.contains("≥ 80.0 MiB (enclosing cgroup, lower bound)"), "{md}");
    // memory.peak rose during the step: its new value is the step window's peak.
    let step = Step::from_run(&with_enclosing_memory(&[10 * MIB, 20 * MIB], Some((50 * MIB, 90 * MIB)), None));
    assert_eq!(step.summary.memory.peak_bytes, Some(90 * MIB));
    // memory.peak did not rise: it may come from before the step; the samples decide.
    let step = Step::from_run(&with_enclosing_memory(&[10 * MIB, 20 * MIB], Some((90 * MIB, 90 * MIB)), None));
    assert_eq!(step.summary.memory.peak_bytes, Some(20 * MIB));
    // memory.peak reset for stepmon's own fd (6.12+): exact.
    let step = Step::from_run(&with_enclosing_memory(&[10 * MIB], Some((90 * MIB, 90 * MIB)), Some(33 * MIB)));
    assert_eq!(step.summary.memory.peak_bytes, Some(33 * MIB));
    assert!(!stepmon_report::text::render(&step, &step.verdicts()).contains("peak ≥"));
}

#[test]
fn documents_without_sources_read_as_before() {
    // Recorded before the ladder existed: everything is the step's cgroup.
    let doc = document(OWN_CGROUP);
    assert!(doc.stepmon.as_ref().unwrap().sources.is_empty());
    let step = Step::from_run(&doc);
    let plain = stepmon_report::summary::of(&doc.usage(), step.wall_seconds);
    assert_eq!(step.summary, plain);
    assert!(!stepmon_report::text::render(&step, &step.verdicts()).contains('['));
}
