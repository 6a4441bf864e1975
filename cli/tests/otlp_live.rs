//! `--otlp` against a loopback OTLP/HTTP receiver (`otlp_receiver.py`)
//! that decodes every request with the official OpenTelemetry protobuf
//! classes (PyPI `opentelemetry-proto`) and writes down what it got: the
//! span's name, kind, ids, times, status and attributes and the metric
//! points are checked against the run's JSON. Over http and https (a test
//! CA made here with the openssl CLI, handed over in SSL_CERT_FILE), and
//! against an endpoint that is down, slow or answers 500, where the step's
//! exit code and JSON must not change.
//!
//! Without python3's `opentelemetry.proto` (scripts/setup installs it) or
//! the openssl CLI a test prints `SKIPPED <test>: <why>`, or fails when
//! `STEPMON_REQUIRE_LIVE=1` (scripts/test).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead as _, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Finished, json, run_stepmon_with, scratch};
use serde_json::Value;

/// A step busy on the CPU for a moment, so that it has a few samples.
const CPU_BOUND: &[&str] = &["sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"];
const TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";
const PARENT_ID: &str = "b7ad6b7169203331";

use common::skip::skipped as skip;

/// Whether the receiver can run: python3 with the official OTLP classes.
fn have_receiver(test: &str) -> bool {
    let ok = Command::new("/usr/bin/python3")
        .args(["-c", "import opentelemetry.proto.collector.trace.v1.trace_service_pb2, google.protobuf.json_format"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok || skip(test, "/usr/bin/python3 lacks opentelemetry-proto (scripts/setup installs it)")
}

/// The receiver, killed on drop (also when the test fails).
struct Receiver {
    child: Child,
    out: PathBuf,
    port: u16,
}

impl Receiver {
    fn start(dir: &Path, mode: &str, tls: Option<(&Path, &Path)>) -> Receiver {
        let out = dir.join(format!("received-{mode}-{}.jsonl", tls.is_some()));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/otlp_receiver.py");
        let mut command = Command::new("/usr/bin/python3");
        command.arg(script).arg(&out).args(["--mode", mode]);
        if let Some((cert, key)) = tls {
            command.arg("--tls").arg(cert).arg(key);
        }
        let mut child = command.stdout(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| panic!("receiver printed {line:?}"));
        Receiver { child, out, port }
    }

    fn endpoint(&self, scheme: &str) -> String {
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// The requests received so far.
    fn requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    /// The one decoded request to `path`; panics when it did not decode.
    fn request(&self, path: &str) -> Value {
        let all: Vec<Value> = self.requests().into_iter().filter(|r| r["path"] == path).collect();
        assert_eq!(all.len(), 1, "requests to {path}: {all:?}");
        let request = all.into_iter().next().unwrap();
        assert!(request.get("error").is_none(), "the receiver could not decode {path}: {}", request["error"]);
        request
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `stepmon run -q -o FILE ARGS -- COMMAND` with `env`.
fn run(env: &[(&str, &str)], file: &Path, args: &[&str], command: &[&str]) -> Finished {
    let env: Vec<(&str, &str)> = env.iter().copied().chain(LOOPBACK_DIRECT).collect();
    let mut all: Vec<&str> = vec!["run", "-q", "-o", file.to_str().unwrap()];
    all.extend_from_slice(args);
    all.push("--");
    all.extend_from_slice(command);
    run_stepmon_with(&env, &all)
}

/// The receiver is on loopback: never through a proxy the machine may set.
const LOOPBACK_DIRECT: [(&str, &str); 2] = [("NO_PROXY", "127.0.0.1,localhost"), ("no_proxy", "127.0.0.1,localhost")];

/// `attributes` (MessageToDict's `[{key, value: {stringValue: ..}}]`) as
/// key → the value's JSON.
fn attribute<'a>(attributes: &'a Value, key: &str) -> Option<&'a Value> {
    let kv = attributes.as_array()?.iter().find(|kv| kv["key"] == key)?;
    kv["value"].as_object()?.values().next()
}

/// An RFC 3339 time of the run JSON as Unix nanoseconds.
fn nanos(value: &Value) -> u64 {
    let t: jiff::Timestamp = value.as_str().unwrap().parse().unwrap();
    u64::try_from(t.as_nanosecond()).unwrap()
}

/// The spans of a decoded trace request, each with its resource.
fn spans(request: &Value) -> Vec<(Value, Value)> {
    let mut out = Vec::new();
    for rs in request["message"]["resourceSpans"].as_array().unwrap() {
        for ss in rs["scopeSpans"].as_array().unwrap() {
            assert_eq!(ss["scope"]["name"], "stepmon");
            for span in ss["spans"].as_array().unwrap() {
                out.push((rs["resource"].clone(), span.clone()));
            }
        }
    }
    out
}

/// The data points of metric `name` in a decoded metrics request.
fn points(request: &Value, name: &str) -> (Value, Vec<Value>) {
    let metrics = request["message"]["resourceMetrics"][0]["scopeMetrics"][0]["metrics"].as_array().unwrap();
    let metric = metrics.iter().find(|m| m["name"] == name).unwrap_or_else(|| panic!("no {name}: {metrics:?}"));
    let data = metric.get("sum").or_else(|| metric.get("gauge")).unwrap();
    (metric.clone(), data["dataPoints"].as_array().unwrap().clone())
}

#[test]
fn span_and_metrics_join_the_traceparent() {
    if !have_receiver("span_and_metrics_join_the_traceparent") {
        return;
    }
    let dir = scratch("otlp-protobuf");
    let receiver = Receiver::start(&dir, "ok", None);
    let file = dir.join("run.json");
    let endpoint = receiver.endpoint("http");
    let traceparent = format!("00-{TRACE_ID}-{PARENT_ID}-01");
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("TRACEPARENT", traceparent.as_str()),
        ("TRACESTATE", "vendor=abc,other=1"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=s%20ecret"),
    ];
    let done = run(
        &env,
        &file,
        &["--otlp", "--name", "build", "--label", "team=infra", "--label", "task_type=build"],
        CPU_BOUND,
    );
    assert_eq!(done.status.code(), Some(0), "{}", done.stderr);
    assert!(!done.stderr.contains("warning"), "{}", done.stderr);
    let document = json(&file);
    assert!(document.pointer("/stepmon/warnings").is_none(), "{document}");

    let traces = receiver.request("/v1/traces");
    assert_eq!(traces["contentType"], "application/x-protobuf");
    assert_eq!(traces["headers"]["x-api-key"], "s ecret");
    let spans = spans(&traces);
    assert_eq!(spans.len(), 1, "{spans:?}");
    let (resource, span) = &spans[0];
    assert_eq!(attribute(&resource["attributes"], "service.name"), Some(&Value::from("stepmon")));
    assert!(attribute(&resource["attributes"], "host.name").is_some(), "{resource}");
    assert_eq!(span["name"], "build");
    assert_eq!(span["kind"], "SPAN_KIND_INTERNAL");
    assert_eq!(span["traceId"], TRACE_ID);
    assert_eq!(span["parentSpanId"], PARENT_ID);
    assert_eq!(span["traceState"], "vendor=abc,other=1");
    assert!(span.get("status").is_none_or(|s| s.get("code").is_none()), "a successful step is not an error: {span}");
    let run = &document["stepmon"];
    assert_eq!(span["startTimeUnixNano"].as_str().unwrap().parse::<u64>().unwrap(), nanos(&run["start"]));
    assert_eq!(span["endTimeUnixNano"].as_str().unwrap().parse::<u64>().unwrap(), nanos(&run["end"]));
    let attrs = &span["attributes"];
    assert_eq!(attribute(attrs, "cicd.pipeline.task.name"), Some(&Value::from("build")));
    assert_eq!(attribute(attrs, "cicd.pipeline.task.run.result"), Some(&Value::from("success")));
    assert_eq!(attribute(attrs, "cicd.pipeline.task.run.id").and_then(Value::as_str), span["spanId"].as_str());
    assert_eq!(attribute(attrs, "stepmon.label.team"), Some(&Value::from("infra")));
    // The label of a CI/CD task attribute stepmon cannot know.
    assert_eq!(attribute(attrs, "cicd.pipeline.task.type"), Some(&Value::from("build")));
    assert!(attribute(attrs, "stepmon.label.task_type").is_none());
    assert_eq!(attribute(attrs, "process.exit.code"), Some(&Value::from("0")));
    assert!(attribute(attrs, "error.type").is_none());
    let cpu = attribute(attrs, "stepmon.cpu.seconds").and_then(Value::as_f64).unwrap();
    assert_eq!(cpu, run["summary"]["cpu"]["usageSeconds"].as_f64().unwrap());
    assert!(cpu > 0.0, "not CPU-bound: {cpu} s");
    let bottleneck = attribute(attrs, "stepmon.verdict.bottleneck");
    assert_eq!(bottleneck, run.pointer("/verdicts/bottleneck/class"), "{run}");

    // Every sample's CPU time and memory as metric points, at its time.
    let metrics = receiver.request("/v1/metrics");
    let samples = document["resourceUsage"]["samples"].as_array().unwrap();
    let (cpu_metric, cpu_points) = points(&metrics, "stepmon.step.cpu.time");
    assert_eq!(cpu_metric["unit"], "s");
    assert_eq!(cpu_metric["sum"]["isMonotonic"], true);
    assert_eq!(cpu_metric["sum"]["aggregationTemporality"], "AGGREGATION_TEMPORALITY_CUMULATIVE");
    let want: Vec<(u64, f64)> = samples
        .iter()
        .filter_map(|s| Some((nanos(&s["timestamp"]), s.pointer("/cpuStat/usageNanos")?.as_f64()? / 1e9)))
        .collect();
    let got: Vec<(u64, f64)> = cpu_points
        .iter()
        .map(|p| (p["timeUnixNano"].as_str().unwrap().parse().unwrap(), p["asDouble"].as_f64().unwrap_or(0.0)))
        .collect();
    assert_eq!(got, want);
    assert!(cpu_points.iter().all(|p| attribute(&p["attributes"], "cicd.pipeline.task.name").is_some()));
    let (_, memory_points) = points(&metrics, "stepmon.step.memory.usage");
    let want: Vec<String> =
        samples.iter().filter_map(|s| s.pointer("/stepmon/memoryCurrent")?.as_u64().map(|v| v.to_string())).collect();
    let got: Vec<String> = memory_points.iter().map(|p| p["asInt"].as_str().unwrap().to_owned()).collect();
    assert_eq!(got, want);
}

#[test]
fn failed_step_over_json_is_an_error_span_in_a_new_trace() {
    if !have_receiver("failed_step_over_json_is_an_error_span_in_a_new_trace") {
        return;
    }
    let dir = scratch("otlp-json");
    let receiver = Receiver::start(&dir, "ok", None);
    let file = dir.join("run.json");
    let endpoint = receiver.endpoint("http");
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        // Traces gzip'd, metrics not: the signal's own variable wins.
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
        ("OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "none"),
        // Uppercase hex: refused by the W3C recommendation.
        ("TRACEPARENT", "00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01"),
    ];
    let done = run(&env, &file, &["--otlp"], &["sh", "-c", "exit 3"]);
    assert_eq!(done.status.code(), Some(3), "{}", done.stderr);
    assert!(done.stderr.contains("TRACEPARENT ignored"), "{}", done.stderr);
    let document = json(&file);
    let warnings = document.pointer("/stepmon/warnings").and_then(Value::as_array).unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].as_str().unwrap().contains("not lowercase hex"), "{warnings:?}");

    let traces = receiver.request("/v1/traces");
    assert_eq!(traces["contentType"], "application/json");
    assert_eq!(traces["headers"]["content-encoding"], "gzip", "{traces}");
    let (_, span) = spans(&traces).into_iter().next().unwrap();
    assert_eq!(span["name"], "sh");
    assert!(span.get("parentSpanId").is_none(), "a new root: {span}");
    assert_ne!(span["traceId"].as_str().unwrap().to_lowercase(), TRACE_ID);
    assert_eq!(span["traceId"].as_str().unwrap().len(), 32);
    assert_eq!(span["status"]["code"], "STATUS_CODE_ERROR");
    assert_eq!(span["status"]["message"], "exited with code 3");
    let attrs = &span["attributes"];
    assert_eq!(attribute(attrs, "cicd.pipeline.task.run.result"), Some(&Value::from("failure")));
    assert_eq!(attribute(attrs, "error.type"), Some(&Value::from("3")));
    assert_eq!(attribute(attrs, "process.exit.code"), Some(&Value::from("3")));
    let command = attribute(attrs, "process.command_args").unwrap();
    assert_eq!(command["values"][2]["stringValue"], "exit 3");
    let metrics = receiver.request("/v1/metrics");
    assert_eq!(metrics["contentType"], "application/json");
    assert!(metrics["headers"].get("content-encoding").is_none(), "{metrics}");
    let (_, pids) = points(&metrics, "stepmon.step.pids");
    assert!(!pids.is_empty());
}

/// Makes a CA and a server certificate for 127.0.0.1 signed by it; `None`
/// without the openssl CLI.
fn certificates(dir: &Path, name: &str) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let path = |file: &str| dir.join(format!("{name}-{file}"));
    let subject = format!("/CN=stepmon test CA {name}");
    let (ca_key, ca, key, csr, cert, ext) =
        (path("ca.key"), path("ca.pem"), path("server.key"), path("server.csr"), path("server.pem"), path("ext"));
    std::fs::write(&ext, "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n").unwrap();
    let steps: [Vec<&std::ffi::OsStr>; 3] = [
        vec![
            "req".as_ref(),
            "-x509".as_ref(),
            "-newkey".as_ref(),
            "rsa:2048".as_ref(),
            "-nodes".as_ref(),
            "-keyout".as_ref(),
            ca_key.as_os_str(),
            "-out".as_ref(),
            ca.as_os_str(),
            "-days".as_ref(),
            "2".as_ref(),
            "-subj".as_ref(),
            subject.as_ref(),
        ],
        vec![
            "req".as_ref(),
            "-newkey".as_ref(),
            "rsa:2048".as_ref(),
            "-nodes".as_ref(),
            "-keyout".as_ref(),
            key.as_os_str(),
            "-out".as_ref(),
            csr.as_os_str(),
            "-subj".as_ref(),
            "/CN=127.0.0.1".as_ref(),
        ],
        vec![
            "x509".as_ref(),
            "-req".as_ref(),
            "-in".as_ref(),
            csr.as_os_str(),
            "-CA".as_ref(),
            ca.as_os_str(),
            "-CAkey".as_ref(),
            ca_key.as_os_str(),
            "-CAcreateserial".as_ref(),
            "-out".as_ref(),
            cert.as_os_str(),
            "-days".as_ref(),
            "2".as_ref(),
            "-extfile".as_ref(),
            ext.as_os_str(),
        ],
    ];
    for args in steps {
        let status = Command::new("openssl").args(args).stdout(Stdio::null()).stderr(Stdio::null()).status().ok()?;
        assert!(status.success(), "openssl failed");
    }
    Some((ca, cert, key))
}

#[test]
fn https_with_the_test_ca_and_a_wrong_one() {
    let test = "https_with_the_test_ca_and_a_wrong_one";
    if !have_receiver(test) {
        return;
    }
    let dir = scratch("otlp-tls");
    let Some((ca, cert, key)) = certificates(&dir, "good") else {
        skip(test, "no openssl CLI to make the test CA");
        return;
    };
    let (other_ca, _, _) = certificates(&dir, "other").unwrap();
    let receiver = Receiver::start(&dir, "ok", Some((&cert, &key)));
    let endpoint = receiver.endpoint("https");
    let file = dir.join("run.json");
    let trusted = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()), ("SSL_CERT_FILE", ca.to_str().unwrap())];
    let done = run(&trusted, &file, &["--otlp"], &["true"]);
    assert_eq!(done.status.code(), Some(0), "{}", done.stderr);
    assert!(!done.stderr.contains("warning"), "{}", done.stderr);
    assert_eq!(spans(&receiver.request("/v1/traces")).len(), 1);
    receiver.request("/v1/metrics");
    // OTEL_EXPORTER_OTLP_CERTIFICATE instead of the system's roots.
    let pinned = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_CERTIFICATE", ca.to_str().unwrap()),
        ("SSL_CERT_FILE", "/nonexistent"),
    ];
    let done = run(&pinned, &file, &["--otlp"], &["true"]);
    assert!(!done.stderr.contains("warning"), "{}", done.stderr);
    assert_eq!(receiver.requests().len(), 4);

    let wrong = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()), ("SSL_CERT_FILE", other_ca.to_str().unwrap())];
    let done = run(&wrong, &file, &["--otlp"], &["sh", "-c", "exit 4"]);
    assert_eq!(done.status.code(), Some(4), "{}", done.stderr);
    assert!(done.stderr.contains("OTLP traces export to https://127.0.0.1"), "{}", done.stderr);
    assert!(
        done.stderr.contains("TLS:") && done.stderr.contains("invalid peer certificate: UnknownIssuer"),
        "{}",
        done.stderr
    );
    let warnings = json(&file)["stepmon"]["warnings"].as_array().unwrap().len();
    assert_eq!(warnings, 2, "traces and metrics");
    assert_eq!(receiver.requests().len(), 4, "nothing got through the wrong CA");
}

/// A loopback port nothing listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The run document without its warnings, and the warnings.
fn split_warnings(mut document: Value) -> (Value, Vec<String>) {
    let warnings = document["stepmon"].as_object_mut().unwrap().remove("warnings");
    let warnings = warnings.map(|w| serde_json::from_value(w).unwrap()).unwrap_or_default();
    (document, warnings)
}

#[test]
fn down_slow_or_500_changes_neither_exit_code_nor_json() {
    let test = "down_slow_or_500_changes_neither_exit_code_nor_json";
    if !have_receiver(test) {
        return;
    }
    let dir = scratch("otlp-failing");
    let slow = Receiver::start(&dir, "slow", None);
    let failing = Receiver::start(&dir, "500", None);
    let down = format!("http://127.0.0.1:{}", free_port());
    let cases = [
        (down.clone(), "connection refused"),
        (slow.endpoint("http"), "no answer within 500 ms (OTEL_EXPORTER_OTLP_TIMEOUT)"),
        (failing.endpoint("http"), "HTTP 500 Internal Server Error: receiver says no"),
    ];
    let plain = dir.join("plain.json");
    let done = run(&[], &plain, &[], &["sh", "-c", "exit 3"]);
    assert_eq!(done.status.code(), Some(3));
    let plain = json(&plain);
    for (endpoint, what) in cases {
        let file = dir.join("exported.json");
        let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()), ("OTEL_EXPORTER_OTLP_TIMEOUT", "500")];
        let start = Instant::now();
        let done = run(&env, &file, &["--otlp"], &["sh", "-c", "exit 3"]);
        let took = start.elapsed();
        assert_eq!(done.status.code(), Some(3), "{endpoint}: {}", done.stderr);
        let (document, warnings) = split_warnings(json(&file));
        assert_eq!(warnings.len(), 2, "{endpoint}: {warnings:?}");
        for (warning, signal) in warnings.iter().zip(["traces", "metrics"]) {
            assert!(
                warning.starts_with(&format!("OTLP {signal} export to {endpoint}/v1/{signal} failed: ")),
                "{warning}"
            );
            assert!(warning.contains(what), "{endpoint}: {warning}");
            assert!(done.stderr.contains(&format!("stepmon: warning: {warning}")), "{}", done.stderr);
        }
        // The same document as without --otlp, but for what differs run to run.
        for pointer in ["/stepmon/exitCode", "/stepmon/name", "/stepmon/command", "/stepmon/signal"] {
            assert_eq!(document.pointer(pointer), plain.pointer(pointer), "{pointer}");
        }
        assert!(!document["resourceUsage"]["samples"].as_array().unwrap().is_empty());
        // Each signal gives up within its timeout (and the 500 is not retried).
        assert!(took < Duration::from_secs(8), "{endpoint}: {took:?}");
    }
    assert_eq!(failing.requests().len(), 2, "a 500 is not retried");
}

#[test]
fn pushed_provenance_is_a_build_span_with_a_span_per_step() {
    if !have_receiver("pushed_provenance_is_a_build_span_with_a_span_per_step") {
        return;
    }
    let dir = scratch("otlp-push");
    let receiver = Receiver::start(&dir, "ok", None);
    let provenance = Path::new(env!("CARGO_MANIFEST_DIR")).join("../import/tests/data/provenance/slsa1-statement.json");
    let endpoint = receiver.endpoint("http");
    let traceparent = format!("00-{TRACE_ID}-{PARENT_ID}-01");
    let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()), ("TRACEPARENT", traceparent.as_str())];
    let env: Vec<(&str, &str)> = env.into_iter().chain(LOOPBACK_DIRECT).collect();
    let done = run_stepmon_with(&env, &["push", provenance.to_str().unwrap(), "--otlp"]);
    assert_eq!(done.status.code(), Some(0), "{}", done.stderr);
    let report = common::stepmon().args(["report", "--format", "json"]).arg(&provenance).output().unwrap();
    let steps: Value = serde_json::from_slice(&report.stdout).unwrap();
    let steps = steps["steps"].as_array().unwrap();
    let spans: Vec<Value> = spans(&receiver.request("/v1/traces")).into_iter().map(|(_, s)| s).collect();
    assert_eq!(spans.len(), steps.len() + 1, "{spans:?}");
    let build = &spans[0];
    assert_eq!(build["name"], "build");
    assert_eq!((&build["traceId"], &build["parentSpanId"]), (&Value::from(TRACE_ID), &Value::from(PARENT_ID)));
    for (span, step) in spans[1..].iter().zip(steps) {
        assert_eq!(span["name"], step["name"]);
        assert_eq!(span["parentSpanId"], build["spanId"]);
        assert_eq!(span["traceId"], TRACE_ID);
        let attrs = &span["attributes"];
        assert_eq!(attribute(attrs, "cicd.pipeline.task.run.id"), Some(&step["origin"]["stepId"]));
        assert_eq!(span["endTimeUnixNano"].as_str().unwrap().parse::<u64>().unwrap(), nanos(&step["end"]));
        let cpu = attribute(attrs, "stepmon.cpu.seconds").and_then(Value::as_f64);
        assert_eq!(cpu, step["summary"]["cpu"]["usageSeconds"].as_f64());
        let start: u64 = span["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
        let build_start: u64 = build["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
        assert!(start >= build_start);
    }
    receiver.request("/v1/metrics");
}
