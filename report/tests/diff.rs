//! `StepDiff` on the recorded runs and edited copies of them
//! (tests/data/diff, see its README).

use std::path::PathBuf;

use stepmon_model::document::RunDocument;
use stepmon_model::verdict::MachineLoad;
use stepmon_report::Step;
use stepmon_report::diff::{
    BUSY_WIDENING_TIME, Comparability, DiffVerdict, Direction, FieldDiff, StepDiff, WALL_RELATIVE,
};

fn data(path: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn step(path: &str) -> Step {
    let document: RunDocument = serde_json::from_str(&data(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    Step::from_run(&document)
}

fn field<'a>(diff: &'a StepDiff, key: &str) -> &'a FieldDiff {
    diff.fields.iter().find(|f| f.field == key).unwrap_or_else(|| panic!("no field {key}"))
}

const RUNS: [&str; 4] = [
    "runs/pure-v2-6.1-oom-throttled-io.json",
    "runs/hybrid-cpu-3s.json",
    "runs/hybrid-exit7.json",
    "runs/hybrid-net-isolated.json",
];
const PURE: &str = "runs/pure-v2-6.1-oom-throttled-io.json";

#[test]
fn same_run_nothing_significant() {
    for path in RUNS {
        let s = step(path);
        let diff = StepDiff::between(&s, &s);
        assert_eq!(diff.verdict, DiffVerdict::SameWithinNoise, "{path}: {}", diff.reason);
        assert!(diff.drivers.is_empty());
        assert_eq!(diff.significant().count(), 0);
        for f in diff.fields.iter().filter(|f| f.comparability == Comparability::Compared) {
            assert_eq!(f.change, Some(0.0), "{path} {}", f.field);
            assert_eq!(f.direction, Direction::WithinNoise);
        }
        // Same command, same host: no warning except unknown machine load.
        assert!(diff.warnings.iter().all(|w| w.contains("machine's load is unknown")), "{path}: {:?}", diff.warnings);
    }
    // Imported BuildKit steps: stepmon-import's tests/provenance_diff.rs.
}

#[test]
fn cpu_plus_50_percent_is_heavier() {
    let before = step(PURE);
    let after = step("diff/pure-v2-cpu-plus-50.json");
    let diff = StepDiff::between(&before, &after);
    assert_eq!(diff.verdict, DiffVerdict::Heavier, "{}", diff.reason);
    let cpu = field(&diff, "cpu.usageSeconds");
    assert!(cpu.significant);
    assert_eq!(cpu.direction, Direction::Up);
    let relative = cpu.relative_change.unwrap();
    assert!((relative - 0.5).abs() < 1e-6, "{relative}");
    assert!((cpu.change.unwrap() - cpu.before.unwrap() * 0.5).abs() < 1e-6);
    for key in ["cpu.usageSeconds", "cpu.userSeconds", "cpu.systemSeconds"] {
        assert!(diff.drivers.contains(&key), "{:?}", diff.drivers);
    }
    // Derived: significant, but not a driver.
    let cores = field(&diff, "cpu.averageCores");
    assert!(cores.significant && cores.derived);
    assert!(!diff.drivers.contains(&"cpu.averageCores"));
    // Nothing else moved.
    assert!(!field(&diff, "wallSeconds").significant);
    assert!(!field(&diff, "memory.peakBytes").significant);
    assert!(diff.reason.starts_with("heavier: CPU "), "{}", diff.reason);
    // The reverse is lighter.
    assert_eq!(StepDiff::between(&after, &before).verdict, DiffVerdict::Lighter);
}

#[test]
fn busy_machine_widens_the_wall_tolerance() {
    let before = step(PURE);
    let quiet = StepDiff::between(&before, &step("diff/pure-v2-wall-plus-30.json"));
    // The recorded run's machine ran nothing else: its CPU pressure is the
    // step's own (throttled by its cpu.max), which does not widen anything.
    assert_eq!(quiet.before.busy_share, Some(0.0));
    assert_eq!(quiet.busy_share, 0.0);
    let wall = field(&quiet, "wallSeconds");
    assert!((wall.relative_change.unwrap() - 0.3).abs() < 1e-9);
    assert_eq!(wall.tolerance.unwrap().relative, WALL_RELATIVE);
    assert!(wall.significant, "+30 % against a 10 % tolerance");
    assert_eq!(quiet.verdict, DiffVerdict::Heavier);
    assert_eq!(quiet.drivers, ["wallSeconds"], "average cores fell, but it is derived");

    let busy = StepDiff::between(&before, &step("diff/pure-v2-wall-plus-30-busy.json"));
    assert_eq!(busy.after.machine_load, MachineLoad::Busy);
    let share = busy.after.busy_share.unwrap();
    assert!(share > 0.5 && share < 0.6, "{share}");
    assert_eq!(busy.busy_share, share);
    let wall = field(&busy, "wallSeconds");
    let tolerance = wall.tolerance.unwrap();
    assert!((tolerance.relative - (WALL_RELATIVE + BUSY_WIDENING_TIME * share)).abs() < 1e-12);
    assert!((tolerance.widened_by - share).abs() < 1e-12);
    assert!(!wall.significant, "+30 % is within the widened tolerance");
    assert_eq!(busy.verdict, DiffVerdict::SameWithinNoise, "{}", busy.reason);
    assert!(busy.reason.contains("widened"), "{}", busy.reason);
    // Memory is not widened by a busy machine.
    let memory = field(&busy, "memory.peakBytes").tolerance.unwrap();
    assert_eq!(memory.widened_by, 0.0);
}

#[test]
fn field_missing_on_one_side_is_not_comparable() {
    let before = step(PURE);
    let after = step("diff/pure-v2-no-memory.json");
    let diff = StepDiff::between(&before, &after);
    let peak = field(&diff, "memory.peakBytes");
    assert_eq!(peak.comparability, Comparability::MissingAfter);
    assert_eq!(peak.before, Some(50_331_648.0));
    assert_eq!((peak.after, peak.change, peak.relative_change), (None, None, None));
    assert!(!peak.significant);
    assert_eq!(peak.direction, Direction::Unknown);
    assert_eq!(field(&diff, "memory.oomKills").comparability, Comparability::MissingAfter);
    // Not read as 0: the step did not get "lighter" on memory.
    assert_eq!(diff.verdict, DiffVerdict::SameWithinNoise, "{}", diff.reason);
    assert!(diff.warnings.iter().any(|w| w == "memory peak not comparable: not measured in the after run"));
    assert!(diff.warnings.iter().any(|w| w.starts_with("different controllers: cpu,io,memory,pids before")));
    let reverse = StepDiff::between(&after, &before);
    assert_eq!(field(&reverse, "memory.peakBytes").comparability, Comparability::MissingBefore);
    assert_eq!(reverse.verdict, DiffVerdict::SameWithinNoise);
    let text = diff.render_text();
    assert!(text.contains("not comparable"), "{text}");
}

#[test]
fn different_commands_and_hosts_warn() {
    let diff = StepDiff::between(&step(PURE), &step("runs/hybrid-cpu-3s.json"));
    let warned = |needle: &str| diff.warnings.iter().any(|w| w.contains(needle));
    assert!(warned("the commands differ"), "{:?}", diff.warnings);
    assert!(warned("different kernels: 6.1.0-57-amd64 before, 6.18.44-fc-v657 after"));
    assert!(warned("different cgroup layouts: unified before, hybrid after"));
    let exit = StepDiff::between(&step("runs/hybrid-cpu-3s.json"), &step("runs/hybrid-exit7.json"));
    assert!(exit.warnings.iter().any(|w| w == "different outcome: exit 0 before, exit 7 after"), "{:?}", exit.warnings);
}

#[test]
fn json_and_text() {
    let diff = StepDiff::between(&step(PURE), &step("diff/pure-v2-cpu-plus-50.json"));
    let json: serde_json::Value = serde_json::to_value(&diff).unwrap();
    assert_eq!(json["verdict"], "heavier");
    let cpu = json["fields"].as_array().unwrap().iter().find(|f| f["field"] == "cpu.usageSeconds").unwrap();
    assert_eq!(cpu["significant"], true);
    assert_eq!(cpu["comparability"], "compared");
    assert_eq!(cpu["direction"], "up");
    assert!(cpu["tolerance"]["threshold"].as_f64().unwrap() > 0.0);
    assert_eq!(json["before"]["origin"]["kind"], "stepmonRun");
    let text = diff.render_text();
    println!("{text}");
    let line = text.lines().find(|l| l.trim_start_matches(['*', ' ']).starts_with("CPU time")).unwrap();
    assert!(line.starts_with('*'), "{line}");
    assert!(line.contains("(+50.0%)"), "{line}");
    assert!(text.lines().nth(1).unwrap().contains("verdict  heavier"), "{text}");
}
