//! `stepmon run` inside a real OCI container on a host with cgroup v1
//! hierarchies (this repository's hybrid CI host): Debian's `runc`, its
//! default spec (no cgroup namespace, every v1 hierarchy mounted read-only
//! at the container's own cgroup, no cgroup2 mount, default capabilities)
//! and an image-less bundle from `scripts/oci-rootfs`. The step gets no
//! cgroup of its own there: its memory and task counts come from the
//! container's own v1 cgroups (the memory peak an upper bound, with the
//! usage at the start), its stall from the machine, the notice and
//! `doctor` say "inside a container", and nothing is written to the
//! container's cgroupfs.
//!
//! Needs root, runc, busybox-static and jq (scripts/setup installs them)
//! and v1 memory and pids hierarchies; prints `SKIPPED <name>: <why>`
//! otherwise (on a pure cgroup v2 host the VM tier's containers test this).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::{json, scratch};
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// A parent shell holding 10 MiB (its `dd` child's buffer, held while the
/// write blocks on a pipe `sleep` never reads) and three more holding 20, 30
/// and 40 MiB at the same time: 100 MiB, 9 processes; exits 3.
const TREE: &str = "dd if=/dev/zero bs=20M count=1 2>/dev/null | sleep 1 & \
                    dd if=/dev/zero bs=30M count=1 2>/dev/null | sleep 1 & \
                    dd if=/dev/zero bs=40M count=1 2>/dev/null | sleep 1 & \
                    dd if=/dev/zero bs=10M count=1 2>/dev/null | sleep 1; wait; exit 3";

fn can_run(name: &str) -> bool {
    if !rustix::process::geteuid().is_root() {
        return common::skip::skipped(name, "needs root to run runc");
    }
    for tool in ["runc", "busybox", "jq"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            return common::skip::skipped(name, format_args!("no {tool} (scripts/setup installs it)"));
        }
    }
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let v1 = |c: &str| cgroup.lines().any(|l| l.split(':').nth(1).is_some_and(|cs| cs.split(',').any(|x| x == c)));
    if !(v1("memory") && v1("pids")) {
        return common::skip::skipped(name, "no cgroup v1 memory and pids hierarchies (the VM tier tests pure v2)");
    }
    true
}

/// Deletes the container, also when the test fails.
struct Container(String);

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("runc").args(["delete", "--force", &self.0]).stderr(Stdio::null()).status();
    }
}

#[test]
fn a_step_in_a_runc_container_is_measured_from_the_containers_v1_cgroups() {
    let name = "a_step_in_a_runc_container_is_measured_from_the_containers_v1_cgroups";
    if !can_run(name) {
        return;
    }
    let dir = scratch(name);
    let (bundle, out) = (dir.join("bundle"), dir.join("out"));
    std::fs::create_dir_all(&out).unwrap();
    // The container's view of its cgroupfs before and after, the run, its
    // exit code and `doctor`, all in one container.
    let script = format!(
        "find /sys/fs/cgroup >/out/before; stepmon run -o /out/run.json -- sh -c '{TREE}' 2>/out/stderr; \
         echo $? >/out/code; find /sys/fs/cgroup >/out/after; stepmon doctor >/out/doctor 2>&1"
    );
    let script_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/oci-rootfs");
    let built = Command::new(script_path)
        .arg("--out")
        .arg(&out)
        .arg(&bundle)
        .arg(env!("CARGO_BIN_EXE_stepmon"))
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert!(built.status.success(), "scripts/oci-rootfs: {}", String::from_utf8_lossy(&built.stderr));
    let container = Container(format!("stepmon-test-{}", std::process::id()));
    let ran = Command::new("runc").arg("run").arg("--bundle").arg(&bundle).arg(&container.0).output().unwrap();
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap_or_default();
    assert!(ran.status.success(), "runc: {ran:?}; stepmon: {}", read("stderr"));
    assert_eq!(read("code").trim(), "3", "the step's exit code is kept; stepmon said {}", read("stderr"));
    assert_eq!(read("before"), read("after"), "the container's cgroupfs changed");

    let stderr = read("stderr");
    assert!(stderr.contains("notice: stepmon runs inside a container"), "{stderr}");
    assert!(!stderr.contains("mountinfo"), "the notice speaks of containers, not mountinfo: {stderr}");
    let doctor = read("doctor");
    assert!(doctor.contains("container: inside a container") && doctor.contains("--cgroupns=private"), "{doctor}");

    let document: Value = json(&out.join("run.json"));
    let run = &document["stepmon"];
    let sources = &run["sources"];
    assert_eq!(sources["memory"]["rung"], "enclosingCgroup", "{sources}");
    assert_eq!(sources["memory"]["bound"], "upperBound", "{sources}");
    assert_eq!(sources["pids"]["rung"], "enclosingCgroup", "{sources}");
    assert_eq!(sources["pressure"]["rung"], "machine", "{sources}");
    let enclosing = &run["enclosingCgroup"];
    assert_eq!(enclosing["cgroupV1"], serde_json::json!(["/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids"]));
    let at_start = enclosing["memoryUsageAtStart"].as_u64().expect("the usage at the start is recorded");
    let peak = run["summary"]["memory"]["peakBytes"].as_u64().unwrap();
    let over = peak - at_start;
    assert!((100 * MIB..=110 * MIB).contains(&over), "peak {peak} − usage at start {at_start} = {over} B");
    assert!(run["summary"]["pidsPeak"].as_u64().unwrap() >= 4, "{}", run["summary"]);
    assert!(run["summary"]["cpuStall"]["someSeconds"].as_f64().is_some(), "the machine's stall: {}", run["summary"]);
    assert_eq!(run["exitCode"], 3);
}
