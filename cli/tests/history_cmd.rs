//! `stepmon report` of `docker buildx history export` bundles with the real
//! binary: the two real bundles in import/tests/data/buildkit-history/, one
//! of them unpacked, and a cut-short one.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;

use common::{run_stepmon, scratch};
use serde_json::Value;

fn bundle(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "../import/tests/data/buildkit-history", name].iter().collect();
    path.to_str().unwrap().to_owned()
}

const TWO_PLATFORM: &str = "docker~build-push-action~2778G2.dockerbuild";
const FAILED: &str = "docker~test-docker-action~go-error~BGI5SX.dockerbuild";

#[test]
fn report_reads_a_history_export_bundle() {
    let run = run_stepmon(&["report", &bundle(TWO_PLATFORM)]);
    assert!(run.status.success(), "{}", run.stderr);
    let text = &run.stdout;
    assert!(
        text.starts_with("build 2778g26vsxllhulx6klicjibt (./test/Dockerfile) for linux/amd64, linux/arm64"),
        "{text}"
    );
    assert!(text.contains("[linux/arm64] [2/2] RUN echo \"Hello world!\" (Dockerfile:3)"), "{text}");
    assert!(text.contains("pids     unknown"), "{text}");
}

#[test]
fn report_of_a_failed_build_is_a_report_not_an_error() {
    let run = run_stepmon(&["report", &bundle(FAILED), "--format", "json"]);
    assert!(run.status.success(), "{}", run.stderr);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let failed: Vec<&Value> = json[0]["steps"].as_array().unwrap().iter().filter(|s| s["state"] == "failed").collect();
    assert_eq!(failed.len(), 1, "{}", run.stdout);
    assert_eq!(failed[0]["location"], "Dockerfile:12");
    assert!(json[0]["notice"].as_str().unwrap().contains("no provenance attestation"));
}

#[test]
fn report_draws_a_bundle_as_a_trace_at_real_times() {
    let run = run_stepmon(&["report", &bundle(TWO_PLATFORM), "--format", "trace"]);
    assert!(run.status.success(), "{}", run.stderr);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["otherData"]["steps"], 10);
    // One process track per platform (the job view's groups), beside the
    // ungrouped steps and the machine's counters.
    let processes: Vec<&str> = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    for platform in ["linux/amd64", "linux/arm64"] {
        assert!(processes.iter().any(|p| p.ends_with(platform)), "{processes:?}");
    }
    let mut runs: Vec<(f64, String)> = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"].as_str().is_some_and(|n| n.contains("RUN echo")))
        .map(|e| (e["ts"].as_f64().unwrap(), e["pid"].to_string()))
        .collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_ne!(runs[0].1, runs[1].1, "each platform's RUN on its own track: {runs:?}");
}

#[test]
fn report_of_a_bundle_in_markdown_and_openmetrics_has_the_build_summary() {
    let run = run_stepmon(&["report", &bundle(TWO_PLATFORM), "--format", "markdown"]);
    assert!(run.status.success(), "{}", run.stderr);
    let md = &run.stdout;
    assert!(md.contains("### build 2778g26vsxllhulx6klicjibt\n"), "{md}");
    assert!(md.contains("- steps: 10 vertexes: 10 ran, 0 cached, 0 failed, 0 incomplete"), "{md}");
    assert!(md.contains("| linux/arm64 | 3 | 3 | 0 | 0 | 0 | "), "{md}");
    let run = run_stepmon(&["report", &bundle(FAILED), "--format", "openmetrics"]);
    assert!(run.status.success(), "{}", run.stderr);
    let text = &run.stdout;
    assert!(text.contains("stepmon_build_steps{build=\"bgi5sx6jy75h6co5pdir1jk4y\",state=\"failed\"} 1\n"), "{text}");
    assert!(text.ends_with("# EOF\n"), "{text}");
}

#[test]
fn report_reads_an_unpacked_bundle_directory() {
    let dir = scratch("history-unpacked");
    let status = std::process::Command::new("tar").arg("xzf").arg(bundle(TWO_PLATFORM)).arg("-C").arg(&*dir).status();
    match status {
        Ok(s) if s.success() => {}
        other => {
            common::skip::skip(
                "report_reads_an_unpacked_bundle_directory",
                format_args!("`tar xzf` failed: {other:?}"),
            );
            return;
        }
    }
    let run = run_stepmon(&["report", dir.to_str().unwrap()]);
    assert!(run.status.success(), "{}", run.stderr);
    assert!(run.stdout.starts_with("build 2778g26vsxllhulx6klicjibt"), "{}", run.stdout);
}

#[test]
fn a_cut_short_bundle_is_a_one_line_error() {
    let dir = scratch("history-cut");
    let bytes = std::fs::read(bundle(TWO_PLATFORM)).unwrap();
    let cut = dir.join("cut.dockerbuild");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let run = run_stepmon(&["report", cut.to_str().unwrap()]);
    assert!(!run.status.success());
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(lines[0].contains("build history bundle: corrupt gzip'd tar"), "{}", run.stderr);
}

/// `stepmon ARGS` with `input` on stdin: (success, stdout, stderr).
fn with_stdin(args: &[&str], input: Vec<u8>) -> (bool, String, String) {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = common::stepmon()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A writer of its own: stepmon may stop reading early (an error).
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn report_reads_a_bundle_from_stdin_gzipd_or_not() {
    let gz = std::fs::read(bundle(TWO_PLATFORM)).unwrap();
    let (ok, from_file, stderr) = {
        let run = run_stepmon(&["report", &bundle(TWO_PLATFORM), "--format", "json"]);
        (run.status.success(), run.stdout, run.stderr)
    };
    assert!(ok, "{stderr}");
    let (ok, stdout, stderr) = with_stdin(&["report", "-", "--format", "json"], gz.clone());
    assert!(ok, "{stderr}");
    assert_eq!(stdout, from_file, "stdin reads as the file does");
    // The same tar without its gzip (the tar magic is sniffed too).
    match std::process::Command::new("gzip").arg("-dc").arg(bundle(TWO_PLATFORM)).output() {
        Ok(out) if out.status.success() => {
            let (ok, stdout, stderr) = with_stdin(&["report", "-", "--format", "json"], out.stdout);
            assert!(ok, "{stderr}");
            assert_eq!(stdout, from_file);
        }
        other => common::skip::skip(
            "report_reads_a_bundle_from_stdin_gzipd_or_not (plain tar)",
            format_args!("`gzip -dc` failed: {other:?}"),
        ),
    }
    // Cut short on stdin: one line, naming stdin.
    let (ok, _, stderr) = with_stdin(&["report", "-"], gz[..gz.len() / 2].to_vec());
    assert!(!ok);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("stdin: build history bundle: corrupt gzip'd tar"), "{stderr}");
    // Neither a bundle nor text.
    let (ok, _, stderr) = with_stdin(&["report", "-"], vec![0xff, 0xfe, 0x00]);
    assert!(!ok);
    assert!(stderr.contains("cannot read stdin: not UTF-8 text, nor a build history bundle"), "{stderr}");
    // Text on stdin still reads as before (a run file).
    let run_file = format!("{}/../report/tests/data/runs/hybrid-exit7.json", env!("CARGO_MANIFEST_DIR"));
    let (ok, stdout, stderr) = with_stdin(&["report", "-"], std::fs::read(run_file).unwrap());
    assert!(ok, "{stderr}");
    assert!(stdout.starts_with("stepmon: "), "{stdout}");
}

#[test]
fn diff_of_two_bundles_compares_their_steps_by_name_and_platform() {
    let run = run_stepmon(&["diff", &bundle(TWO_PLATFORM), &bundle(TWO_PLATFORM), "--fail-if-heavier"]);
    assert!(run.status.success(), "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("`[2/2] RUN echo \"Hello world!\" (Dockerfile:3) [linux/arm64]`"), "{}", run.stdout);
    assert!(run.stdout.contains("stepmon diff: the jobs' totals"), "{}", run.stdout);
    // Two different builds: their steps are named only before / only after,
    // and the failed build's step that never started is not compared.
    let run = run_stepmon(&["diff", &bundle(FAILED), &bundle(TWO_PLATFORM), "--json"]);
    assert!(run.status.success(), "{}", run.stderr);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(json["onlyBefore"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("RUN go build")));
    assert!(json["onlyAfter"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("[linux/amd64]")));
    assert!(
        run.stderr.contains("before: `[stage-2 2/2] COPY --from=build /usr/bin/app /bin/app` never completed"),
        "{}",
        run.stderr
    );
}

/// The bundle's provenance predicates with every `resourceUsage` removed:
/// what Docker Engine's built-in BuildKit writes.
fn predicates_without_usage() -> Vec<serde_json::Value> {
    use stepmon_import::history::{Layout, bundle as layout};
    let bytes = std::fs::read(bundle(TWO_PLATFORM)).unwrap();
    let layout = Layout::from_archive(&bytes).unwrap();
    let records = layout.records().unwrap();
    let mut found = Vec::new();
    for (_, bytes) in records.iter().flat_map(|r| r.layers.iter()).filter(|(d, _)| d.media_type == layout::IN_TOTO) {
        let mut predicate: Value = serde_json::from_slice(bytes).unwrap();
        let Some(steps) = predicate.pointer_mut("/buildConfig/llbDefinition").and_then(Value::as_array_mut) else {
            continue;
        };
        for step in steps {
            step.as_object_mut().unwrap().remove("resourceUsage");
        }
        found.push(predicate);
    }
    assert_eq!(found.len(), 2);
    found
}

#[test]
fn report_of_a_predicate_without_step_usage_is_a_build_level_report() {
    let dir = scratch("history-predicate");
    for (i, predicate) in predicates_without_usage().into_iter().enumerate() {
        let file = dir.join(format!("predicate-{i}.json"));
        std::fs::write(&file, predicate.to_string()).unwrap();
        let file = file.to_str().unwrap();
        let run = run_stepmon(&["report", file]);
        assert_eq!(run.status.code(), Some(0), "{}", run.stderr);
        assert!(run.stdout.contains("no per-step usage: the builder did not record it"), "{}", run.stdout);
        assert!(run.stdout.contains("RUN /bin/sh -c 'echo \"Hello world!\"' (Dockerfile:3)"), "{}", run.stdout);
        assert!(run.stdout.contains("over the build:"), "the machine's usage: {}", run.stdout);
        assert!(!run.stderr.contains("capture-usage=true"), "{}", run.stderr);
        for format in ["json", "markdown", "html"] {
            let run = run_stepmon(&["report", file, "--format", format]);
            assert_eq!(run.status.code(), Some(0), "{format}: {}", run.stderr);
            assert!(run.stdout.contains("Dockerfile:3"), "{format}: {}", run.stdout);
        }
    }
}
