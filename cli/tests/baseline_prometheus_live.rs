//! The fleet's Prometheus as the history: the same 30 runs in a history
//! file (`baseline add`) and in a real Prometheus (their OpenMetrics
//! exports, timestamped at each run's end and backfilled with `promtool
//! tsdb create-blocks-from openmetrics` into the data directory before the
//! server starts), and `baseline check` of three new runs — a memory
//! regression, a CPU regression, a steady run — gives the same verdicts and
//! numbers from both stores; `baseline show` sees each run once although
//! every run is in five evaluation steps of the range query. A server that
//! is down or answers garbage is a clear error with exit code 125.
//!
//! Backfilling rather than remote write: the runs land at the times they
//! ran (hours apart, as real CI runs are), with no `--web.enable-remote-
//! write-receiver` flag, no protobuf/snappy encoder in the test and no wait
//! for ingestion; it is how a fleet imports history too.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{run_stepmon, scratch};
use serde_json::Value;

const MIB: u64 = 1024 * 1024;

/// A run document of step `build` {team=infra}: `cpu` seconds of CPU over
/// 2 s on a 2-core machine (busy: a 4-core one whose other tenants used
/// nearly all the rest) and a
/// memory peak of `peak` bytes, started at Unix second `start`.
fn document(start: i64, cpu: f64, peak: u64, busy: bool) -> String {
    let at = |s: i64| jiff::Timestamp::from_second(s).unwrap().to_string();
    let (t0, t1) = (at(start), at(start + 2));
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let nanos = (cpu * 1e9).round() as u64;
    let (user, idle) = if busy { (7.9, 0.1) } else { (cpu, 4.0 - cpu) };
    format!(
        r#"{{"resourceUsage": {{"samples": [
  {{"timestamp": "{t0}", "cpuStat": {{"usageNanos": 0}}, "memoryStat": {{"peak": {peak}}}, "pidsStat": {{}}}},
  {{"timestamp": "{t1}", "cpuStat": {{"usageNanos": {nanos}}}, "memoryStat": {{"peak": {peak}}}, "pidsStat": {{}}}}],
  "sysCPUStat": {{"user": {user}, "nice": 0, "system": 0, "idle": {idle}, "iowait": 0, "irq": 0, "softirq": 0, "steal": 0, "guest": 0, "guestNice": 0}}}},
 "stepmon": {{"command": ["make"], "name": "build", "labels": [{{"key": "team", "value": "infra"}}],
  "start": "{t0}", "end": "{t1}", "exitCode": 0}}}}"#
    )
}

/// A loopback port nothing listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Prometheus, killed and reaped when dropped (also when the test fails).
struct Server {
    child: Child,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The status line of `GET path` on loopback `port`, if it answered.
fn get_status(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    answer.lines().next().map(str::to_owned)
}

fn prometheus(dir: &Path, port: u16) -> Server {
    let config = dir.join("prometheus.yml");
    std::fs::write(&config, "global:\n  scrape_interval: 1m\n").unwrap();
    let log = dir.join("prometheus.log");
    let file = std::fs::File::create(&log).unwrap();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .expect("start prometheus");
    let mut server = Server { child, log };
    let started = Instant::now();
    while !get_status(port, "/-/ready").is_some_and(|s| s.contains(" 200")) {
        if let Ok(Some(status)) = server.child.try_wait() {
            panic!("prometheus exited with {status}:\n{}", std::fs::read_to_string(&server.log).unwrap_or_default());
        }
        assert!(started.elapsed() < Duration::from_secs(20), "prometheus not ready in 20 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

/// The OpenMetrics exports of `runs` (file, end second) as one exposition
/// with each sample timestamped at its run's end: every family's metadata
/// once, its samples of all runs after it, then `# EOF` — what `promtool
/// tsdb create-blocks-from openmetrics` reads.
fn timestamped(runs: &[(PathBuf, i64)]) -> String {
    let mut families: Vec<(String, String, String)> = Vec::new(); // name, metadata, samples
    for (file, end) in runs {
        let export = run_stepmon(&["report", file.to_str().unwrap(), "--format", "openmetrics"]);
        assert!(export.status.success(), "{}", export.stderr);
        let mut current = usize::MAX;
        for line in export.stdout.lines() {
            if line == "# EOF" {
                continue;
            }
            if let Some(rest) = line.strip_prefix("# ") {
                let name = rest.split(' ').nth(1).unwrap().to_owned();
                current = match families.iter().position(|f| f.0 == name) {
                    Some(i) => i,
                    None => {
                        families.push((name, String::new(), String::new()));
                        families.len() - 1
                    }
                };
                if !families[current].1.contains(&format!("# {}", rest.split(' ').next().unwrap())) {
                    families[current].1 += &format!("{line}\n");
                }
                continue;
            }
            families[current].2 += &format!("{line} {end}\n");
        }
    }
    let mut out: String = families.into_iter().map(|(_, meta, samples)| meta + &samples).collect();
    out.push_str("# EOF\n");
    out
}

/// A metric of a check's JSON: name, verdict, runs, busy runs left out,
/// baseline mean and upper end.
type Judged = (String, String, u64, u64, Option<f64>, Option<f64>);

/// The first step's metrics of a check's JSON, by name.
fn verdicts(json: &str) -> Vec<Judged> {
    let report: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let mut out: Vec<_> = report["steps"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["metric"].as_str().unwrap().to_owned(),
                m["verdict"].as_str().unwrap().to_owned(),
                m["runs"].as_u64().unwrap(),
                m["busyLeftOut"].as_u64().unwrap(),
                m["baseline"]["mean"].as_f64(),
                m["baseline"]["upper"].as_f64(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn close(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * a.abs().max(1.0),
        (None, None) => true,
        _ => false,
    }
}

#[test]
fn prometheus_and_the_history_file_give_the_same_verdicts() {
    let name = "prometheus_and_the_history_file_give_the_same_verdicts";
    let tools = ["prometheus", "promtool"];
    if let Some(missing) = tools.iter().find(|t| Command::new(t).arg("--version").output().is_err()) {
        common::skip::skip(name, format_args!("{missing} not installed (scripts/setup installs it)"));
        return;
    }
    let started = Instant::now();
    let dir = scratch("baseline-prometheus");
    // Runs an hour apart over the last day and a half, inside Prometheus's
    // default retention; run 12's machine was busy (CPU 3 s).
    let now = jiff::Timestamp::now().as_second();
    let first = now - 40 * 3600;
    let mut stored = Vec::new();
    for i in 1..=30_i64 {
        let wobble = (i % 3) - 1;
        let start = first + i * 3600;
        #[allow(clippy::cast_precision_loss)]
        let cpu = if i == 12 { 3.0 } else { 1.5 + 0.01 * wobble as f64 };
        let peak = 100 * MIB + u64::try_from(wobble + 1).unwrap() * 200 * 1024;
        let file = dir.join(format!("run{i:02}.json"));
        std::fs::write(&file, document(start, cpu, peak, i == 12)).unwrap();
        stored.push((file, start + 2));
    }
    let db = dir.join("history.db");
    let mut add = vec!["baseline".to_owned(), "add".to_owned(), db.display().to_string()];
    add.extend(stored.iter().map(|(f, _)| f.display().to_string()));
    let added = run_stepmon(&add.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(added.stderr.contains("30 run(s) added"), "{}", added.stderr);

    let openmetrics = dir.join("history.om");
    std::fs::write(&openmetrics, timestamped(&stored)).unwrap();
    let backfill = Command::new("promtool")
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&openmetrics)
        .arg(dir.join("data"))
        .output()
        .unwrap();
    assert!(backfill.status.success(), "{}", String::from_utf8_lossy(&backfill.stderr));
    let port = free_port();
    let server = prometheus(&dir, port);
    let url = format!("prometheus+http://127.0.0.1:{port}?range=3d");

    // Three new runs after the stored ones: 130 MiB, 20 % more CPU, steady.
    let new = [("memory", 1.5, 130 * MIB), ("cpu", 1.8, 100 * MIB), ("steady", 1.5, 100 * MIB + 200 * 1024)];
    for (i, (what, cpu, peak)) in new.into_iter().enumerate() {
        let file = dir.join(format!("new-{what}.json"));
        let start = now - 3 * 3600 + i64::try_from(i).unwrap() * 600;
        std::fs::write(&file, document(start, cpu, peak, false)).unwrap();
        let file = file.to_str().unwrap();
        let local = run_stepmon(&["baseline", "check", db.to_str().unwrap(), file, "--format", "json"]);
        let fleet = run_stepmon(&["baseline", "check", &url, file, "--format", "json"]);
        assert_eq!(local.status.code(), fleet.status.code(), "{what}: {}\n{}", local.stderr, fleet.stderr);
        assert_eq!(local.status.code(), Some(if what == "steady" { 0 } else { 1 }), "{what}: {}", local.stdout);
        let (local, fleet) = (verdicts(&local.stdout), verdicts(&fleet.stdout));
        assert_eq!(local.len(), 3, "{what}: cpu, wall, memory: {local:?}");
        assert_eq!(local.len(), fleet.len(), "{what}: {local:?}\n{fleet:?}");
        for (l, f) in local.iter().zip(&fleet) {
            assert_eq!((&l.0, &l.1, l.2, l.3), (&f.0, &f.1, f.2, f.3), "{what}");
            assert!(close(l.4, f.4) && close(l.5, f.5), "{what}: {l:?} vs {f:?}");
        }
        let verdict = |metric: &str| local.iter().find(|m| m.0 == metric).unwrap().1.clone();
        match what {
            "memory" => assert_eq!(verdict("memory-peak-bytes"), "regression"),
            "cpu" => assert_eq!(verdict("cpu-seconds"), "regression"),
            _ => assert!(local.iter().all(|m| m.1 == "withinNoise"), "{local:?}"),
        }
        // The busy run is left out of the CPU baseline in both stores.
        let cpu = local.iter().find(|m| m.0 == "cpu-seconds").unwrap();
        assert_eq!((cpu.2, cpu.3), (29, 1), "{what}");
    }

    // `show`: every run once, although each is in five 60 s steps of the
    // query (Prometheus's 5-minute lookback).
    let shown = run_stepmon(&["baseline", "show", &url, "--step", "build", "--metric", "memory", "--format", "json"]);
    assert!(shown.status.success(), "{}", shown.stderr);
    let json: Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(json[0]["metrics"][0]["totalRuns"], 30, "{}", shown.stdout);
    let local = run_stepmon(&["baseline", "show", db.to_str().unwrap(), "--metric", "memory", "--format", "json"]);
    let local: Value = serde_json::from_str(&local.stdout).unwrap();
    let verdicts_of = |v: &Value| -> Vec<String> {
        v[0]["metrics"][0]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["verdict"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(verdicts_of(&json), verdicts_of(&local));
    drop(server);

    // Down: the port Prometheus listened on is closed now.
    let down = run_stepmon(&["baseline", "check", &url, stored[0].0.to_str().unwrap()]);
    assert_eq!(down.status.code(), Some(125), "{}", down.stderr);
    assert!(down.stderr.contains("connection refused"), "{}", down.stderr);
    // Garbage: a server that answers anything but the API's JSON.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let garbage_port = listener.local_addr().unwrap().port();
    let answering = std::thread::spawn(move || {
        if let Ok((mut stream, _)) = listener.accept() {
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let _ =
                stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nConnection: close\r\n\r\n<html>hi</h>\n");
        }
    });
    let garbage = run_stepmon(&[
        "baseline",
        "check",
        &format!("prometheus+http://127.0.0.1:{garbage_port}?range=1d"),
        stored[0].0.to_str().unwrap(),
    ]);
    answering.join().unwrap();
    assert_eq!(garbage.status.code(), Some(125), "{}", garbage.stderr);
    assert!(garbage.stderr.contains("not a Prometheus API answer"), "{}", garbage.stderr);
    assert!(!garbage.stderr.contains("panicked"), "{}", garbage.stderr);
    eprintln!("{name}: {:.1} s", started.elapsed().as_secs_f64());
}
