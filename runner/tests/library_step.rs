//! A measured step run through the library alone (no CLI): the process
//! tree's sums, orphans counted and reaped, a double-forked daemon killed,
//! and the document's labels — once with a cgroup of the step's own where
//! this host allows one, once without (`CgroupMode::Never`), which works
//! for any user.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use stepmon_testsupport::skip;

use std::path::Path;
use std::time::{Duration, Instant};

use stepmon_model::source::Rung;
use stepmon_runner::{CgroupMode, StepOptions, prepare};

/// One step at a time: each test's numbers are read against a quiet machine.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(mode: CgroupMode, script: &str) -> stepmon_runner::Finished {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut options = StepOptions::new(["sh", "-c", script]);
    options.cgroup = mode;
    let prepared = prepare(options).unwrap();
    let mut finished = prepared.run().unwrap();
    // The summary is the report's to compute, as `stepmon run` does.
    stepmon_report::compose::complete(&mut finished.document);
    finished
}

/// A shell loop that burns about `iterations / 1e6` s of CPU here.
fn burn(iterations: u32) -> String {
    format!("i=0; while [ $i -lt {iterations} ]; do i=$((i+1)); done")
}

fn alive(pid: u32) -> bool {
    // A zombie still has a /proc entry; its state is Z.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
}

#[test]
fn exit_status_and_labels_without_a_cgroup() {
    let finished = run(CgroupMode::Never, "exit 3");
    assert_eq!(finished.exit_code, 3);
    let run = finished.document.stepmon.as_ref().unwrap();
    assert_eq!(run.exit_code, Some(3));
    assert_eq!(run.sources.rung(stepmon_model::source::Group::Cpu), Some(Rung::ProcessTree));
    assert_eq!(run.sources.rung(stepmon_model::source::Group::Io), Some(Rung::ProcessTree));
    assert!(finished.document.resource_usage.samples.is_empty(), "no step cgroup, no BuildKit samples");
    assert!(run.placement.starts_with("no cgroup of its own"), "{}", run.placement);
    assert_eq!(run.process_tree.unwrap().processes_reaped, 1);
    // The document round-trips through JSON with its labels.
    let json = serde_json::to_string(&finished.document).unwrap();
    let back: stepmon_model::document::RunDocument = serde_json::from_str(&json).unwrap();
    assert_eq!(back.stepmon.unwrap().sources, run.sources);
}

#[test]
fn an_orphan_is_counted_and_a_daemon_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let daemon_pid = dir.path().join("daemon.pid");
    // The subshell starts a CPU-burning job in the background and exits: the
    // job is orphaned and reparented to this process (the subreaper). The
    // daemon double-forks out of a new session and would outlive the step.
    let script =
        format!("( {} & ) ; setsid sh -c 'sleep 300 & echo $! > {}' ; sleep 1", burn(30_000), daemon_pid.display());
    for mode in [CgroupMode::Never, CgroupMode::Auto] {
        let started = Instant::now();
        let finished = run(mode, &script);
        assert_eq!(finished.exit_code, 0, "{mode:?}: {:?}", finished.messages);
        let run = finished.document.stepmon.as_ref().unwrap();
        let tree = run.process_tree.unwrap();
        // sh, the orphaned job, the daemon's sleep: at least three reaped.
        assert!(tree.processes_reaped >= 3, "{mode:?}: {tree:?}");
        // The orphan's loop ran to its end inside the step's second.
        assert!(tree.cpu_seconds() > 0.01, "{mode:?}: the orphan's CPU is missing: {tree:?}");
        let pid: u32 = std::fs::read_to_string(&daemon_pid).unwrap().trim().parse().unwrap();
        assert!(!alive(pid), "{mode:?}: the daemon {pid} survived the step");
        if mode == CgroupMode::Never {
            assert!(tree.leftovers_killed >= 1, "{mode:?}: {tree:?}");
            assert_eq!(run.summary.cpu.usage_seconds, Some(tree.cpu_seconds()));
        }
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}

#[test]
fn with_a_step_cgroup_the_tree_cross_checks_it() {
    if !rustix::process::geteuid().is_root() {
        skip::skip("with_a_step_cgroup_the_tree_cross_checks_it", "needs root to create cgroups");
        return;
    }
    let script = "j=0; while [ $j -lt 200 ]; do /bin/true; j=$((j+1)); done";
    let finished = run(CgroupMode::Require, script);
    let run = finished.document.stepmon.as_ref().unwrap();
    assert_eq!(run.sources.rung(stepmon_model::source::Group::Cpu), Some(Rung::CgroupV2), "{:?}", run.sources);
    let cgroup = run.summary.cpu.usage_seconds.unwrap();
    let tree = run.process_tree.unwrap().cpu_seconds();
    // 201 processes: the shell and 200 /bin/true, each reaped by the shell.
    assert!((tree - cgroup).abs() <= 0.05 * cgroup, "process tree {tree} s vs the step cgroup's cpu.stat {cgroup} s");
    // The run directory: the leaf's parent, or the leaf itself where the
    // parent could enable no controller for it (a hybrid host's cgroup2).
    let leaf = Path::new(&run.cgroup);
    let run_dir = if leaf.ends_with("step") { leaf.parent().unwrap() } else { leaf };
    assert!(!run_dir.exists(), "{} was not removed: {:?}", run_dir.display(), finished.messages);
}

#[test]
fn live_samples_arrive_as_taken_baseline_first() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (tx, rx) = std::sync::mpsc::channel();
    let mut options = StepOptions::new(["sleep", "0.7"]);
    options.live = Some(tx);
    let prepared = prepare(options).unwrap();
    // Received while the step runs, not only after it.
    let receiving = std::thread::spawn(move || {
        let first = rx.recv_timeout(Duration::from_secs(5)).expect("the baseline before the step ends");
        let at_first = Instant::now();
        let mut all = vec![first];
        all.extend(rx.iter());
        (all, at_first)
    });
    let finished = prepared.run().unwrap();
    let ended = Instant::now();
    let (live, at_first) = receiving.join().unwrap();
    assert!(ended.duration_since(at_first) > Duration::from_millis(300), "the baseline came live");
    let run = finished.document.stepmon.as_ref().unwrap();
    let recorded = if finished.document.resource_usage.samples.is_empty() {
        &run.enclosing_cgroup.as_ref().unwrap().samples
    } else {
        &finished.document.resource_usage.samples
    };
    // 250 ms fast start over 0.7 s: the baseline and at least two periodic samples.
    assert!(live.len() >= 3, "{} live samples", live.len());
    assert_eq!(live[0].sample.timestamp, recorded[0].timestamp, "the baseline first");
    assert!(live.windows(2).all(|w| w[0].sample.timestamp < w[1].sample.timestamp), "each sample once, in order");
}

/// The fds a child would inherit from this process (those without
/// `O_CLOEXEC`, from the octal `flags` of /proc/self/fdinfo/N), by number.
fn inheritable() -> Vec<u32> {
    const O_CLOEXEC: u32 = 0o2_000_000;
    let mut fds: Vec<u32> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|fd: &u32| {
            let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap_or_default();
            info.lines()
                .find_map(|l| l.strip_prefix("flags:"))
                .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
                .is_some_and(|flags| flags & O_CLOEXEC == 0)
        })
        .collect();
    fds.sort_unstable();
    fds
}

#[test]
fn the_command_inherits_the_callers_fds_and_none_of_stepmons() {
    // With a cgroup where this host allows one (root: the taskstats sockets,
    // the cgroup files, the subreaper's pipes are all open meanwhile).
    let before = inheritable();
    let out = tempfile::NamedTempFile::new().unwrap();
    let script = format!("ls /proc/self/fd > {}", out.path().display());
    let finished = run(CgroupMode::Auto, &script);
    assert_eq!(finished.exit_code, 0);
    let listed: Vec<u32> =
        std::fs::read_to_string(out.path()).unwrap().lines().filter_map(|l| l.trim().parse().ok()).collect();
    // `ls` itself has its output and the directory it reads open.
    let extra: Vec<u32> = listed.iter().copied().filter(|fd| *fd > 2 && !before.contains(fd)).collect();
    assert!(
        extra.len() <= 1,
        "fds the command got that this process does not hand down: {extra:?} (listed {listed:?}, inheritable before {before:?})"
    );
}
