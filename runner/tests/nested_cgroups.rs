//! A step whose command makes cgroups of its own below the step's — as a
//! build's launcher nests each action's cgroups inside the build's
//! (`stepmon build`) — and dies before removing them, a process left in
//! them: the step's end kills that process and removes the nested cgroups
//! with its own, in cgroup v2 and in the v1 hierarchies of a hybrid host
//! (where `cgroup.procs` lists a cgroup's own members only, and a cgroup
//! with a child cannot be removed). As root; `SKIPPED` otherwise.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use stepmon_runner::{CgroupMode, Stdio, StepOptions, prepare};
use stepmon_testsupport::skip;

/// The mount points of the cgroup hierarchies this test nests in, from
/// `/proc/self/mountinfo`: `V2` for cgroup2, and the v1 hierarchies that
/// hold `memory` or `pids`, by controller — each only where its root is
/// the hierarchy's (a host's mounts, not a container's).
fn mounts() -> Vec<(String, PathBuf)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let mut found = Vec::new();
    for line in text.lines() {
        let Some((front, back)) = line.split_once(" - ") else { continue };
        let front: Vec<&str> = front.split(' ').collect();
        let back: Vec<&str> = back.split(' ').collect();
        let (Some(root), Some(point), Some(fs), Some(options)) =
            (front.get(3), front.get(4), back.first(), back.get(2))
        else {
            continue;
        };
        if *root != "/" {
            continue;
        }
        if *fs == "cgroup2" {
            found.push(("V2".to_owned(), PathBuf::from(point)));
        } else if *fs == "cgroup" {
            for controller in ["memory", "pids"] {
                if options.split(',').any(|o| o == controller) {
                    found.push((controller.to_uppercase(), PathBuf::from(point)));
                }
            }
        }
    }
    found
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
}

#[test]
fn cgroups_a_step_nested_and_left_are_removed_with_its_own() {
    let name = "cgroups_a_step_nested_and_left_are_removed_with_its_own";
    if !rustix::process::geteuid().is_root() {
        skip::skip(name, "needs root to create cgroups");
        return;
    }
    let mounts = mounts();
    // The script nests a cgroup in each hierarchy the step has one in,
    // moves itself there, starts a sleeper (which stays) and ends.
    let script = r#"
        while IFS=: read -r _ controllers path; do
            case ",$controllers," in
                ,,) mount=$V2 ;;
                *,memory,*) mount=${MEMORY:-} ;;
                *,pids,*) mount=${PIDS:-} ;;
                *) continue ;;
            esac
            [ -n "$mount" ] || continue
            mkdir "$mount$path/nested" && echo $$ > "$mount$path/nested/cgroup.procs" || exit 9
        done < /proc/self/cgroup
        sleep 60 &
        echo $!
    "#;
    let mut options = StepOptions::new(["sh", "-c", script]);
    options.cgroup = CgroupMode::Require;
    options.envs(mounts.iter().map(|(variable, point)| (variable.clone(), point.clone())));
    options.stdout(Stdio::piped());
    let prepared = match prepare(options) {
        Ok(prepared) => prepared,
        Err(e) => {
            skip::skip(name, format_args!("no cgroup of the step's own here: {e}"));
            return;
        }
    };
    let finished = prepared.start().unwrap().wait_with_output().unwrap();
    assert_eq!(finished.exit_code, 0, "the script could not nest its cgroups");
    let sleeper: u32 = String::from_utf8(finished.stdout.clone()).unwrap().trim().parse().unwrap();
    let run = finished.document.stepmon.as_ref().unwrap();
    let own: Vec<&String> = std::iter::once(&run.cgroup).chain(&run.cgroup_v1).filter(|d| !d.is_empty()).collect();
    assert!(!own.is_empty(), "the step had no cgroup");
    // The sleeper, left in the nested cgroups, was killed.
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(sleeper) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(sleeper), "the process left in the nested cgroups is alive");
    // The step's cgroups are gone, the nested ones with them; nothing
    // says they were left.
    for dir in &own {
        assert!(!Path::new(dir).exists(), "{dir} left behind (it held a nested cgroup)");
    }
    assert!(finished.messages.iter().all(|m| !m.contains("could not remove")), "{:?}", finished.messages);
    eprintln!("removed with their nested cgroups: {own:?}");
}
