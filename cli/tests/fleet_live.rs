//! The fleet outputs against the real servers, started here on free
//! loopback ports and stopped when each test ends (also when it fails):
//! `stepmon run --push` and `stepmon push` into Pushgateway, Prometheus
//! scraping that Pushgateway, node_exporter's textfile collector reading
//! `--textfile`, and `promtool check metrics` on every Prometheus text the
//! tests produce.
//!
//! The servers are Debian's `prometheus` (with `promtool`),
//! `prometheus-pushgateway` and `prometheus-node-exporter`, installed by
//! `scripts/setup`. Without them a test prints `SKIPPED <test>: <why>` and
//! passes, unless `STEPMON_REQUIRE_LIVE=1` (scripts/test), when it
//! fails.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{f64_at, json, run_stepmon, run_stepmon_with, scratch, stepmon};

const PUSHGATEWAY: &str = "prometheus-pushgateway";
const PROMETHEUS: &str = "prometheus";
const NODE_EXPORTER: &str = "prometheus-node-exporter";
const PROMTOOL: &str = "promtool";

/// A step that is busy on the CPU for a few hundred milliseconds.
const CPU_BOUND: &[&str] = &["sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"];

/// Whether every program in `tools` is on PATH; else `SKIPPED` (or a
/// failure when the tools are required).
fn have(test: &str, tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|tool| {
            Command::new(tool).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_err()
        })
        .collect();
    if missing.is_empty() {
        return true;
    }
    common::skip::skipped(test, format_args!("{} not installed (scripts/setup installs them)", missing.join(", ")))
}

/// A loopback port nothing listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A server process, killed and reaped when dropped (also when the test
/// panics); its output goes to a log shown when it fails to come up.
struct Server {
    name: &'static str,
    child: Child,
    log: PathBuf,
    base: String,
}

impl Server {
    /// Starts `program args` with its log in `dir` and waits until
    /// `GET base/ready_path` answers 200 (at most 30 s).
    fn start(name: &'static str, dir: &Path, port: u16, ready_path: &str, args: &[String]) -> Server {
        let log = dir.join(format!("{name}.log"));
        let file = std::fs::File::create(&log).unwrap();
        let child = Command::new(name)
            .args(args)
            .stdin(Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        let mut server = Server { name, child, log, base: format!("http://127.0.0.1:{port}") };
        let start = Instant::now();
        loop {
            if let Ok((200, _)) = http(false, &format!("{}{ready_path}", server.base), 2) {
                return server;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("{name} exited with {status}:\n{}", server.log_text());
            }
            assert!(start.elapsed() < Duration::from_secs(30), "{name} not ready in 30 s:\n{}", server.log_text());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn get(&self, path: &str) -> String {
        let (status, text) = http(false, &format!("{}{path}", self.base), 10).unwrap();
        assert_eq!(status, 200, "{} {path}: {text}", self.name);
        text
    }
}

/// A GET (or, `delete`, a DELETE) of `url` with a timeout of `seconds`:
/// the status and the body.
fn http(delete: bool, url: &str, seconds: u64) -> Result<(u16, String), ureq::Error> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(seconds)))
        .http_status_as_error(false)
        .build()
        .into();
    let mut answer = if delete { agent.delete(url).call()? } else { agent.get(url).call()? };
    Ok((answer.status().as_u16(), answer.body_mut().read_to_string()?))
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pushgateway(dir: &Path) -> Server {
    let port = free_port();
    // No persistence file: Debian's default is under /var/lib/prometheus.
    let args = [format!("--web.listen-address=127.0.0.1:{port}"), "--persistence.file=".to_owned()];
    Server::start(PUSHGATEWAY, dir, port, "/-/ready", &args)
}

/// One sample of an exposition: name, labels, value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Reads the samples of a Prometheus text exposition (comments skipped,
/// label values unescaped: `\\`, `\"`, `\n`).
fn samples(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let (name, rest) = line.split_at(line.find(['{', ' ']).unwrap());
        let mut labels = BTreeMap::new();
        let mut chars = rest.chars().peekable();
        if chars.peek() == Some(&'{') {
            chars.next();
            loop {
                let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
                let key = key.trim_start_matches(',').to_owned();
                if key.is_empty() || key == "}" {
                    break;
                }
                assert_eq!(chars.next(), Some('"'), "{line}");
                let mut value = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some('n') => value.push('\n'),
                            Some(c) => value.push(c),
                            None => panic!("{line}"),
                        },
                        c => value.push(c),
                    }
                }
                labels.insert(key, value);
                if chars.peek() == Some(&'}') {
                    chars.next();
                    break;
                }
            }
        }
        let rest: String = chars.collect();
        let value = rest.split_whitespace().next().unwrap().parse().unwrap();
        out.push(Sample { name: name.to_owned(), labels, value });
    }
    out
}

/// The values of `name` whose labels include `want`.
fn values(samples: &[Sample], name: &str, want: &[(&str, &str)]) -> Vec<f64> {
    samples
        .iter()
        .filter(|s| s.name == name && want.iter().all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v)))
        .map(|s| s.value)
        .collect()
}

/// `promtool check metrics` accepts `text` and prints nothing.
fn assert_promtool_clean(text: &str) {
    let mut child = Command::new(PROMTOOL)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let printed = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && printed.is_empty(), "promtool: {}: {printed}\n--- input:\n{text}", out.status);
}

/// `stepmon report FILE --format prometheus`, checked by promtool.
fn prometheus_text(run: &Path) -> String {
    let out = stepmon().args(["report", "--format", "prometheus"]).arg(run).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_promtool_clean(&text);
    text
}

/// `stepmon run ARGS -o FILE -- COMMAND`: its exit status and stderr.
fn run(file: &Path, args: &[&str], command: &[&str]) -> (i32, String) {
    let mut all: Vec<&str> = vec!["run", "-q", "-o", file.to_str().unwrap()];
    all.extend_from_slice(args);
    all.push("--");
    all.extend_from_slice(command);
    let finished = run_stepmon(&all);
    (finished.status.code().unwrap(), finished.stderr)
}

/// The sample families a run's Prometheus text has.
fn family_names(text: &str) -> std::collections::BTreeSet<String> {
    samples(text).into_iter().map(|s| s.name).collect()
}

/// A step name and label value no path segment or label may garble.
const HOSTILE: &str = "a/b \"quoted\" \\ back\nslash ü ✓";

#[test]
fn pushgateway_keeps_every_step_group() {
    if !have("pushgateway_keeps_every_step_group", &[PUSHGATEWAY, PROMTOOL]) {
        return;
    }
    let dir = scratch("fleet-pushgateway");
    let gateway = pushgateway(&dir);
    let (cpu, other, hostile) = (dir.join("cpu.json"), dir.join("other.json"), dir.join("hostile.json"));
    let push = ["--push", gateway.base.as_str(), "--push-instance", "runner-1"];
    let (code, stderr) = run(&cpu, &[&push[..], &["--name", "cpu-bound"]].concat(), CPU_BOUND);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let cpu_text = prometheus_text(&cpu);
    let document = json(&cpu);
    assert!(document.pointer("/stepmon/warnings").is_none(), "{document}");
    let cpu_seconds = f64_at(&document, "/stepmon/summary/cpu/usageSeconds");
    assert!(cpu_seconds > 0.05, "not CPU-bound: {cpu_seconds} s");

    let group = [("job", "stepmon"), ("instance", "runner-1"), ("step", "cpu-bound")];
    let held = samples(&gateway.get("/metrics"));
    assert_eq!(values(&held, "stepmon_step_cpu_usage_seconds_total", &group), vec![cpu_seconds]);
    // Every family of the step, with the grouping labels.
    for name in family_names(&cpu_text) {
        assert!(!values(&held, &name, &group).is_empty(), "Pushgateway lacks {name} of the step");
    }

    // Another step (pushed from its file) and a hostile name: new groups,
    // the first one stays.
    let (code, stderr) = run(&other, &["--name", "other", "--label", "team=infra"], &["true"]);
    assert_eq!(code, 0, "{stderr}");
    let pushed = run_stepmon(&["push", other.to_str().unwrap(), "--to", &gateway.base, "--push-instance", "runner-1"]);
    assert!(pushed.status.success() && pushed.stderr.is_empty(), "{}", pushed.stderr);
    let label = format!("team={HOSTILE}");
    let (code, stderr) = run(&hostile, &[&push[..], &["--name", HOSTILE, "--label", &label]].concat(), &["true"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    prometheus_text(&hostile);

    let held = samples(&gateway.get("/metrics"));
    assert_eq!(values(&held, "stepmon_step_cpu_usage_seconds_total", &group), vec![cpu_seconds], "first group lost");
    let other_group = [("job", "stepmon"), ("instance", "runner-1"), ("step", "other"), ("team", "infra")];
    assert_eq!(values(&held, "stepmon_step_exit_code", &other_group), vec![0.0]);
    let hostile_group = [("job", "stepmon"), ("instance", "runner-1"), ("step", HOSTILE), ("team", HOSTILE)];
    assert_eq!(values(&held, "stepmon_step_exit_code", &hostile_group), vec![0.0]);
    // Pushgateway's own record of the three pushes.
    assert_eq!(values(&held, "push_time_seconds", &[("job", "stepmon")]).len(), 3);
    assert!(values(&held, "push_failure_time_seconds", &[]).iter().all(|t| *t == 0.0));

    // docs/fleet.md's way to delete a group: exactly that group goes.
    let url = format!("{}/metrics/job/stepmon/instance/runner-1/step/other", gateway.base);
    assert_eq!(http(true, &url, 10).unwrap().0, 202);
    let held = samples(&gateway.get("/metrics"));
    assert!(values(&held, "stepmon_step_exit_code", &other_group).is_empty(), "group not deleted");
    assert_eq!(values(&held, "stepmon_step_cpu_usage_seconds_total", &group), vec![cpu_seconds]);
    assert_eq!(values(&held, "stepmon_step_exit_code", &hostile_group), vec![0.0]);
}

#[test]
fn push_to_a_closed_port_warns_and_changes_nothing_else() {
    let dir = scratch("fleet-closed");
    let (pushed, plain) = (dir.join("pushed.json"), dir.join("plain.json"));
    let url = format!("http://127.0.0.1:{}", free_port());
    let start = Instant::now();
    let (code, stderr) = run(&pushed, &["--push", &url], &["sh", "-c", "exit 3"]);
    let took = start.elapsed();
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("stepmon: warning: push to ") && stderr.contains("failed"), "{stderr}");
    let (plain_code, _) = run(&plain, &[], &["sh", "-c", "exit 3"]);
    assert_eq!(plain_code, 3);
    let (pushed, plain) = (json(&pushed), json(&plain));
    let warnings = pushed.pointer("/stepmon/warnings").and_then(|w| w.as_array()).expect("warnings in the JSON");
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].as_str().unwrap().contains(&url), "{warnings:?}");
    // The same document as a run without --push, but for the warning.
    assert!(plain.pointer("/stepmon/warnings").is_none());
    for pointer in ["/stepmon/exitCode", "/stepmon/name", "/stepmon/command"] {
        assert_eq!(pushed.pointer(pointer), plain.pointer(pointer), "{pointer}");
    }
    assert!(!pushed["resourceUsage"]["samples"].as_array().unwrap().is_empty());
    // Three attempts, refused at once: the waits between them only.
    assert!(took < Duration::from_secs(10), "{took:?}");
    // `stepmon push` of a saved run fails (the push is all it does).
    let pushed = run_stepmon(&["push", dir.join("plain.json").to_str().unwrap(), "--to", &url]);
    assert_eq!(pushed.status.code(), Some(1), "{}", pushed.stderr);
}

/// Percent-encodes a PromQL query for a URL query string.
fn query_string(query: &str) -> String {
    query
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[test]
fn prometheus_scrapes_the_pushed_step() {
    if !have("prometheus_scrapes_the_pushed_step", &[PUSHGATEWAY, PROMETHEUS, PROMTOOL]) {
        return;
    }
    let dir = scratch("fleet-prometheus");
    let gateway = pushgateway(&dir);
    let file = dir.join("run.json");
    let push = ["--push", gateway.base.as_str(), "--name", "scraped", "--label", "team=infra"];
    let (code, stderr) = run(&file, &push, CPU_BOUND);
    assert_eq!(code, 0, "{stderr}");
    prometheus_text(&file);
    let cpu_seconds = f64_at(&json(&file), "/stepmon/summary/cpu/usageSeconds");

    let port = free_port();
    let config = dir.join("prometheus.yml");
    let target = gateway.base.trim_start_matches("http://");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: pushgateway\n    honor_labels: true\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    let args = [
        format!("--config.file={}", config.display()),
        format!("--storage.tsdb.path={}", dir.join("data").display()),
        format!("--web.listen-address=127.0.0.1:{port}"),
    ];
    let prometheus = Server::start(PROMETHEUS, &dir, port, "/-/ready", &args);
    let query = query_string(r#"stepmon_step_cpu_usage_seconds_total{step="scraped"}"#);
    let start = Instant::now();
    let result = loop {
        let answer: serde_json::Value =
            serde_json::from_str(&prometheus.get(&format!("/api/v1/query?query={query}"))).unwrap();
        let result = answer["data"]["result"].as_array().cloned().unwrap_or_default();
        if !result.is_empty() {
            break result;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "no result in 30 s: {answer}\n{}", prometheus.log_text());
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(result.len(), 1, "{result:?}");
    let metric = &result[0]["metric"];
    // honor_labels: the pushed job and the grouping labels, not the scrape's.
    assert_eq!(metric["job"], "stepmon", "{metric}");
    assert_eq!(metric["team"], "infra", "{metric}");
    let value: f64 = result[0]["value"][1].as_str().unwrap().parse().unwrap();
    assert_eq!(value, cpu_seconds, "{result:?}");
}

#[test]
fn node_exporter_reads_the_textfile() {
    if !have("node_exporter_reads_the_textfile", &[NODE_EXPORTER, PROMTOOL]) {
        return;
    }
    let dir = scratch("fleet-textfile");
    let textfiles = dir.join("textfile");
    std::fs::create_dir(&textfiles).unwrap();
    let port = free_port();
    let args = [
        "--collector.disable-defaults".to_owned(),
        "--collector.textfile".to_owned(),
        format!("--collector.textfile.directory={}", textfiles.display()),
        format!("--web.listen-address=127.0.0.1:{port}"),
    ];
    let exporter = Server::start(NODE_EXPORTER, &dir, port, "/metrics", &args);
    let file = dir.join("run.json");
    let label = format!("team={HOSTILE}");
    let (code, stderr) =
        run(&file, &["--textfile", textfiles.to_str().unwrap(), "--name", "build", "--label", &label], CPU_BOUND);
    assert_eq!(code, 0, "{stderr}");
    let names: Vec<_> = std::fs::read_dir(&textfiles).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec![std::ffi::OsString::from("stepmon_build.prom")], "no temporary file left");
    let written = std::fs::read_to_string(textfiles.join("stepmon_build.prom")).unwrap();
    assert_promtool_clean(&written);
    assert_eq!(written, prometheus_text(&file));

    let exposed = samples(&exporter.get("/metrics"));
    assert_eq!(values(&exposed, "node_textfile_scrape_error", &[]), vec![0.0]);
    let cpu_seconds = f64_at(&json(&file), "/stepmon/summary/cpu/usageSeconds");
    let step = [("step", "build"), ("team", HOSTILE)];
    assert_eq!(values(&exposed, "stepmon_step_cpu_usage_seconds_total", &step), vec![cpu_seconds]);
    for name in family_names(&written) {
        assert!(!values(&exposed, &name, &step).is_empty(), "node_exporter lacks {name}");
    }
}

/// `--format prometheus` of a run named and labelled with hostile text, in
/// a CI job's environment: promtool accepts it, the step label is the name,
/// the CI labels are there and the run id is not.
#[test]
fn hostile_names_and_ci_context_pass_promtool() {
    if !have("hostile_names_and_ci_context_pass_promtool", &[PROMTOOL]) {
        return;
    }
    let dir = scratch("fleet-hostile");
    let file = dir.join("run.json");
    let env = [
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_REPOSITORY", "acme/app"),
        ("GITHUB_WORKFLOW", HOSTILE),
        ("GITHUB_JOB", "test"),
        ("RUNNER_NAME", "runner \"7\""),
        ("GITHUB_RUN_ID", "987654321"),
        ("GITHUB_RUN_ATTEMPT", "2"),
        ("GITLAB_CI", ""),
        ("BUILDKITE", ""),
        ("JENKINS_URL", ""),
    ];
    let label = format!("team={HOSTILE}");
    let args = ["run", "-q", "-o", file.to_str().unwrap(), "--name", HOSTILE, "--label", &label, "--", "true"];
    let finished = run_stepmon_with(&env, &args);
    assert!(finished.status.success(), "{}", finished.stderr);
    let text = prometheus_text(&file);
    let exit = samples(&text).into_iter().find(|s| s.name == "stepmon_step_exit_code").unwrap();
    assert_eq!(exit.labels["step"], HOSTILE);
    assert_eq!(exit.labels["team"], HOSTILE);
    assert_eq!(exit.labels["ci_pipeline"], format!("acme/app/{HOSTILE}"));
    assert_eq!(exit.labels["ci_runner"], "runner \"7\"");
    assert!(!text.contains("987654321"));
    let document = json(&file);
    assert_eq!(document.pointer("/stepmon/ci/runId").and_then(|v| v.as_str()), Some("987654321"));
    assert_eq!(document.pointer("/stepmon/ci/attempt").and_then(|v| v.as_str()), Some("2"));
    // The command stays in the JSON; the default name is the program's base name.
    let file = dir.join("default.json");
    let finished = run_stepmon(&["run", "-q", "-o", file.to_str().unwrap(), "--", "/bin/sh", "-c", "true"]);
    assert!(finished.status.success());
    let document = json(&file);
    assert_eq!(document["stepmon"]["name"], "sh");
    assert_eq!(document["stepmon"]["command"], serde_json::json!(["/bin/sh", "-c", "true"]));
    assert!(prometheus_text(&file).contains("{step=\"sh\","));
}
