//! The GitHub Action (action.yml, action/*.js) under node, against a
//! scratch directory laid out as GitHub's runner lays out a job: a
//! `RUNNER_TEMP`, and for each step fresh `GITHUB_ENV`, `GITHUB_PATH`,
//! `GITHUB_STATE`, `GITHUB_OUTPUT` files, read back after the step as the
//! runner reads them (`NAME=value` or `NAME<<DELIMITER` heredocs, a
//! directory a line put before PATH, the state given to the post step as
//! `STATE_NAME`), and one `GITHUB_STEP_SUMMARY` for the job. The inputs
//! arrive as `INPUT_NAME` with action.yml's defaults, as the runner gives
//! them.
//!
//! A job is: the action's main step, two `run:` steps through `stepmon
//! shell {0}` (the script in a file, `stepmon` found on the PATH the main
//! step gave, `GITHUB_ACTION` `build` and `test`), then the post step.
//! Once with stepmon installed from a release served over HTTP (python3's
//! http.server on a free loopback port, stopped when the test ends, also
//! when it fails) and once from the `path` input. Then: a release whose
//! binary's sum differs, and one whose binary does not run, fail the main
//! step; a post step with no record gives a notice and exits 0.
//!
//! node is Debian's `nodejs` (scripts/setup); without it the tests print
//! `SKIPPED` and pass, unless `STEPMON_REQUIRE_LIVE=1`.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use common::release::{asset, release};
use common::{scratch, skip};

fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

fn real_stepmon() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_stepmon"))
}

/// `program`'s path on PATH, or `None` after `SKIPPED` (a failure when
/// every live test must run).
fn tool(test: &str, program: &str, why: &str) -> Option<PathBuf> {
    let out = Command::new("sh").args(["-c", &format!("command -v {program}")]).output().unwrap();
    let found = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    if !out.status.success() || found.is_empty() {
        skip::skip(test, format_args!("no {program} ({why})"));
        return None;
    }
    Some(PathBuf::from(found))
}

/// node and python3, or `None` after `SKIPPED`.
fn tools(test: &str) -> Option<(PathBuf, PathBuf)> {
    let node = tool(test, "node", "Debian's nodejs, scripts/setup installs it")?;
    // Debian's first: its python3-prometheus-client reads the OpenMetrics.
    let python = common::python(test)?;
    Some((node, python))
}

/// action.yml's inputs and their defaults (`""` where it has none), read
/// from its `inputs:` block (two-space names, four-space `default:`).
fn action_defaults() -> BTreeMap<String, String> {
    let text = fs::read_to_string(repo_file("action.yml")).unwrap();
    let block = text.split("\ninputs:\n").nth(1).expect("action.yml has inputs").split("\noutputs:").next().unwrap();
    let mut inputs = BTreeMap::new();
    let mut current = None;
    for line in block.lines() {
        if let Some(name) = line.strip_prefix("  ").and_then(|l| l.strip_suffix(':')).filter(|n| !n.starts_with(' ')) {
            inputs.insert(name.to_owned(), String::new());
            current = Some(name.to_owned());
        } else if let (Some(name), Some(value)) = (&current, line.strip_prefix("    default: ")) {
            inputs.insert(name.clone(), value.trim_matches('"').to_owned());
        }
    }
    inputs
}

/// A file command's `NAME=value` and `NAME<<DELIMITER` lines as the runner
/// reads them (actions/runner, `SetEnvFileCommand`): a line is a heredoc
/// when `<<` comes before any `=`.
fn key_values(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.is_empty() {
            continue;
        }
        let (eq, heredoc) = (line.find('='), line.find("<<"));
        match (eq, heredoc) {
            (Some(e), h) if h.is_none_or(|h| e < h) => out.push((line[..e].to_owned(), line[e + 1..].to_owned())),
            (_, Some(h)) => {
                let (name, delimiter) = (&line[..h], &line[h + 2..]);
                let mut value = Vec::new();
                loop {
                    let next = lines.next().unwrap_or_else(|| panic!("{name}: no closing {delimiter}"));
                    if next == delimiter {
                        break;
                    }
                    value.push(next);
                }
                out.push((name.to_owned(), value.join("\n")));
            }
            _ => panic!("a file command line the runner refuses: {line:?}"),
        }
    }
    out
}

/// A job on a runner: what carries from step to step.
struct Job {
    dir: common::Scratch,
    node: PathBuf,
    temp: PathBuf,
    summary: PathBuf,
    /// GITHUB_ENV's variables so far.
    env: BTreeMap<String, String>,
    /// GITHUB_PATH's directories so far, the latest first.
    path: Vec<String>,
    /// The action's GITHUB_STATE, for its post step.
    state: BTreeMap<String, String>,
    /// The action's outputs.
    outputs: BTreeMap<String, String>,
    inputs: BTreeMap<String, String>,
    steps: usize,
}

/// What a step did.
struct Step {
    status: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Job {
    fn new(name: &str, node: PathBuf, inputs: &[(&str, &str)]) -> Job {
        let dir = scratch(name);
        let temp = dir.join("runner-temp");
        fs::create_dir_all(&temp).unwrap();
        let summary = dir.join("step-summary.md");
        let mut all = action_defaults();
        for (k, v) in inputs {
            assert!(all.contains_key(*k), "action.yml has no input {k}");
            all.insert((*k).to_owned(), (*v).to_owned());
        }
        Job {
            dir,
            node,
            temp,
            summary,
            env: BTreeMap::new(),
            path: Vec::new(),
            state: BTreeMap::new(),
            outputs: BTreeMap::new(),
            inputs: all,
            steps: 0,
        }
    }

    fn path_variable(&self) -> String {
        let mut dirs = self.path.clone();
        dirs.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(str::to_owned));
        dirs.join(":")
    }

    /// Runs `command` as the runner runs a step: fresh file-command files,
    /// the job's environment (and nothing of the test's: `command`'s own
    /// variables are cleared), then the files read back.
    fn step(&mut self, command: Command, action: bool) -> Step {
        self.step_with(command, action, &[])
    }

    /// [`Job::step`] with `extra` variables (the post step's state).
    fn step_with(&mut self, mut command: Command, action: bool, extra: &[(String, String)]) -> Step {
        self.steps += 1;
        let files = self.dir.join(format!("step-{}", self.steps));
        fs::create_dir_all(&files).unwrap();
        let file = |name: &str| {
            let path = files.join(name);
            fs::write(&path, "").unwrap();
            path
        };
        let (env, path, state, output) = (file("env"), file("path"), file("state"), file("output"));
        command
            .env_clear()
            .env("HOME", &*self.dir)
            .env("PATH", self.path_variable())
            .env("RUNNER_TEMP", &self.temp)
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_ENV", &env)
            .env("GITHUB_PATH", &path)
            .env("GITHUB_STATE", &state)
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_STEP_SUMMARY", &self.summary)
            .envs(&self.env)
            .envs(extra.iter().map(|(k, v)| (k, v)));
        if action {
            for (name, value) in &self.inputs {
                command.env(format!("INPUT_{}", name.replace(' ', "_").to_uppercase()), value);
            }
        }
        let out: Output = command.output().unwrap();
        for (k, v) in key_values(&fs::read_to_string(&env).unwrap()) {
            self.env.insert(k, v);
        }
        for dir in fs::read_to_string(&path).unwrap().lines().filter(|l| !l.is_empty()) {
            self.path.insert(0, dir.to_owned());
        }
        if action {
            self.state.extend(key_values(&fs::read_to_string(&state).unwrap()));
            self.outputs.extend(key_values(&fs::read_to_string(&output).unwrap()));
        }
        Step {
            status: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The action's main step (`node action/main.js`).
    fn main(&mut self) -> Step {
        let mut command = Command::new(&self.node);
        command.arg(repo_file("action/main.js"));
        self.step(command, true)
    }

    /// The action's post step, with the main step's state.
    fn post(&mut self) -> Step {
        let mut command = Command::new(&self.node);
        command.arg(repo_file("action/post.js"));
        let state: Vec<(String, String)> = self.state.iter().map(|(k, v)| (format!("STATE_{k}"), v.clone())).collect();
        self.step_with(command, true, &state)
    }

    /// A `run:` step with `shell: stepmon shell {0}`: the script in a file
    /// of RUNNER_TEMP, `stepmon` found on the job's PATH.
    fn run(&mut self, id: &str, script: &str) -> Step {
        let file = self.temp.join(format!("{id}-{}.sh", self.steps));
        fs::write(&file, script).unwrap();
        let stepmon = self
            .path_variable()
            .split(':')
            .map(|d| Path::new(d).join("stepmon"))
            .find(|p| p.exists())
            .expect("stepmon on the job's PATH");
        let mut command = Command::new(stepmon);
        command.arg("shell").arg(&file).current_dir(&*self.dir);
        self.step_with(command, false, &[("GITHUB_ACTION".to_owned(), id.to_owned())])
    }
}

/// python3's http.server serving one directory on a free loopback port,
/// killed and reaped on drop (also when the test fails).
struct Server {
    child: Child,
    base: String,
}

impl Server {
    fn start(python: &Path, root: &Path) -> Server {
        // Port 0: the kernel picks a free one, and the server says which.
        let mut child = Command::new(python)
            .args(["-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory"])
            .arg(root)
            .arg("0")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        // Owned (killed on drop) before the line is checked.
        let mut server = Server { child, base: String::new() };
        // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        let port = line.split(" port ").nth(1).and_then(|r| r.split(' ').next()).unwrap_or_else(|| panic!("{line}"));
        server.base = format!("http://127.0.0.1:{port}");
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The OpenMetrics text as prometheus_client's parser reads it (Debian's
/// python3-prometheus-client, scripts/setup): the step labels of its samples.
fn openmetrics_steps(python: &Path, file: &Path) -> Vec<String> {
    let out = Command::new(python)
        .arg("-c")
        .arg(
            "import sys\n\
             from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse\n\
             steps = {s.labels['step'] for f in parse(open(sys.argv[1]).read()) for s in f.samples if 'step' in s.labels}\n\
             print('\\n'.join(sorted(steps)))",
        )
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the OpenMetrics parser refused {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_owned).collect()
}

/// A script that keeps a few CPUs busy for about a second (several samples
/// however loaded the machine: the charts need them) and holds some memory.
const BUILD: &str = "for i in 1 2 3; do head -c 200000000 /dev/zero | sha256sum >/dev/null & done\nwait\necho built\n";
const TEST: &str = "echo tested\n";

/// The job's steps and what the post step made of them.
fn whole_job(test: &str, job: &mut Job, python: &Path) {
    let main = job.main();
    assert_eq!(main.status, Some(0), "main: {}{}", main.stdout, main.stderr);
    assert!(!main.stdout.contains("::error::"), "{}", main.stdout);
    let record = job.temp.join("stepmon/job.jsonl");
    assert_eq!(job.env.get("STEPMON_JOB").map(PathBuf::from), Some(record.clone()), "GITHUB_ENV");
    assert_eq!(job.outputs.get("record").map(PathBuf::from), Some(record.clone()), "GITHUB_OUTPUT");
    assert_eq!(job.path, [job.temp.join("stepmon/bin").to_str().unwrap()], "GITHUB_PATH");
    let installed = job.temp.join("stepmon/bin/stepmon");
    assert!(fs::read(&installed).unwrap() == fs::read(real_stepmon()).unwrap(), "{test}: not the binary");

    for (id, script, says) in [("build", BUILD, "built"), ("test", TEST, "tested")] {
        let step = job.run(id, script);
        assert_eq!(step.status, Some(0), "{id}: {}", step.stderr);
        assert_eq!(step.stdout, format!("{says}\n"), "{id}");
    }
    assert!(record.exists(), "the shell steps wrote no record");

    // A later use of the action with `files`, before the job's upload
    // step: the files of the job so far, at once (post steps run only
    // after every step); its own post step leaves the report to the first.
    let now = job.dir.join("files-now");
    let (first_state, first_outputs) = (std::mem::take(&mut job.state), std::mem::take(&mut job.outputs));
    let saved_files = job.inputs.insert("files".into(), now.to_str().unwrap().into());
    let later = job.main();
    assert_eq!(later.status, Some(0), "a later use: {}{}", later.stdout, later.stderr);
    assert_eq!(fs::read(now.join("stepmon.jsonl")).unwrap(), fs::read(&record).unwrap(), "a later use's record");
    assert_eq!(openmetrics_steps(python, &now.join("stepmon.openmetrics.txt")), ["build", "test"]);
    let summary_before = fs::read(&job.summary).unwrap_or_default();
    let later_post = job.post();
    assert_eq!(later_post.status, Some(0), "{}", later_post.stdout);
    assert_eq!(fs::read(&job.summary).unwrap_or_default(), summary_before, "a later use's post step reported");
    (job.state, job.outputs) = (first_state, first_outputs);
    match saved_files {
        Some(files) => job.inputs.insert("files".into(), files),
        None => job.inputs.remove("files"),
    };

    let post = job.post();
    assert_eq!(post.status, Some(0), "post: {}{}", post.stdout, post.stderr);
    assert!(!post.stdout.contains("::warning::") && !post.stdout.contains("::error::"), "{}", post.stdout);
    let summary = fs::read_to_string(&job.summary).unwrap();
    // The table: a row for each step, by its GITHUB_ACTION name.
    assert!(summary.starts_with("## stepmon job\n"), "{summary}");
    assert!(summary.contains("job: 2 steps"), "{summary}");
    let rows: Vec<&str> = summary.lines().filter(|l| l.starts_with("| 1 | ") || l.starts_with("| 2 | ")).collect();
    assert_eq!(rows.len(), 2, "{summary}");
    // Each by its script's first command line.
    assert!(
        rows[0].starts_with("| 1 | build (for i in 1 2 3;") && rows[1].starts_with("| 2 | test (echo tested) |"),
        "{rows:?}"
    );
    // The verdicts, the -j advice (with why there is none), the charts.
    assert!(summary.contains("**The job's machine**\n\n- the job used "), "{summary}");
    // The build step ran three sha256sum at once: its workers are in the
    // record and advised on (where stepmon gets per-process records: as
    // root); the test step ran no command three times.
    let advice = summary.split("**Parallelism (`-j`)**\n\n").nth(1).unwrap().split("\n\n").next().unwrap();
    let build = advice.lines().find(|l| l.starts_with("- build (for i")).unwrap_or_else(|| panic!("{advice}"));
    if rustix::process::geteuid().is_root() {
        assert!(build.contains("parallelism: up to 3 sha256sum ran at once (3 runs)"), "{build}");
    }
    let test = advice.lines().find(|l| l.starts_with("- test (echo")).unwrap_or_else(|| panic!("{advice}"));
    assert!(test.contains(": no parallelism advice"), "{test}");
    let charts: Vec<&str> = summary.split("```mermaid\n").skip(1).collect();
    assert_eq!(charts.len(), 2, "{summary}");
    for (chart, title) in charts.iter().zip(["CPU of the job's steps together", "Memory in use"]) {
        assert!(chart.starts_with(&format!("xychart-beta\n    title \"{title}")), "{chart}");
        assert!(chart.contains("x-axis \"time since the job started\""), "{chart}");
        let line = chart.lines().find_map(|l| l.trim().strip_prefix("line [")).unwrap();
        let values: Vec<f64> = line.trim_end_matches(']').split(", ").map(|v| v.parse().unwrap()).collect();
        assert!(values.len() >= 2 && values.iter().any(|v| *v > 0.0), "{title}: {values:?}");
    }

    // The files: the record as it is, the OpenMetrics of both steps.
    let files = PathBuf::from(&job.inputs["files"]);
    assert_eq!(fs::read(files.join("stepmon.jsonl")).unwrap(), fs::read(&record).unwrap());
    assert_eq!(openmetrics_steps(python, &files.join("stepmon.openmetrics.txt")), ["build", "test"]);
}

#[test]
fn installs_from_a_release_over_http_measures_two_steps_and_summarises() {
    let name = "installs_from_a_release_over_http_measures_two_steps_and_summarises";
    let Some((node, python)) = tools(name) else { return };
    let mut job = Job::new(name, node, &[]);
    let rel = release(&job.dir.join("release"), real_stepmon(), None);
    let server = Server::start(&python, &rel);
    let files = job.dir.join("files");
    job.inputs.insert("release-base".into(), server.base.clone());
    job.inputs.insert("files".into(), files.to_str().unwrap().into());
    whole_job(name, &mut job, &python);
}

#[test]
fn takes_the_path_input_measures_two_steps_and_summarises() {
    let name = "takes_the_path_input_measures_two_steps_and_summarises";
    let Some((node, python)) = tools(name) else { return };
    let mut job = Job::new(name, node, &[]);
    // Nothing to download from: a base that is not there.
    let files = job.dir.join("files");
    job.inputs.insert("path".into(), real_stepmon().to_str().unwrap().into());
    job.inputs.insert("release-base".into(), job.dir.join("no-release").to_str().unwrap().into());
    job.inputs.insert("files".into(), files.to_str().unwrap().into());
    whole_job(name, &mut job, &python);
    assert!(fs::symlink_metadata(job.temp.join("stepmon/bin/stepmon")).unwrap().file_type().is_symlink());
}

/// A main step that fails: an `::error::` saying `says`, nothing on PATH,
/// no job record set, nothing installed.
fn assert_refused(job: &mut Job, says: &str) {
    let main = job.main();
    assert_eq!(main.status, Some(1), "{}{}", main.stdout, main.stderr);
    let error = main.stdout.lines().find(|l| l.starts_with("::error::")).unwrap_or_else(|| panic!("{}", main.stdout));
    assert!(error.contains(says) && error.contains("nothing installed"), "{error}");
    assert!(job.path.is_empty() && job.env.is_empty() && job.state.is_empty());
    let bin = job.temp.join("stepmon/bin");
    assert!(!bin.exists() || fs::read_dir(&bin).unwrap().count() == 0, "left in {}", bin.display());
}

#[test]
fn refuses_a_binary_whose_sum_differs_or_that_does_not_run() {
    let name = "refuses_a_binary_whose_sum_differs_or_that_does_not_run";
    let Some((node, python)) = tools(name) else { return };
    let mut job = Job::new(name, node.clone(), &[]);
    let other = "0".repeat(64);
    let rel = release(&job.dir.join("release"), real_stepmon(), Some(&other));
    let server = Server::start(&python, &rel);
    job.inputs.insert("release-base".into(), server.base.clone());
    assert_refused(&mut job, &format!("SHA-256 mismatch for {}/{}", server.base, asset()));

    let mut job = Job::new(name, node, &[]);
    let broken = job.dir.join("broken");
    common::write_executable(&broken, "#!/bin/sh\necho 'cannot execute: Exec format error' >&2\nexit 126\n");
    let rel = release(&job.dir.join("release"), &broken, None);
    job.inputs.insert("release-base".into(), rel.to_str().unwrap().into());
    assert_refused(&mut job, "does not run here");
}

#[test]
fn post_without_a_record_gives_a_notice_and_exits_0() {
    let name = "post_without_a_record_gives_a_notice_and_exits_0";
    let Some((node, _)) = tools(name) else { return };
    let mut job = Job::new(name, node, &[("path", real_stepmon().to_str().unwrap())]);
    assert_eq!(job.main().status, Some(0));
    // No step ran through stepmon shell.
    let post = job.post();
    assert_eq!(post.status, Some(0), "{}{}", post.stdout, post.stderr);
    let notice = post.stdout.lines().find(|l| l.starts_with("::notice::")).unwrap_or_else(|| panic!("{}", post.stdout));
    assert!(notice.contains("no step was measured"), "{notice}");
    assert!(!job.summary.exists() || fs::read_to_string(&job.summary).unwrap().is_empty());

    // And when the main step failed (no state): a notice, exit 0.
    let mut job = Job::new(name, job.node.clone(), &[]);
    let post = job.post();
    assert_eq!(post.status, Some(0), "{}{}", post.stdout, post.stderr);
    assert!(post.stdout.starts_with("::notice::stepmon: the main step did not install stepmon"), "{}", post.stdout);
}

/// action.yml as PyYAML reads it (Debian's python3-yaml, scripts/setup):
/// node20 running the two scripts there are, the inputs with the defaults
/// the tests give, the `record` output.
#[test]
fn action_yml_runs_the_scripts_with_the_inputs_given_here() {
    let name = "action_yml_runs_the_scripts_with_the_inputs_given_here";
    let Some(python) = common::python(name) else { return };
    let out = Command::new(python)
        .arg("-c")
        .arg(
            "import json, sys, yaml\n\
             a = yaml.safe_load(open(sys.argv[1]))\n\
             print(json.dumps({'runs': a['runs'], 'outputs': sorted(a['outputs']),\n\
                               'inputs': {k: str(v.get('default', '')) for k, v in a['inputs'].items()}}))",
        )
        .arg(repo_file("action.yml"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let read: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        read["runs"],
        serde_json::json!({"using": "node20", "main": "action/main.js", "post": "action/post.js"})
    );
    assert!(repo_file("action/main.js").exists() && repo_file("action/post.js").exists());
    assert_eq!(read["outputs"], serde_json::json!(["record"]));
    let defaults: BTreeMap<String, String> = serde_json::from_value(read["inputs"].clone()).unwrap();
    assert_eq!(defaults, action_defaults());
    assert_eq!(defaults["version"], "latest");
    assert_eq!(defaults["summary"], "true");
}

/// The action's repository is the one install.sh names (install_script.rs
/// keeps that equal to cli/Cargo.toml's `repository`).
#[test]
fn the_action_names_the_repository_install_sh_names() {
    let script = fs::read_to_string(repo_file("scripts/install.sh")).unwrap();
    let repository = script.lines().find_map(|l| l.strip_prefix("repository=")).unwrap();
    let main = fs::read_to_string(repo_file("action/main.js")).unwrap();
    assert!(main.contains(&format!("const REPOSITORY = '{repository}';")), "action/main.js names another repository");
}
