//! The GitLab CI recipe of docs/ci.md, run as GitLab's runner runs a job:
//! its own lines, read from the page (so the page and the test cannot
//! drift), with GitLab's predefined variables, `variables:` exported,
//! `before_script` and `script` in one shell and `after_script` in another.
//! Its `curl … | sh` install line is served from a local directory standing
//! in for the release (a `curl` on PATH answers the release's URLs from it;
//! the binary is the one under test).
//!
//! Checked: the job log (the after_script's output) holds the job's report;
//! the metrics report parses as GitLab's reader parses it (the text before a
//! line's first `#`, split into shell words: name and labels, then value;
//! an open quote fails the whole report) and holds each step's numbers, as
//! `stepmon report --format json` gives them, to three significant digits;
//! and two runs of the job, on different runners and pipelines, compared as
//! the merge request widget compares them (by name and labels, values as
//! strings), name the same metrics and show the step that got heavier.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::fixtures::copy_tree;
use common::release::release;
use common::{python, scratch, skip};
use serde_json::Value;

/// The page the recipe lives on.
fn ci_page() -> PathBuf {
    [env!("CARGO_MANIFEST_DIR"), "..", "docs", "ci.md"].iter().collect()
}

/// The recipe: the first ```yaml block after the `## GitLab CI` heading.
fn recipe_yaml() -> String {
    let page = fs::read_to_string(ci_page()).unwrap();
    let section = page.split_once("\n## GitLab CI\n").expect("docs/ci.md has a `## GitLab CI` section").1;
    let block = section.split_once("```yaml\n").expect("a yaml block in the GitLab CI section").1;
    block.split_once("\n```").unwrap().0.to_owned()
}

/// The recipe's one job, as YAML reads it (PyYAML, as scripts/readme-check
/// reads the page's blocks).
fn recipe_job(python: &Path) -> (String, Value) {
    let out = Command::new(python)
        .args(["-c", "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().unwrap().write_all(recipe_yaml().as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success(), "the recipe is YAML: {}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let jobs: Vec<(&String, &Value)> = doc.as_object().unwrap().iter().filter(|(k, _)| !k.starts_with('.')).collect();
    assert_eq!(jobs.len(), 1, "one job in the recipe: {doc}");
    (jobs[0].0.clone(), jobs[0].1.clone())
}

fn lines_of(job: &Value, key: &str) -> Vec<String> {
    job[key].as_array().map_or_else(Vec::new, |a| a.iter().map(|l| l.as_str().unwrap().to_owned()).collect())
}

/// A `curl` that serves the release's URLs from `release` (and nothing else).
fn fake_curl(bin: &Path, release: &Path) {
    let script = format!(
        r#"#!/bin/sh
# curl [-fsSL] [--retry N] [-o FILE] URL, for this repository's release URLs only.
out=
while [ $# -gt 1 ]; do
    case $1 in
        -o) out=$2; shift 2 ;;
        --retry) shift 2 ;;
        -*) shift ;;
        *) break ;;
    esac
done
case $1 in
    https://github.com/stepmon/stepmon/releases/latest/download/*) file={release}/${{1##*/}} ;;
    *) echo "curl: (6) no such host in this test: $1" >&2; exit 6 ;;
esac
[ -f "$file" ] || {{ echo "curl: (22) 404: $1" >&2; exit 22; }}
if [ -n "$out" ]; then cp "$file" "$out"; else cat "$file"; fi
"#,
        release = release.display()
    );
    fs::create_dir_all(bin).unwrap();
    let curl = bin.join("curl");
    common::write_executable(&curl, script);
}

/// A project whose `make deps`, `make -j…` and `make check` do work of
/// known sizes: `build` sums `n` numbers in awk.
fn write_project(dir: &Path, n: u64) {
    fs::create_dir_all(dir).unwrap();
    let makefile = format!(
        "all:\n\tawk 'BEGIN {{ for (i = 0; i < {n}; i++) s += i; print s }}'\n\
         deps:\n\ttrue\n\
         check:\n\tawk 'BEGIN {{ for (i = 0; i < 200000; i++) s += i; print s }}'\n\
         .PHONY: all deps check\n"
    );
    fs::write(dir.join("Makefile"), makefile).unwrap();
}

/// Where a job of the recipe runs: its runner, pipeline and branch.
struct Place<'a> {
    runner: &'a str,
    pipeline: &'a str,
    branch: &'a str,
}

/// Runs the job in `project` as GitLab's runner would: returns the main
/// part's and the after_script's output.
fn run_job(name: &str, job: &Value, project: &Path, bin: &Path, place: &Place<'_>) -> (Output, Output) {
    let Place { runner, pipeline, branch } = *place;
    let home = project.parent().unwrap().join("home");
    fs::create_dir_all(&home).unwrap();
    let mut variables = String::new();
    for (key, value) in job["variables"].as_object().into_iter().flatten() {
        // GitLab expands a variable's value against the job's variables.
        variables.push_str(&format!("export {key}=\"{}\"\n", value.as_str().unwrap()));
    }
    let shell = |lines: Vec<String>, status: Option<&str>| -> Output {
        // GitLab's bash scripts stop at the first failing line (`set -eo pipefail`).
        let script = format!("set -eo pipefail\n{variables}{}\n", lines.join("\n"));
        let mut command = Command::new("bash");
        command
            .arg("-c")
            .arg(script)
            .current_dir(project)
            .env_clear()
            .env("PATH", format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()))
            .env("HOME", &home)
            .env("GITLAB_CI", "true")
            .env("CI", "true")
            .env("CI_PROJECT_DIR", project)
            .env("CI_PROJECT_PATH", "group/project")
            .env("CI_JOB_NAME", name)
            .env("CI_JOB_ID", format!("{pipeline}01"))
            .env("CI_PIPELINE_ID", pipeline)
            .env("CI_RUNNER_DESCRIPTION", runner)
            .env("CI_COMMIT_BRANCH", branch)
            .env("CI_DEFAULT_BRANCH", "main")
            .env("CI_JOB_URL", format!("https://gitlab.example/group/project/-/jobs/{pipeline}01"));
        if let Some(status) = status {
            // Set for after_script alone: how the main part ended.
            command.env("CI_JOB_STATUS", status);
        }
        command.output().unwrap()
    };
    let mut main = lines_of(job, "before_script");
    main.extend(lines_of(job, "script"));
    let main = shell(main, None);
    let status = if main.status.success() { "success" } else { "failed" };
    let after = shell(lines_of(job, "after_script"), Some(status));
    (main, after)
}

/// GitLab's reading of a metrics report: each line's text before its first
/// `#`, split into shell words; the first is the metric (name and labels),
/// the second its value. `Err` where GitLab's reader fails the report.
fn gitlab_metrics(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut metrics = BTreeMap::new();
    for line in text.lines() {
        let kept = line.split_once('#').map_or(line, |(before, _)| before);
        let words = shell_words(kept).map_err(|e| format!("{e}: {line:?}"))?;
        if let [name, value, ..] = words.as_slice() {
            metrics.insert(name.clone(), value.clone());
        }
    }
    Ok(metrics)
}

/// Shell words as Ruby's `Shellwords.shellsplit` makes them: blanks apart,
/// `'…'` literal, `"…"` with `\"`, `\\`, `\$` and `` \` `` unescaped, a
/// backslash outside quotes escaping the next character; an open quote is
/// an error.
fn shell_words(text: &str) -> Result<Vec<String>, &'static str> {
    let mut words = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Ok(words);
        }
        let mut word = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            match c {
                '\'' => loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unmatched quote"),
                    }
                },
                '"' => loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unmatched quote"),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unmatched quote"),
                    }
                },
                '\\' => word.extend(chars.next()),
                c => word.push(c),
            }
        }
        words.push(word);
    }
}

#[test]
fn the_shell_words_reader_reads_as_gitlab_does() {
    let read = |text: &str| gitlab_metrics(text).unwrap().into_iter().collect::<Vec<_>>();
    assert_eq!(
        read("# TYPE a gauge\na{step=\"x y\"} 1.5 # {trace} 1\n# EOF\n"),
        [("a{step=x y}".into(), "1.5".into())]
    );
    assert_eq!(read("b{s=\"q\\\"\\\\\"} 2\n"), [("b{s=q\"\\}".into(), "2".into())]);
    // A `#` inside a label value cuts the line and leaves a quote open.
    assert!(gitlab_metrics("c{step=\"build #2\"} 3\n").is_err());
    assert!(gitlab_metrics("d{step=\"it's\"} 4\n").is_ok());
}

/// Whether the report's `report` is the record's `json` to three
/// significant digits (half a unit of the third digit, relative).
fn agrees(report: f64, json: f64) -> bool {
    (report - json).abs() <= json.abs() * 0.005 + f64::EPSILON
}

#[test]
fn gitlab_recipe_writes_the_job_log_and_a_metrics_report_the_merge_request_compares() {
    let name = "gitlab_recipe_writes_the_job_log_and_a_metrics_report_the_merge_request_compares";
    let Some(python) = python(name) else { return };
    let has = |tool: &str| {
        Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().is_ok_and(|o| o.status.success())
    };
    for tool in ["make", "awk", "bash", "sha256sum"] {
        if !has(tool) {
            return skip::skip(name, format_args!("no {tool} to run the recipe"));
        }
    }
    let (job_name, job) = recipe_job(&python);
    let metrics_path = job["artifacts"]["reports"]["metrics"].as_str().expect("artifacts:reports:metrics names a file");
    assert_eq!(job["artifacts"]["when"], "always", "the report of a failed job too");
    assert!(lines_of(&job, "after_script").iter().any(|l| l.contains("stepmon report")), "the report goes to the log");

    let dir = scratch("gitlab-recipe");
    let release = release(&dir.join("release"), Path::new(env!("CARGO_BIN_EXE_stepmon")), None);
    let bin = dir.join("bin");
    fake_curl(&bin, &release);

    // The target branch's job, then the merge request's, whose build does
    // ten times the work: other runners, other pipelines; GitLab's cache
    // carries the baseline directory from the first to the second.
    let cache = job["cache"]["paths"][0].as_str().expect("the recipe caches the baseline's directory");
    let places = [
        (2_000_000u64, Place { runner: "runner-blue-7", pipeline: "1001", branch: "main" }),
        (20_000_000, Place { runner: "runner-green-3", pipeline: "1002", branch: "feature" }),
    ];
    let mut reports = Vec::new();
    for (run, (n, place)) in places.iter().enumerate() {
        let project = dir.join(format!("run{run}/project"));
        write_project(&project, *n);
        if run == 1 {
            // GitLab's cache restored.
            copy_tree(&dir.join("run0/project").join(cache), &project.join(cache));
        }
        let (main, after) = run_job(&job_name, &job, &project, &bin, place);
        let main_err = String::from_utf8_lossy(&main.stderr);
        let main_out = String::from_utf8_lossy(&main.stdout);
        assert!(main_err.contains("installed stepmon "), "run {run}: the install line ran: {main_err}");
        if run == 0 {
            // No baseline yet: a notice, and the job passes.
            assert!(main.status.success(), "run 0: before_script and script: {main_err}");
            assert!(main_err.contains("stepmon: notice: no baseline at "), "run 0: {main_err}");
        } else {
            // The baseline from the cache: the heavier build fails the job.
            assert_eq!(main.status.code(), Some(1), "run 1: the gate: {main_out}{main_err}");
            let build = main_out.split("stepmon diff: `build").nth(1).expect("the build compared");
            let verdict = build.lines().nth(1).unwrap_or_default();
            assert!(verdict.contains("verdict  heavier"), "run 1: the build named heavier: {main_out}");
        }
        assert!(after.status.success(), "run {run}: after_script: {}", String::from_utf8_lossy(&after.stderr));
        // Only the default branch's successful job becomes the baseline:
        // the first run's record, which the second leaves as it was.
        let record =
            job["variables"]["STEPMON_JOB"].as_str().unwrap().replace("$CI_PROJECT_DIR", project.to_str().unwrap());
        let first_record = dir.join("run0/project").join(Path::new(&record).strip_prefix(&project).unwrap());
        let baseline = fs::read(project.join(cache).join("job.jsonl")).expect("a baseline in the cached directory");
        assert!(baseline == fs::read(&first_record).unwrap(), "run {run}: the baseline is the main branch's record");

        // The job log: the job's table of steps.
        let log = String::from_utf8_lossy(&after.stdout);
        for step in ["deps", "build", "test"] {
            assert!(log.lines().any(|l| l.contains(step)), "run {run}: no row for {step} in the job log:\n{log}");
        }

        // The metrics report, as GitLab reads it, against the job's JSON.
        let text = fs::read_to_string(project.join(metrics_path)).unwrap();
        assert!(text.ends_with("# EOF\n"), "an OpenMetrics exposition: {text}");
        let metrics = gitlab_metrics(&text).unwrap_or_else(|e| panic!("run {run}: GitLab would fail the report: {e}"));
        let json = common::stepmon().args(["report", &record, "--format", "json"]).output().unwrap();
        assert!(json.status.success(), "{}", String::from_utf8_lossy(&json.stderr));
        let json: Value = serde_json::from_slice(&json.stdout).unwrap();
        let steps = json["steps"].as_array().expect("the job's steps");
        assert_eq!(steps.len(), 3, "{json}");
        for step in steps {
            let step_name = step["name"].as_str().unwrap();
            for (metric, field) in
                [("stepmon_step_wall_seconds", "wallSeconds"), ("stepmon_step_cpu_usage_seconds_total", "cpuSeconds")]
            {
                let key = format!("{metric}{{step={step_name}}}");
                let value: f64 =
                    metrics.get(&key).unwrap_or_else(|| panic!("run {run}: no {key} in\n{text}")).parse().unwrap();
                let wanted = step[field].as_f64().unwrap_or_else(|| panic!("no {field} in {step}"));
                assert!(agrees(value, wanted), "run {run}: {key} {value}, the record says {wanted}");
            }
            assert_eq!(
                metrics.get(&format!("stepmon_step_exit_code{{step={step_name}}}")).map(String::as_str),
                Some("0")
            );
        }
        for key in ["stepmon_job_wall_seconds", "stepmon_job_cpu_usage_seconds_total"] {
            assert!(metrics.contains_key(key), "run {run}: no {key} in\n{text}");
        }
        // Nothing that differs from run to run names a metric.
        for varying in [place.runner, place.pipeline, "index=", "ci_runner"] {
            assert!(!metrics.keys().any(|k| k.contains(varying)), "run {run}: {varying} in a metric's name:\n{text}");
        }
        reports.push(metrics);
    }

    // The merge request widget: metrics paired by name and labels.
    let (target, change) = (&reports[0], &reports[1]);
    let names = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(target), names(change), "no metric new or removed between two runs of one job");
    let cpu = "stepmon_step_cpu_usage_seconds_total{step=build}";
    let (before, after): (f64, f64) = (target[cpu].parse().unwrap(), change[cpu].parse().unwrap());
    assert_ne!(target[cpu], change[cpu], "the widget shows the build's CPU as changed");
    assert!(after > 3.0 * before, "ten times the work: {before} s then {after} s of CPU");
}
