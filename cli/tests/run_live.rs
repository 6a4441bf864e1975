//! `stepmon run` end to end with the real binary: measurement, exit codes,
//! the summary against the JSON, cleanup after success, failure, signals
//! and daemonized grandchildren, and the step's own network namespace.
//! Needs root and cgroup v2; prints `SKIPPED <name>: <why>` otherwise.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{f64_at, json, leftovers, live, python, run_stepmon, scratch, u64_at, wait_for, wait_gone};
use serde_json::Value;

/// A step that burns exactly one second of its own CPU time, however busy
/// the machine is.
/// (One line: the summary's header shows the command as given.)
const BURN_ONE_SECOND: &str =
    "import time; t = time.process_time(); any(iter(lambda: time.process_time() - t >= 1.0, True))";

/// Parses a duration as `units::seconds` prints it (`12.3 ms`, `2.50 s`,
/// `1m15.2s`); returns (seconds, half a unit of the last printed digit).
fn printed_seconds(text: &str) -> (f64, f64) {
    let mut words = text.split_whitespace();
    let value = words.next().unwrap();
    if let Some((minutes, rest)) = value.split_once('m') {
        let s: f64 = rest.trim_end_matches('s').parse().unwrap();
        return (minutes.parse::<f64>().unwrap() * 60.0 + s, 0.05);
    }
    let number: f64 = value.parse().unwrap();
    match words.next() {
        Some("ms") => (number / 1000.0, 0.000_05),
        Some("s") => (number, 0.005),
        other => panic!("unexpected unit {other:?} in {text:?}"),
    }
}

/// The text after `label ` in `line`.
fn after<'a>(line: &'a str, label: &str) -> &'a str {
    let at = line.find(label).unwrap_or_else(|| panic!("no {label:?} in {line:?}"));
    &line[at + label.len()..]
}

fn assert_close(printed: &str, json: f64, what: &str) {
    let (value, tolerance) = printed_seconds(printed);
    assert!(
        (value - json).abs() <= tolerance + 1e-9,
        "{what}: the summary says {printed:?}, the JSON {json} (tolerance {tolerance})"
    );
}

#[test]
fn cpu_bound_step_is_measured_and_summary_matches_json() {
    let Some(base) = live("cpu_bound_step_is_measured_and_summary_matches_json") else { return };
    let Some(python) = python("cpu_bound_step_is_measured_and_summary_matches_json") else { return };
    let dir = scratch("cpu");
    let out = dir.join("report.json");
    let run = run_stepmon(&["run", "-o", out.to_str().unwrap(), "--", python.to_str().unwrap(), "-c", BURN_ONE_SECOND]);
    assert!(run.status.success(), "stepmon failed: {}", run.stderr);
    assert!(leftovers(&base, run.pid).is_empty(), "cgroups left behind: {:?}", leftovers(&base, run.pid));
    let report = json(&out);
    let samples = report.pointer("/resourceUsage/samples").and_then(Value::as_array).unwrap();
    let usage = u64_at(samples.last().unwrap(), "/cpuStat/usageNanos");
    assert!(usage >= 800_000_000, "the step burned 1 s of CPU, the last sample says {usage} ns");
    assert_eq!(report.pointer("/stepmon/exitCode"), Some(&Value::from(0)));
    assert!(report.pointer("/stepmon/collector/cpuSeconds").is_some_and(Value::is_number));
    assert!(report.pointer("/stepmon/collector/maxRssBytes").is_some_and(Value::is_number));

    // The summary on stderr prints the same numbers as the JSON's summary.
    let lines: Vec<&str> = run.stderr.lines().collect();
    let header = lines.first().unwrap();
    assert!(header.starts_with("stepmon: `") && header.contains("exited 0 after"), "{header:?}");
    assert_close(after(header, "after "), f64_at(&report, "/stepmon/summary/wallSeconds"), "wall");
    let cpu = lines.iter().find(|l| l.trim_start().starts_with("cpu ")).expect("a cpu line");
    let user = after(cpu, "user ");
    let system = after(cpu, "system ");
    assert_close(user, f64_at(&report, "/stepmon/summary/cpu/userSeconds"), "user");
    assert_close(system, f64_at(&report, "/stepmon/summary/cpu/systemSeconds"), "system");
    let cores: f64 = after(cpu, "= ").split_whitespace().next().unwrap().parse().unwrap();
    assert!((cores - f64_at(&report, "/stepmon/summary/cpu/averageCores")).abs() <= 0.005 + 1e-9, "{cpu:?}");
    // The JSON summary is the delta of the samples.
    let user_json = f64_at(&report, "/stepmon/summary/cpu/usageSeconds");
    #[allow(clippy::cast_precision_loss)]
    let from_samples = (usage - u64_at(&samples[0], "/cpuStat/usageNanos")) as f64 / 1e9;
    assert!((user_json - from_samples).abs() < 1e-6, "summary {user_json} vs samples {from_samples}");
    for line in report.pointer("/stepmon/notMeasured").and_then(Value::as_array).unwrap() {
        let line = line.as_str().unwrap();
        assert!(run.stderr.contains(&format!("not measured: {line}")), "{line:?} not in the summary");
    }
}

#[test]
fn exit_codes_propagate_and_nothing_is_left() {
    let Some(base) = live("exit_codes_propagate_and_nothing_is_left") else { return };
    let dir = scratch("exit");
    let out = dir.join("report.json");
    let out = out.to_str().unwrap();
    for (command, code, exit_code, signal) in [
        (&["true"][..], 0, Some(0), None),
        (&["sh", "-c", "exit 7"][..], 7, Some(7), None),
        (&["sh", "-c", "kill -TERM $$"][..], 128 + 15, None, Some(15)),
        (&["sh", "-c", "kill -KILL $$"][..], 128 + 9, None, Some(9)),
    ] {
        let mut args = vec!["run", "-q", "-o", out, "--"];
        args.extend_from_slice(command);
        let run = run_stepmon(&args);
        assert_eq!(run.status.code(), Some(code), "{command:?}: {}", run.stderr);
        let report = json(Path::new(out));
        assert_eq!(report.pointer("/stepmon/exitCode").and_then(Value::as_i64), exit_code.map(i64::from));
        assert_eq!(report.pointer("/stepmon/signal").and_then(Value::as_i64), signal.map(i64::from));
        assert!(leftovers(&base, run.pid).is_empty(), "{command:?} left {:?}", leftovers(&base, run.pid));
    }
}

#[test]
fn missing_command_is_one_line_127_and_nothing_is_left() {
    let base = live("missing_command_is_one_line_127_and_nothing_is_left (cgroup check only)");
    for program in ["/nonexistent", "stepmon-no-such-command-anywhere"] {
        let run = run_stepmon(&["run", "--", program]);
        assert_eq!(run.status.code(), Some(127), "{program}: {}", run.stderr);
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line expected: {:?}", run.stderr);
        assert!(lines[0].contains(program) && lines[0].contains("not found"), "{:?}", lines[0]);
        if let Some(base) = &base {
            assert!(leftovers(base, run.pid).is_empty());
        }
    }
}

#[test]
fn non_executable_command_is_126_and_nothing_is_left() {
    let Some(base) = live("non_executable_command_is_126_and_nothing_is_left") else { return };
    let dir = scratch("noexec");
    let file = dir.join("not-executable");
    std::fs::write(&file, "#!/bin/sh\n").unwrap();
    let run = run_stepmon(&["run", "-q", "--", file.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(126), "{}", run.stderr);
    assert!(run.stderr.contains("not-executable"), "{}", run.stderr);
    assert!(leftovers(&base, run.pid).is_empty(), "{:?}", leftovers(&base, run.pid));
}

/// The step's processes, once its leaf cgroup holds one named `comm`.
fn wait_for_step(base: &Path, stepmon_pid: u32, comm: &str) -> Vec<u32> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        for parent in leftovers(base, stepmon_pid) {
            // The leaf: `step` below the run directory, or the run
            // directory itself (no controller to enable for a leaf).
            let leaf = if parent.join("step").is_dir() { parent.join("step") } else { parent.clone() };
            let procs = std::fs::read_to_string(leaf.join("cgroup.procs")).unwrap_or_default();
            let pids: Vec<u32> = procs.lines().filter_map(|l| l.parse().ok()).collect();
            let named = |p: &u32| std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == comm);
            if pids.iter().any(named) {
                return pids;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("no {comm} in the step's cgroup after 10 s");
}

/// Sends `signal` to stepmon while its step runs; returns (exit status,
/// report, the step's pids while it ran).
fn signal_stepmon(
    base: &Path,
    out: &Path,
    command: &[&str],
    comm: &str,
    signal: rustix::process::Signal,
) -> (i32, Value, Vec<u32>, u32) {
    // stepmon leaves a signal ignored by whoever started it ignored (as
    // under `nohup`); a test run from a non-interactive shell's background
    // job inherits SIGINT ignored, so stepmon gets the defaults here.
    let mut child = Command::new("env")
        .arg("--default-signal=INT,TERM,HUP")
        .arg(env!("CARGO_BIN_EXE_stepmon"))
        .args(["run", "-q", "-o", out.to_str().unwrap(), "--"])
        .args(command)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let pids = wait_for_step(base, pid, comm);
    let target = rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap();
    rustix::process::kill_process(target, signal).unwrap();
    let status = wait_for(&mut child, Duration::from_secs(15));
    (status.code().expect("stepmon itself must exit, not die of the signal"), json(out), pids, pid)
}

#[test]
fn sigint_and_sigterm_end_the_step_and_clean_up() {
    use rustix::process::Signal;
    let Some(base) = live("sigint_and_sigterm_end_the_step_and_clean_up") else { return };
    let dir = scratch("signals");
    let out = dir.join("report.json");
    for (signal, number) in [(Signal::INT, 2), (Signal::TERM, 15), (Signal::HUP, 1)] {
        let (code, report, pids, pid) = signal_stepmon(&base, &out, &["sleep", "100"], "sleep", signal);
        assert_eq!(code, 128 + number, "{signal:?}: stepmon exits like its step, killed by the forwarded signal");
        assert_eq!(report.pointer("/stepmon/signal").and_then(Value::as_i64), Some(number.into()));
        for p in pids {
            assert!(wait_gone(p, Duration::from_secs(2)), "{signal:?}: step process {p} survived");
        }
        assert!(leftovers(&base, pid).is_empty(), "{signal:?}: left {:?}", leftovers(&base, pid));
    }
    // A step that handles the signal and exits with its own code, leaving a
    // background process behind: stepmon exits with the step's code and
    // kills what is left.
    let trap = "trap 'exit 5' TERM; sleep 100 & wait";
    let (code, report, pids, pid) = signal_stepmon(&base, &out, &["sh", "-c", trap], "sleep", Signal::TERM);
    assert_eq!(code, 5);
    assert_eq!(report.pointer("/stepmon/exitCode").and_then(Value::as_i64), Some(5));
    for p in pids {
        assert!(wait_gone(p, Duration::from_secs(2)), "process {p} of the trapping step survived");
    }
    assert!(leftovers(&base, pid).is_empty(), "left {:?}", leftovers(&base, pid));
}

#[test]
fn daemonized_grandchild_is_killed() {
    let Some(base) = live("daemonized_grandchild_is_killed") else { return };
    let dir = scratch("daemon");
    let pid_file = dir.join("grandchild.pid");
    let script = format!("sleep 100 & echo $! > {}; exit 0", pid_file.display());
    let run = run_stepmon(&["run", "-q", "--", "sh", "-c", &script]);
    assert_eq!(run.status.code(), Some(0), "{}", run.stderr);
    let grandchild: u32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    assert!(wait_gone(grandchild, Duration::from_secs(2)), "the daemonized `sleep 100` ({grandchild}) survived");
    assert!(leftovers(&base, run.pid).is_empty(), "left {:?}", leftovers(&base, run.pid));
}

/// A receiver and a sender of `BYTES` over 127.0.0.1 in one Python process.
const LOOPBACK_TRAFFIC: &str = r#"
import socket, threading
N = 4 << 20
server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(1)
got = []
def receive():
    conn, _ = server.accept(); n = 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk: break
        n += len(chunk)
    got.append(n)
thread = threading.Thread(target=receive); thread.start()
client = socket.create_connection(server.getsockname()); client.sendall(b"x" * N); client.close()
thread.join()
assert got == [N], got
"#;
const SENT: u64 = 4 << 20;

/// (rx, tx) bytes of `lo` in this process's network namespace.
fn host_loopback() -> (u64, u64) {
    let dev = std::fs::read_to_string("/proc/net/dev").unwrap();
    let line = dev.lines().find(|l| l.trim_start().starts_with("lo:")).expect("lo in /proc/net/dev");
    let fields: Vec<u64> = line.split_once(':').unwrap().1.split_whitespace().map(|f| f.parse().unwrap()).collect();
    (fields[0], fields[8])
}

fn net_bytes(report: &Value, key: &str) -> u64 {
    let samples = report.pointer("/resourceUsage/samples").and_then(Value::as_array).unwrap();
    // BuildKit omits zero network counters.
    samples.last().unwrap().pointer(&format!("/netStat/{key}")).and_then(Value::as_u64).unwrap_or(0)
}

#[test]
fn isolated_network_counts_its_own_loopback_only_when_asked() {
    let name = "isolated_network_counts_its_own_loopback_only_when_asked";
    let Some(base) = live(name) else { return };
    let Some(python) = python(name) else { return };
    let dir = scratch("net");
    let out: PathBuf = dir.join("report.json");
    let python = python.to_str().unwrap();
    let before = host_loopback();
    let run = run_stepmon(&[
        "run",
        "-q",
        "--net",
        "isolated",
        "--include-loopback",
        "-o",
        out.to_str().unwrap(),
        "--",
        python,
        "-c",
        LOOPBACK_TRAFFIC,
    ]);
    let after = host_loopback();
    assert!(run.status.success(), "{}", run.stderr);
    assert!(leftovers(&base, run.pid).is_empty());
    let report = json(&out);
    for key in ["rxBytes", "txBytes"] {
        let counted = net_bytes(&report, key);
        assert!(counted >= 1 << 20, "{key}: the step sent {SENT} B over its loopback, counted {counted}");
    }
    assert_eq!(
        report.pointer("/stepmon/summary/netRxBytes").and_then(Value::as_u64),
        Some(net_bytes(&report, "rxBytes"))
    );
    // The traffic stayed in the step's namespace: the host's lo did not see it.
    let host = (after.0 - before.0, after.1 - before.1);
    assert!(host.0 < SENT / 4 && host.1 < SENT / 4, "the host's lo moved {host:?} B during the step");

    let run = run_stepmon(&[
        "run",
        "-q",
        "--net",
        "isolated",
        "-o",
        out.to_str().unwrap(),
        "--",
        python,
        "-c",
        LOOPBACK_TRAFFIC,
    ]);
    assert!(run.status.success(), "{}", run.stderr);
    assert!(leftovers(&base, run.pid).is_empty());
    let report = json(&out);
    for key in ["rxBytes", "txBytes"] {
        assert_eq!(net_bytes(&report, key), 0, "{key}: loopback must not be counted without --include-loopback");
    }
}

#[test]
fn a_command_of_100000_arguments_is_elided_for_people_and_whole_in_the_json() {
    let name = "a_command_of_100000_arguments_is_elided_for_people_and_whole_in_the_json";
    if live(name).is_none() {
        return;
    }
    let dir = scratch("long-command");
    let path = dir.join("run.json");
    let numbers: Vec<String> = (1..=100_000).map(|n| n.to_string()).collect();
    let mut args = vec!["run", "-o", path.to_str().unwrap(), "--", "true"];
    args.extend(numbers.iter().map(String::as_str));
    let out = run_stepmon(&args);
    assert!(out.status.success(), "{}", out.stderr);
    let first = out.stderr.lines().next().unwrap();
    assert!(first.chars().count() <= 300, "{} characters: {first}", first.chars().count());
    assert!(first.starts_with("stepmon: `true 1 2 3 ") && first.contains("… (+"), "{first}");
    // The JSON keeps the whole argv.
    let document = json(&path);
    assert_eq!(document["stepmon"]["command"].as_array().unwrap().len(), 100_001);
    // Every report for people: the command elided, not 600 KB of it.
    for format in ["text", "markdown", "html", "svg"] {
        let report = run_stepmon(&["report", "-f", format, path.to_str().unwrap()]);
        assert!(report.status.success(), "{format}: {}", report.stderr);
        assert!(!report.stdout.contains("99999 100000"), "{format}: the whole command is shown");
        assert!(report.stdout.len() < 200_000, "{format}: {} bytes", report.stdout.len());
    }
}
