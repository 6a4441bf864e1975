//! Runs measured without a cgroup of their own (the "never refuses a step"
//! ladder): the summary from each group's rung, the labels in the text, the
//! verdicts and `diff` (the exports: stepmon-export's tests/sources.rs). Input: a CPU-bound step recorded on
//! this repo's hybrid host inside a simulated container (read-only
//! cgroupfs: CPU and IO from the process tree, stall from the root cgroup,
//! i.e. the whole machine), beside the same workload recorded in its own
//! cgroup, and copies edited to hold an enclosing cgroup's memory.

#[path = "common/sources.rs"]
mod sources;

use sources::{CONTAINER, OWN_CGROUP, document, with_enclosing_memory};
use stepmon_model::source::{Group, Rung};
use stepmon_model::verdict::Bottleneck;
use stepmon_report::Step;
use stepmon_report::diff::{Comparability, StepDiff};

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
    // The Markdown says so too: stepmon-export's tests/sources.rs.
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
    let plain = stepmon_model::summary::of(&doc.usage(), step.wall_seconds);
    assert_eq!(step.summary, plain);
    assert!(!stepmon_report::text::render(&step, &step.verdicts()).contains('['));
}
