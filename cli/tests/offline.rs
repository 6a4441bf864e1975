//! `stepmon sample`, `stepmon sys` and `stepmon doctor` with the real binary.
//! `sample` and `sys` read captured files, so their numbers are known
//! exactly; `doctor` is checked against facts the test reads itself.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};

use common::{Scratch, f64_at, leftovers, run_stepmon, scratch, u64_at};
use serde_json::Value;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn sample_of_the_fake_pure_v2_step_gives_its_known_values() {
    // The sampler's hand-made pure cgroup v2 step directory.
    let dir = manifest().join("../sampler/tests/data/pure-v2-step");
    let run = run_stepmon(&["sample", dir.to_str().unwrap()]);
    assert!(run.status.success(), "{}", run.stderr);
    let sample: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(u64_at(&sample, "/memoryStat/peak"), 71_303_168);
    assert_eq!(u64_at(&sample, "/cpuStat/usageNanos"), 1_500_000_000);
    assert_eq!(u64_at(&sample, "/ioStat/writeBytes"), 33_554_432);
    assert_eq!(u64_at(&sample, "/stepmon/pidsPeak"), 9);
}

/// `stepmon sample DIR`'s error for a DIR that cannot be sampled: exit 125,
/// one line saying what DIR is, a hint, no panic.
fn sample_error(dir: &Path) -> String {
    let run = run_stepmon(&["sample", dir.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(125), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    let (error, hint) = run.stderr.split_once('\n').unwrap_or_else(|| panic!("no hint: {}", run.stderr));
    assert!(hint.starts_with("  hint: give a cgroup v2 directory"), "{}", run.stderr);
    error.to_owned()
}

#[test]
fn sample_of_a_non_cgroup_dir_says_what_the_dir_is() {
    let dir = scratch("not-a-cgroup");
    let shown = dir.display();
    assert_eq!(
        sample_error(&dir),
        format!(
            "stepmon: error: {shown} is not a cgroup v2 directory: it has no `cgroup.controllers`, which every cgroup v2 directory has"
        )
    );
    // A cgroup v1 directory: `tasks` and `cgroup.procs`, no `cgroup.controllers`.
    std::fs::write(dir.join("tasks"), "").unwrap();
    std::fs::write(dir.join("cgroup.procs"), "").unwrap();
    assert_eq!(
        sample_error(&dir),
        format!(
            "stepmon: error: {shown} is not a cgroup v2 directory: it has `tasks` but no `cgroup.controllers`: a cgroup v1 directory"
        )
    );
    let gone = dir.join("no-such-dir");
    assert_eq!(sample_error(&gone), format!("stepmon: error: {} does not exist", gone.display()));
    let file = dir.join("tasks");
    assert_eq!(sample_error(&file), format!("stepmon: error: {} is not a directory", file.display()));
    // A real directory that is no cgroup at all.
    assert!(sample_error(Path::new("/etc")).starts_with("stepmon: error: /etc is not a cgroup v2 directory"));
}

/// A procfs-like directory built from the captured hybrid-6.18 files.
fn captured_proc() -> Scratch {
    let data = manifest().join("tests/data/hybrid-6.18");
    let root = scratch("proc");
    std::fs::create_dir(root.join("pressure")).unwrap();
    for (from, to) in [
        ("proc_stat.txt", "stat"),
        ("proc_meminfo.txt", "meminfo"),
        ("proc_loadavg.txt", "loadavg"),
        ("proc_pressure_cpu.txt", "pressure/cpu"),
        ("proc_pressure_memory.txt", "pressure/memory"),
        ("proc_pressure_io.txt", "pressure/io"),
    ] {
        std::fs::copy(data.join(from), root.join(to)).unwrap();
    }
    root
}

#[test]
fn sys_of_captured_proc_files_gives_the_captured_numbers() {
    let root = captured_proc();
    let run = run_stepmon(&["sys", "--proc", root.to_str().unwrap()]);
    assert!(run.status.success(), "{}", run.stderr);
    let sample: Value = serde_json::from_str(&run.stdout).unwrap();
    // meminfo: MemTotal 24684092 kB, MemFree 24225144 kB (BuildKit keeps kB).
    assert_eq!(u64_at(&sample, "/memoryStat/total"), 24_684_092);
    assert_eq!(u64_at(&sample, "/memoryStat/free"), 24_225_144);
    // stat: `cpu  991 0 1182 38460 93 ...` in USER_HZ (100) -> seconds.
    assert!((f64_at(&sample, "/cpuStat/user") - 9.91).abs() < 1e-9);
    assert!((f64_at(&sample, "/cpuStat/idle") - 384.6).abs() < 1e-9);
    // pressure/cpu: some avg10=3.00 ... total=3220079; pressure/io full total=683709.
    assert_eq!(u64_at(&sample, "/cpuPressure/some/total"), 3_220_079);
    assert!((f64_at(&sample, "/cpuPressure/some/avg10") - 3.0).abs() < 1e-9);
    assert_eq!(u64_at(&sample, "/ioPressure/full/total"), 683_709);
    // loadavg: 0.18 0.07 0.02 1/89 4687.
    assert!((f64_at(&sample, "/stepmon/loadAvg/load1") - 0.18).abs() < 1e-9);
    assert_eq!(u64_at(&sample, "/stepmon/loadAvg/threads"), 89);
}

/// The cgroup v2 mount point and its superblock options, read independently
/// of stepmon's discovery (first `cgroup2` entry of mountinfo whose root is `/`).
fn cgroup2_mount_and_options() -> Option<(PathBuf, String)> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let fields: Vec<&str> = left.split(' ').collect();
        let options = right.split(' ').nth(2).unwrap_or_default().to_owned();
        (right.starts_with("cgroup2 ") && fields.get(3) == Some(&"/")).then(|| (PathBuf::from(fields[4]), options))
    })
}

fn cgroup2_mount() -> Option<PathBuf> {
    cgroup2_mount_and_options().map(|(mount, _)| mount)
}

/// v1 controllers of this process (`/proc/self/cgroup` lines other than `0::`).
fn v1_controllers() -> Vec<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    text.lines()
        .filter(|l| !l.starts_with("0::"))
        .filter_map(|l| l.split(':').nth(1))
        .flat_map(|c| c.split(','))
        .filter(|c| !c.is_empty() && !c.starts_with("name="))
        .map(str::to_owned)
        .collect()
}

#[test]
fn doctor_json_describes_this_host() {
    let run = run_stepmon(&["doctor", "--json"]);
    let report: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    for key in [
        "kernel",
        "layout",
        "cgroup2Mount",
        "ownCgroup",
        "euid",
        "controllers",
        "delegateFiles",
        "stepCgroup",
        "rungs",
        "checks",
    ] {
        assert!(report.get(key).is_some(), "no {key} in {report}");
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(report["kernel"], release.trim());
    let checks = report["checks"].as_array().unwrap();
    let check = |name: &str| -> &Value {
        checks.iter().find(|c| c["name"] == name).unwrap_or_else(|| panic!("no check {name}: {report}"))
    };
    for c in checks {
        assert!(["ok", "missing", "unknown"].contains(&c["status"].as_str().unwrap()), "{c}");
        assert!(c["status"] == "ok" || c.get("reason").is_some(), "a check that is not ok says why: {c}");
    }
    let Some(mount) = cgroup2_mount() else {
        assert_eq!(check("cgroup2")["status"], "missing");
        common::skip::skip("doctor_json_describes_this_host (layout part)", "no cgroup2 mount here");
        return;
    };
    assert_eq!(report["cgroup2Mount"], mount.to_str().unwrap());
    let v1 = v1_controllers();
    // This host (hybrid-6.18 captures) has cgroup2 beside v1 hierarchies.
    let expected = if v1.is_empty() { "unified" } else { "hybrid" };
    assert_eq!(report["layout"], expected, "v1 controllers here: {v1:?}");
    for controller in ["cpu", "memory", "io", "pids"] {
        let v1_name = if controller == "io" { "blkio" } else { controller };
        let c = check(&format!("{controller} controller"));
        if v1.iter().any(|n| n == v1_name) {
            assert_eq!(c["status"], "missing", "{c}");
            assert!(c["reason"].as_str().unwrap().contains("cgroup v1"), "{c}");
        }
    }
    if v1.iter().any(|n| n == "memory") {
        let peak = check("memory.peak");
        assert_eq!(peak["status"], "unknown");
        assert_eq!(peak["reason"], "unknown on this host: memory controller not in v2");
    }
    for name in [
        "kernel",
        "own cgroup",
        "privileges",
        "delegation",
        "psi (system)",
        "psi (cgroup)",
        "cgroup.kill",
        "favordynmods",
    ] {
        check(name);
    }
    let favordynmods = cgroup2_mount_and_options().is_some_and(|(_, o)| o.split(',').any(|o| o == "favordynmods"));
    assert_eq!(check("favordynmods")["status"] == "ok", favordynmods);
    let psi = Path::new("/proc/pressure/cpu").exists();
    assert_eq!(check("psi (system)")["status"] == "ok", psi);
}

#[test]
fn doctor_own_cgroup_and_human_output() {
    let own = run_stepmon(&["doctor", "--own-cgroup"]);
    let Some(mount) = cgroup2_mount() else {
        common::skip::skip("doctor_own_cgroup_and_human_output", "no cgroup2 mount here");
        return;
    };
    assert!(own.status.success(), "{}", own.stderr);
    let text = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let path = text.lines().find_map(|l| l.strip_prefix("0::")).unwrap();
    let expected: PathBuf = mount.join(path.trim_start_matches('/')).components().collect();
    assert_eq!(own.stdout, format!("{}\n", expected.display()));

    let human = run_stepmon(&["doctor"]);
    let json = run_stepmon(&["doctor", "--json"]);
    let report: Value = serde_json::from_str(&json.stdout).unwrap();
    let checks = report["checks"].as_array().unwrap();
    let lines: Vec<&str> = human.stdout.lines().collect();
    let rungs = report["rungs"].as_array().unwrap();
    assert_eq!(
        lines.len(),
        checks.len() + rungs.len() + 1,
        "a header, one line per check and one per resource:\n{}",
        human.stdout
    );
    for (line, check) in lines[1..].iter().zip(checks) {
        let status = check["status"].as_str().unwrap();
        let name = check["name"].as_str().unwrap();
        assert!(line.starts_with(&format!("{status:<8}{name}: ")), "{line:?} vs {check}");
        if let Some(hint) = check.get("hint") {
            assert!(line.ends_with(hint.as_str().unwrap()), "{line:?} lacks the hint");
        }
    }
    for (line, rung) in lines[1 + checks.len()..].iter().zip(rungs) {
        assert!(line.starts_with(&format!("rung    {} ", rung["resource"].as_str().unwrap())), "{line:?} vs {rung}");
    }
    // A step runs and is measured on every host: doctor says how well.
    assert_eq!(human.status.code(), Some(0));
    // The probe cgroup doctor makes as root is gone.
    for run in [&human, &json] {
        assert!(leftovers(&expected, run.pid).is_empty(), "doctor left {:?}", leftovers(&expected, run.pid));
    }
}

#[test]
fn size_core_and_count_flags_refuse_junk_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let touch = format!("touch '{}'", marker.display());
    for (flag, junk) in
        [("--memory-max", "2iB"), ("--memory-max", "5BB"), ("--cpus", "0"), ("--cpus", "nan"), ("--pids-max", "0x10")]
    {
        let run = run_stepmon(&["run", flag, junk, "--", "sh", "-c", &touch]);
        assert_eq!(run.status.code(), Some(2), "{flag} {junk}: {}", run.stderr);
        assert!(run.stderr.contains(&format!("invalid value '{junk}' for '{flag}")), "{flag} {junk}: {}", run.stderr);
        assert!(!marker.exists(), "{flag} {junk}: the step ran");
    }
}

/// cli/hot-text.ld is linked only into a build that opts in with
/// `STEPMON_HOT_TEXT=1` (scripts/build-release): the tests' own debug build,
/// like `cargo install`, must link with the linker's default layout. The
/// script's output section is named in the section-name table of a binary
/// linked with it, and nowhere else (no source of the binary holds the name).
#[test]
fn the_hot_text_script_is_linked_only_where_the_build_opts_in() {
    let binary = std::fs::read(env!("CARGO_BIN_EXE_stepmon")).unwrap();
    let section = b".text.hot_start";
    let linked = binary.windows(section.len()).any(|w| w == section);
    let opted_in = option_env!("STEPMON_HOT_TEXT") == Some("1");
    assert_eq!(linked, opted_in, "STEPMON_HOT_TEXT={:?} at build time", option_env!("STEPMON_HOT_TEXT"));
}
