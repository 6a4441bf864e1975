//! `stepmon run --job` and `stepmon report` of the job with the real binary:
//! a job of five real steps, a step whose stepmon is killed with SIGKILL,
//! a torn last line, a full disk and eight steps appending at once. The
//! kill, full-disk tests need root (cgroups, a tmpfs mount in a mount
//! namespace of the test's own) and print
//! `SKIPPED <name>: <why>` otherwise; the others run for any user.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{leftovers, live, run_stepmon, scratch, stepmon, wait_for};
use serde_json::Value;
use stepmon_report::job::{self, StepStatus};

/// `stepmon run -q --job JOB --name NAME -- COMMAND...`, started.
fn step(job: &Path, name: &str, command: &[&str]) -> Child {
    stepmon()
        .args(["run", "-q", "--job", job.to_str().unwrap(), "--name", name, "--"])
        .args(command)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(mut child: Child) -> i32 {
    wait_for(&mut child, Duration::from_secs(20)).code().unwrap()
}

/// `stepmon report --format json JOB` as JSON (it must succeed).
fn report_json(job: &Path) -> Value {
    let report = run_stepmon(&["report", "--format", "json", job.to_str().unwrap()]);
    assert!(report.status.success(), "{}", report.stderr);
    serde_json::from_str(&report.stdout).unwrap()
}

fn row<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["steps"].as_array().unwrap().iter().find(|s| s["name"] == name).unwrap_or_else(|| panic!("{report}"))
}

#[test]
fn two_steps_of_one_program_are_told_apart_by_their_commands() {
    let dir = scratch("job-commands");
    let job = dir.join("job.jsonl");
    for (code, script) in [(0, "exit 0"), (3, "exit 3")] {
        let mut child = stepmon()
            .args(["run", "-q", "--job", job.to_str().unwrap(), "--", "sh", "-c", script])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        assert_eq!(wait_for(&mut child, Duration::from_secs(20)).code(), Some(code));
    }
    let report = report_json(&job);
    let steps = report["steps"].as_array().unwrap();
    let commands: Vec<(&Value, &Value, &Value)> =
        steps.iter().map(|s| (&s["name"], &s["command"], &s["exitCode"])).collect();
    assert_eq!(
        commands,
        [
            (&Value::from("sh"), &serde_json::json!(["sh", "-c", "exit 0"]), &Value::from(0)),
            (&Value::from("sh"), &serde_json::json!(["sh", "-c", "exit 3"]), &Value::from(3)),
        ],
        "{report}"
    );
    let text = run_stepmon(&["report", job.to_str().unwrap()]);
    assert!(text.status.success(), "{}", text.stderr);
    let line = |label: &str| {
        text.stdout.lines().find(|l| l.contains(label)).unwrap_or_else(|| panic!("no row {label}:\n{}", text.stdout))
    };
    assert!(line("sh (sh -c 'exit 0')").trim_end().ends_with(" 0"), "{}", text.stdout);
    assert!(line("sh (sh -c 'exit 3')").trim_end().ends_with(" 3"), "{}", text.stdout);
    for format in ["markdown", "html"] {
        let out = run_stepmon(&["report", "--format", format, job.to_str().unwrap()]);
        assert!(out.status.success(), "{format}: {}", out.stderr);
        for script in ["exit 0", "exit 3"] {
            assert!(
                out.stdout
                    .contains(&format!("sh (sh -c {q}{script}{q})", q = if format == "html" { "&#39;" } else { "'" })),
                "{format}: {script}: {}",
                out.stdout
            );
        }
    }
}

#[test]
fn a_job_of_five_steps_one_row_each_the_parallel_pair_overlapping() {
    let dir = scratch("job-five");
    let job = dir.join("job.jsonl");
    let burn = "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done";
    assert_eq!(finish(step(&job, "cpu", &["sh", "-c", burn])), 0);
    // A 24 MiB string held by the shell.
    let grow = "x=$(head -c 25165824 /dev/zero | tr '\\0' a); echo ${#x}";
    assert_eq!(finish(step(&job, "memory", &["sh", "-c", grow])), 0);
    assert_eq!(finish(step(&job, "fails", &["sh", "-c", "exit 3"])), 3);
    let (a, b) = (step(&job, "left", &["sleep", "0.6"]), step(&job, "right", &["sleep", "0.6"]));
    assert_eq!((finish(a), finish(b)), (0, 0));

    let report = report_json(&job);
    assert_eq!(report["steps"].as_array().unwrap().len(), 5, "{report}");
    for (name, code) in [("cpu", 0), ("memory", 0), ("fails", 3), ("left", 0), ("right", 0)] {
        let row = row(&report, name);
        assert_eq!((row["status"].as_str(), row["exitCode"].as_i64()), (Some("ended"), Some(code)), "{row}");
        assert!(row["samples"].as_u64().unwrap() >= 2, "baseline and final sample: {row}");
    }
    let span = |name: &str| {
        let row = row(&report, name);
        let start = row["startOffsetSeconds"].as_f64().unwrap();
        (start, start + row["wallSeconds"].as_f64().unwrap())
    };
    let (left, right) = (span("left"), span("right"));
    assert!(left.0 < right.1 && right.0 < left.1, "the parallel pair overlaps: {left:?} {right:?}");
    assert!(span("cpu").1 <= span("memory").0, "sequential steps follow each other");
    assert!(row(&report, "cpu")["cpuSeconds"].as_f64().unwrap() > 0.05, "{report}");
    if rustix::process::geteuid().is_root() {
        let peak = row(&report, "memory")["memoryPeakBytes"].as_u64().unwrap();
        assert!(peak > 24 << 20, "memory peak {peak}");
    }
    // The longest step is the one with the largest wall time (which one that
    // is depends on the machine's load: the memory step's pipe can take
    // longer than the 0.6 s sleeps on a busy machine).
    // It is referred to by its place in `steps`.
    let longest = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .max_by(|a, b| a.1["wallSeconds"].as_f64().unwrap().total_cmp(&b.1["wallSeconds"].as_f64().unwrap()))
        .unwrap()
        .0;
    assert_eq!(report["longest"].as_u64(), Some(longest as u64), "{report}");
    let wall = report["wallSeconds"].as_f64().unwrap();
    assert!(wall >= span("right").1 - 1e-6 && wall >= span("left").1 - 1e-6, "{report}");

    let text = run_stepmon(&["report", job.to_str().unwrap()]);
    assert!(text.status.success(), "{}", text.stderr);
    assert!(text.stdout.starts_with("job: 5 steps, wall "), "{}", text.stdout);
    let rows: Vec<&str> = text.stdout.lines().filter(|l| l.starts_with("  ") && !l.contains("step  ")).collect();
    assert_eq!(rows.len(), 5, "{}", text.stdout);
    assert!(rows.iter().any(|r| r.contains("fails") && r.trim_end().ends_with(" 3")), "{}", text.stdout);
    assert!(!text.stdout.contains("INTERRUPTED"), "{}", text.stdout);
}

/// The sample lines in `job` now.
fn sample_lines(job: &Path) -> usize {
    let text = std::fs::read_to_string(job).unwrap_or_default();
    text.lines().filter(|l| l.starts_with("{\"kind\":\"sample\"")).count()
}

/// Waits until `job` holds at least `n` sample lines.
fn wait_for_samples(job: &Path, n: usize) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if sample_lines(job) >= n {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("fewer than {n} samples in {} after 10 s", job.display());
}

#[test]
fn a_killed_stepmon_leaves_an_interrupted_step_and_gc_its_cgroups() {
    let name = "a_killed_stepmon_leaves_an_interrupted_step_and_gc_its_cgroups";
    let Some(own) = live(name) else { return };
    let dir = scratch("job-kill");
    let job = dir.join("job.jsonl");
    assert_eq!(finish(step(&job, "before", &["true"])), 0);
    // The first step's own samples are in the file already: the victim's
    // come on top of them.
    let before = sample_lines(&job);
    let mut victim = step(&job, "victim", &["sleep", "30"]);
    let pid = victim.id();
    // The baseline and two periodic samples (250 ms apart at the start).
    wait_for_samples(&job, before + 3);
    victim.kill().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&victim.wait().unwrap()), Some(9));

    let report = report_json(&job);
    let row = row(&report, "victim");
    assert_eq!(row["status"], "interrupted", "{row}");
    assert!(row["exitCode"].is_null(), "no exit code is made up: {row}");
    assert!(row["samples"].as_u64().unwrap() >= 3, "baseline and periodic samples: {row}");
    assert!(row["wallSeconds"].as_f64().unwrap() >= 0.45, "{row}");
    assert!(row["recordEnds"].is_string(), "{row}");
    assert_eq!(self::row(&report, "before")["status"], "ended");
    assert_eq!(report["interrupted"], 1);
    let text = run_stepmon(&["report", job.to_str().unwrap()]);
    assert!(text.stdout.contains("INTERRUPTED") && text.stdout.contains("interrupted: victim ("), "{}", text.stdout);
    assert!(text.stdout.contains("stepmon was killed"), "{}", text.stdout);

    // The killed run's cgroup is left for gc — unless another test's
    // `stepmon run`, which collects dead runs on start, got to it first.
    let gc = run_stepmon(&["gc"]);
    assert!(gc.status.success(), "{}", gc.stderr);
    assert_eq!(leftovers(&own, pid), Vec::<std::path::PathBuf>::new(), "gc removed the killed run's cgroups");
    // ... and marked the step in the record (also when another stepmon's
    // start collected the cgroups first): still interrupted, now collected.
    let report = report_json(&job);
    let row = self::row(&report, "victim");
    assert_eq!(row["status"], "interrupted", "{row}");
    assert!(row["collected"].as_str().is_some_and(|c| c.starts_with("collected by stepmon gc at ")), "{row}");
    let text = run_stepmon(&["report", job.to_str().unwrap()]);
    assert!(text.stdout.contains("; collected by stepmon gc at "), "{}", text.stdout);
    let gc_again = run_stepmon(&["gc"]);
    let collected = std::fs::read_to_string(&job).unwrap().matches("\"kind\":\"stepCollected\"").count();
    assert_eq!(collected, 1, "marked once: {}", gc_again.stderr);
}

#[test]
fn a_torn_last_line_is_reported_as_lost_and_the_rest_read() {
    let dir = scratch("job-torn");
    let job = dir.join("job.jsonl");
    assert_eq!(finish(step(&job, "first", &["true"])), 0);
    assert_eq!(finish(step(&job, "second", &["true"])), 0);
    let text = std::fs::read_to_string(&job).unwrap();
    let last = text.trim_end().rfind('\n').unwrap() + 1;
    // Cut the last line (the second step's end) in the middle.
    let cut = last + (text.len() - last) / 2;
    std::fs::write(&job, &text[..cut]).unwrap();

    let report = run_stepmon(&["report", job.to_str().unwrap()]);
    assert!(report.status.success(), "{}", report.stderr);
    let lines = text.lines().count();
    assert!(
        report.stdout.contains(&format!("line {lines} ({} bytes) lost: the last line, cut short", cut - last)),
        "{}",
        report.stdout
    );
    let json = report_json(&job);
    assert_eq!(row(&json, "first")["status"], "ended");
    assert_eq!(row(&json, "second")["status"], "interrupted", "its end was lost: never presented as complete");
    assert_eq!(json["notes"].as_array().unwrap().len(), 1, "{json}");
}

#[test]
fn a_full_disk_ends_the_record_not_the_step_and_the_report_says_why() {
    let name = "a_full_disk_ends_the_record_not_the_step_and_the_report_says_why";
    if !rustix::process::geteuid().is_root() {
        common::skip::skip(name, "needs root to mount a tmpfs (in a mount namespace of its own)");
        return;
    }
    if !std::process::Command::new("unshare").args(["-m", "true"]).status().is_ok_and(|s| s.success()) {
        common::skip::skip(name, "unshare -m does not work here");
        return;
    }
    let dir = scratch("job-full");
    std::fs::create_dir(dir.join("m")).unwrap();
    // An 8 KiB tmpfs in a mount namespace of the test's own (private: never
    // seen outside, gone with the shell): the start and a few samples fit,
    // the step's end does not. The record is
    // copied out before the namespace goes away.
    let script = r#"mount -t tmpfs -o size=8k tmpfs m || exit 90
"$0" run -q --job m/job.jsonl --name full -o doc.json -- sleep 0.8
code=$?
cp m/job.jsonl job.jsonl || exit 91
exit $code"#;
    let out = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", script, env!("CARGO_BIN_EXE_stepmon")])
        .current_dir(&*dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "the step ran to its end: {stderr}");
    assert!(stderr.contains("cannot append to the job record") && stderr.contains("the step goes on"), "{stderr}");
    // The writer's short write, where it can be said: the run document.
    let document: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("doc.json")).unwrap()).unwrap();
    let warnings = document["stepmon"]["warnings"].as_array().unwrap();
    assert!(warnings.iter().any(|w| w.as_str().unwrap().contains("cannot append to the job record")), "{document}");
    let job = dir.join("job.jsonl");
    let text = std::fs::read_to_string(&job).unwrap();
    let record = job::read(&text);
    assert_eq!(record.steps.len(), 1);
    // A short write leaves the record's last line cut short (unless the
    // file ended exactly at the tmpfs's last free byte: no line torn then).
    if text.ends_with('\n') {
        eprintln!(
            "{name}: the record filled the tmpfs to the byte: no line was torn, so the torn-line half has nothing to check"
        );
        return;
    }
    let StepStatus::Interrupted { torn: Some(torn), .. } = record.steps[0].status() else {
        panic!("{:?}", record.steps[0].status())
    };
    assert_eq!(torn.line, text.lines().count());
    let report = run_stepmon(&["report", job.to_str().unwrap()]);
    assert!(report.status.success() && report.stdout.contains("INTERRUPTED"), "{}{}", report.stdout, report.stderr);
    for said in [
        format!(
            "line {} ({} bytes) lost: the last line, cut short (a torn write: the disk may have filled)",
            torn.line, torn.bytes
        ),
        format!(
            "no end in the record — the disk may have filled: line {} ({} bytes) is its line cut short",
            torn.line, torn.bytes
        ),
    ] {
        assert!(report.stdout.contains(&said), "{said}\n{}", report.stdout);
    }
}

#[test]
fn eight_steps_appending_at_once_make_eight_whole_steps() {
    let dir = scratch("job-eight");
    let job = dir.join("job.jsonl");
    let children: Vec<Child> = (0..8).map(|i| step(&job, &format!("s{i}"), &["sleep", "0.5"])).collect();
    for child in children {
        assert_eq!(finish(child), 0);
    }
    let text = std::fs::read_to_string(&job).unwrap();
    assert!(text.ends_with('\n'));
    for (i, line) in text.lines().enumerate() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("line {} does not parse: {e}", i + 1));
    }
    let record = job::read(&text);
    assert!(record.lost.is_empty() && record.unknown.is_empty(), "{:?}", record.lost);
    assert_eq!(record.steps.len(), 8);
    for s in &record.steps {
        assert_eq!(s.status(), StepStatus::Ended { exit_code: 0 }, "{}", s.id);
        // Appended as the step ran (the end's document has them too).
        assert!(s.sample_lines >= 2, "{}: {} live sample lines", s.id, s.sample_lines);
    }
    let report = report_json(&job);
    assert_eq!(report["steps"].as_array().unwrap().len(), 8);
}

#[test]
fn two_jobs_compare_step_by_step_by_name() {
    let dir = scratch("job-diff");
    let (before, after) = (dir.join("before.jsonl"), dir.join("after.jsonl"));
    let burn = |n: u32| format!("i=0; while [ $i -lt {n} ]; do i=$((i+1)); done");
    for (job, cpu_loop, extra) in [(&before, burn(20_000), false), (&after, burn(400_000), true)] {
        assert_eq!(finish(step(job, "build", &["sh", "-c", &cpu_loop])), 0);
        assert_eq!(finish(step(job, "test", &["sh", "-c", "exit 0"])), 0);
        if extra {
            assert_eq!(finish(step(job, "package", &["true"])), 0);
        }
    }
    let diff = run_stepmon(&["diff", before.to_str().unwrap(), after.to_str().unwrap(), "--fail-if-heavier"]);
    assert_eq!(diff.status.code(), Some(1), "the build step got 20x the CPU: {}{}", diff.stdout, diff.stderr);
    assert!(diff.stdout.contains("only after: `package (true)`"), "{}", diff.stdout);
    let json = run_stepmon(&["diff", "--json", before.to_str().unwrap(), after.to_str().unwrap()]);
    let value: Value = serde_json::from_str(&json.stdout).unwrap();
    let steps = value["steps"].as_array().unwrap();
    let named = |name: &str| steps.iter().find(|s| s["after"]["name"] == name).unwrap_or_else(|| panic!("{value}"));
    // "mixed" when the first job's short build step had its wall time
    // stretched by a loaded machine (wall down beyond the noise beside the
    // 20x CPU, seen in CI): the CPU rise is the verdict's driver either way.
    let verdict = named("build")["verdict"].as_str().unwrap_or_default();
    assert!(verdict == "heavier" || verdict == "mixed", "{}", named("build"));
    assert!(
        named("build")["drivers"].as_array().unwrap().iter().any(|d| d == "cpu.usageSeconds"),
        "{}",
        named("build")
    );
    let cpu = named("build")["fields"].as_array().unwrap().iter().find(|f| f["field"] == "cpu.usageSeconds").cloned();
    assert_eq!(cpu.as_ref().map(|f| f["direction"].clone()), Some(Value::from("up")), "{}", named("build"));
    assert_eq!(value["onlyAfter"], serde_json::json!(["package (true)"]));
}
