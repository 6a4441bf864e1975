//! The process tree's memory, sampled, where no memory cgroup covers the
//! step alone: here `CgroupMode::Never` with the enclosing rung off (what a
//! user without privilege in a cgroup without memory accounting gets), so
//! the tree is the only memory source — the sum of its live processes'
//! `Pss_Anon + Pss_Shmem` at a 20 ms interval, labelled a sampled lower
//! bound, and a shared segment counted once. Works for any user; as root the
//! last test runs the two others again as `nobody`.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use stepmon_testsupport::skip;

use std::time::Duration;

use stepmon_model::source::{Bound, Group, Rung};
use stepmon_runner::{CgroupMode, StepOptions, prepare};

const MIB: u64 = 1 << 20;

/// One step at a time: each test's numbers are read against a quiet machine.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(command: &[&str]) -> stepmon_runner::Finished {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut options = StepOptions::new(command);
    options.cgroup = CgroupMode::Never;
    options.enclosing = false;
    options.tree_memory_interval = Duration::from_millis(20);
    let mut finished = prepare(options).unwrap().run().unwrap();
    stepmon_report::compose::complete(&mut finished.document);
    finished
}

fn memory_of(finished: &stepmon_runner::Finished) -> (u64, String) {
    let run = finished.document.stepmon.as_ref().unwrap();
    let source = run.sources.get(Group::Memory).expect("memory measured from the tree");
    assert_eq!((source.rung, source.bound), (Rung::ProcessTree, Bound::LowerBound), "{source:?}");
    assert!(source.covers.contains("sampled") && source.covers.contains("every 20 ms"), "{}", source.covers);
    let tree = run.process_tree.unwrap().memory.unwrap();
    assert!(tree.samples >= 3, "a sample at the start, the end and between: {tree:?}");
    assert_eq!(run.summary.memory.peak_bytes, Some(tree.peak_bytes));
    (tree.peak_bytes, source.covers.clone())
}

#[test]
fn a_100_mib_tree_is_at_least_60_mib_sampled() {
    // dd holds its buffer while its write blocks on a pipe sleep never reads.
    let hold = |mib: u32| format!("dd if=/dev/zero bs={mib}M count=1 2>/dev/null | sleep 1");
    let script = format!("{} & {} & {} & {}; wait; exit 3", hold(20), hold(30), hold(40), hold(10));
    let finished = run(&["sh", "-c", &script]);
    assert_eq!(finished.exit_code, 3);
    let (peak, covers) = memory_of(&finished);
    assert!((60 * MIB..=130 * MIB).contains(&peak), "peak {peak} B ({covers})");
    eprintln!("100 MiB tree: sampled peak {:.1} MiB", peak as f64 / MIB as f64);
}

#[test]
fn a_shared_segment_in_four_processes_is_counted_once() {
    let python = ["/usr/bin/python3", "python3"]
        .into_iter()
        .find(|p| std::process::Command::new(p).arg("-c").arg("pass").output().is_ok_and(|o| o.status.success()));
    let Some(python) = python else {
        skip::skip("a_shared_segment_in_four_processes_is_counted_once", "no python3 (scripts/setup installs it)");
        return;
    };
    // One 50 MiB shared memory segment (memfd: shmem), touched by the parent
    // and three children it forks, each holding it for a second.
    let script = "import mmap, os, time\n\
        size = 50 << 20\n\
        fd = os.memfd_create('stepmon-test')\n\
        os.ftruncate(fd, size)\n\
        m = mmap.mmap(fd, size)\n\
        for off in range(0, size, 4096): m[off] = 1\n\
        kids = []\n\
        for _ in range(3):\n    pid = os.fork()\n    if pid == 0:\n        \
        total = sum(m[off] for off in range(0, size, 4096))\n        time.sleep(1)\n        os._exit(0)\n    \
        kids.append(pid)\n\
        time.sleep(1)\n\
        for pid in kids: os.waitpid(pid, 0)\n";
    let finished = run(&[python, "-c", script]);
    assert_eq!(finished.exit_code, 0);
    let (peak, covers) = memory_of(&finished);
    // Counted in each process it would be 200 MiB; once, 50 MiB plus four
    // interpreters' own memory.
    assert!((50 * MIB..=110 * MIB).contains(&peak), "peak {peak} B ({covers})");
    eprintln!("50 MiB shared by 4: sampled peak {:.1} MiB", peak as f64 / MIB as f64);
}

/// Set in the copy of this test binary that runs as `nobody`.
const AS_NOBODY: &str = "STEPMON_TREE_MEMORY_AS_NOBODY";

#[test]
fn the_same_as_nobody() {
    let name = "the_same_as_nobody";
    if std::env::var_os(AS_NOBODY).is_some() {
        return; // the copy itself: only the two tests above run there
    }
    if !rustix::process::geteuid().is_root() {
        // Not root: the two tests above already ran unprivileged.
        skip::skip(name, "not root: the tests above ran as this user already, and no other user can be taken");
        return;
    }
    use std::os::unix::process::CommandExt;
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--test-threads=1", "--nocapture", "a_100_mib_tree", "a_shared_segment"])
        .env(AS_NOBODY, "1")
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "as nobody: {}\n{stdout}\n{stderr}", output.status);
    assert!(stdout.contains("2 passed"), "{stdout}");
    assert!(!stderr.contains("SKIPPED"), "{stderr}");
}
