//! `stepmon run --progress` and the memory warning on real steps: a line
//! per interval of a 3 s step (none for a 0.5 s one), each with its
//! fields and its busiest command; a step growing 20 MiB/s under `--memory-max 200M` warned once,
//! before the OOM kill, the event in the run document and in the job
//! record, and `stepmon report` of each shows it at its time.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use common::{leftovers, live, python, run_stepmon, run_stepmon_with, scratch};

/// A python3 step busy on one core for `seconds`.
fn busy(seconds: f64) -> String {
    format!("import time\nend = time.time() + {seconds}\nwhile time.time() < end:\n    pass\n")
}

/// The progress lines of the step `name` in `stderr`.
fn progress_lines<'a>(stderr: &'a str, name: &str) -> Vec<&'a str> {
    let prefix = format!("stepmon: {name}: ");
    stderr.lines().filter(|l| l.starts_with(&prefix)).collect()
}

/// The number after `word ` in `line` (`cpu 0.98 cores` → 0.98).
fn number_after(line: &str, word: &str) -> f64 {
    let rest = line.split_once(&format!("{word} ")).unwrap_or_else(|| panic!("no {word:?} in {line}")).1;
    rest.split_whitespace().next().unwrap().trim_end_matches(',').parse().unwrap_or_else(|_| panic!("{line}"))
}

#[test]
fn a_3_s_step_says_how_it_is_doing_every_second_a_half_second_one_says_nothing() {
    let name = "a_3_s_step_says_how_it_is_doing_every_second_a_half_second_one_says_nothing";
    let (Some(base), Some(python)) = (live(name), python(name)) else { return };
    let python = python.to_str().unwrap();
    let long = run_stepmon(&["run", "-q", "--progress=1s", "--name", "busy", "--", python, "-c", &busy(3.0)]);
    assert!(long.status.success(), "{}", long.stderr);
    let lines = progress_lines(&long.stderr, "busy");
    assert!((2..=3).contains(&lines.len()), "a line a second of 3 s: {lines:#?}\n{}", long.stderr);
    for line in &lines {
        assert!(number_after(line, "cpu") > 0.05, "a busy step's cores now: {line}");
        assert!(line.contains(" cores now, ") && line.contains(" on average"), "{line}");
        assert!(line.contains("  memory ") && line.contains(" now, ") && line.contains(" peak"), "{line}");
        assert!(number_after(line, "tasks") >= 1.0, "{line}");
        assert!(line.contains("  stall cpu "), "PSI of the step's cgroup v2: {line}");
        // The step's one process, by the name the kernel gives it (its
        // program's file name, cut to 15 bytes).
        let busiest = line.split_once("  busiest ").unwrap_or_else(|| panic!("no busiest command: {line}")).1;
        let command: String = Path::new(python).file_name().unwrap().to_str().unwrap().chars().take(15).collect();
        assert_eq!(busiest.split(' ').next(), Some(command.as_str()), "{line}");
        assert!(number_after(line, &format!("busiest {command}")) > 0.05, "a busy command's cores: {line}");
    }
    // Elapsed times go up, a second apart.
    let elapsed: Vec<&str> = lines.iter().map(|l| l.split("  ").next().unwrap()).collect();
    assert!(elapsed.windows(2).all(|w| w[0] != w[1]), "{elapsed:?}");

    // STEPMON_PROGRESS does what --progress does; a 0.5 s step is shorter
    // than the interval: no line.
    let short = run_stepmon_with(
        &[("STEPMON_PROGRESS", "1s")],
        &["run", "-q", "--name", "brief", "--", python, "-c", &busy(0.5)],
    );
    assert!(short.status.success(), "{}", short.stderr);
    assert_eq!(progress_lines(&short.stderr, "brief"), Vec::<&str>::new(), "{}", short.stderr);
    let env_long = run_stepmon_with(
        &[("STEPMON_PROGRESS", "1s")],
        &["run", "-q", "--name", "env", "--", python, "-c", &busy(2.5)],
    );
    assert!(!progress_lines(&env_long.stderr, "env").is_empty(), "{}", env_long.stderr);
    let bad = run_stepmon_with(&[("STEPMON_PROGRESS", "often")], &["run", "-q", "--", "true"]);
    assert_eq!(bad.status.code(), Some(125), "{}", bad.stderr);
    assert!(bad.stderr.contains("STEPMON_PROGRESS: "), "{}", bad.stderr);
    for pid in [long.pid, short.pid, env_long.pid, bad.pid] {
        assert!(leftovers(&base, pid).is_empty());
    }
}

#[test]
fn a_step_growing_under_its_limit_is_warned_once_before_the_kill_in_its_document_and_job_record() {
    let name = "a_step_growing_under_its_limit_is_warned_once_before_the_kill_in_its_document_and_job_record";
    let (Some(base), Some(python)) = (live(name), python(name)) else { return };
    let dir = scratch("watch");
    let (job, doc) = (dir.join("job.jsonl"), dir.join("run.json"));
    // 1 MiB every 50 ms: 20 MiB/s, killed at 200 MiB after some 10 s.
    let grow = "import time\nb = []\nfor _ in range(600):\n    b.append(b'x' * (1 << 20))\n    time.sleep(0.05)\n";
    let args = [
        "run",
        "--memory-max",
        "200M",
        "--name",
        "grow",
        "--job",
        job.to_str().unwrap(),
        "-o",
        doc.to_str().unwrap(),
        "--",
        python.to_str().unwrap(),
        "-c",
        grow,
    ];
    let run = run_stepmon(&args);
    assert_eq!(run.status.code(), Some(137), "OOM-killed: {}", run.stderr);
    let warnings: Vec<&str> =
        run.stderr.lines().filter(|l| l.starts_with("stepmon: warning: grow: memory at ")).collect();
    let [warning] = warnings.as_slice() else { panic!("one warning: {}", run.stderr) };
    assert!(warning.contains("of its memory limit (") && warning.contains("of 200.0 MiB"), "{warning}");
    assert!(warning.contains(", growing ") && warning.contains("largest: python3 (pid "), "{warning}");
    // Before the step's end: the summary comes after it.
    let at = run.stderr.find(warning).unwrap();
    assert!(run.stderr[at..].contains("was killed by signal 9"), "{}", run.stderr);

    let document = common::json(&doc);
    let events = document.pointer("/stepmon/events").and_then(|e| e.as_array()).unwrap();
    let [event] = events.as_slice() else { panic!("{events:#?}") };
    assert_eq!(event["kind"], "memoryNearLimit");
    assert_eq!(event["memory"]["bound"], "ownLimit");
    assert_eq!(event["memory"]["limitBytes"], 200 << 20);
    let share = event["memory"]["share"].as_f64().unwrap();
    assert!((0.9..1.0).contains(&share), "{event:#}");
    let end: jiff::Timestamp = document["stepmon"]["end"].as_str().unwrap().parse().unwrap();
    let seen: jiff::Timestamp = event["at"].as_str().unwrap().parse().unwrap();
    let before = end.duration_since(seen).as_secs_f64();
    eprintln!("warned {before:.3} s before the kill, at {:.1}%", share * 100.0);
    // The goal is at least 1 s before the kill. From 90% of 200 MiB
    // the step needs 20 MiB, a second at its 20 MiB/s: a warning as the
    // usage crosses 90% leaves that second, less how late the crossing is
    // seen (a check every 20 ms there, plus this busy machine's scheduling
    // delay), plus the kernel's reclaim before its OOM kill (1.05-1.14 s
    // seen). What the design guarantees, with 80 ms for the scheduler:
    assert!(before >= 0.9, "warned {before:.3} s before the kill");

    // The job record: one stepEvent line, the document's event, between
    // the step's start and end.
    let text = std::fs::read_to_string(&job).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "stepEvent").count(), 1, "{kinds:?}");
    let line = lines.iter().find(|l| l["kind"] == "stepEvent").unwrap();
    assert_eq!(&line["event"], event, "the same event in both");
    assert_eq!(line["step"], lines[0]["step"]);
    assert_eq!((kinds.first(), kinds.last()), (Some(&"stepStart"), Some(&"stepEnd")));
    // The record's event line is before the OOM kill too: before the
    // step's end line, at the document's time.
    let event_line = kinds.iter().position(|k| *k == "stepEvent").unwrap();
    assert!(event_line < kinds.len() - 1, "{kinds:?}");
    // `stepmon report` of each shows the event at its time, with no note of
    // the line; its text from the event's own numbers.
    let into_step = event["elapsedSeconds"].as_f64().unwrap();
    let said = format!("memory {:.1}% of memory.", share * 100.0);
    let at_time = format!(" at {}", stepmon_report::units::seconds(into_step));
    for (input, prefix) in [(&doc, "  event    "), (&job, "event: grow ")] {
        let report = run_stepmon(&["report", input.to_str().unwrap()]);
        assert!(report.status.success(), "{}", report.stderr);
        assert!(!report.stderr.contains("skipped") && !report.stdout.contains("skipped"), "{}", report.stderr);
        let lines: Vec<&str> = report.stdout.lines().filter(|l| l.starts_with(prefix)).collect();
        let [line] = lines.as_slice() else { panic!("one event in {}: {}", input.display(), report.stdout) };
        assert!(line.contains(&said) && line.contains("of 200.0 MiB") && line.contains(&at_time), "{line}");
        let html = run_stepmon(&["report", "-f", "html", input.to_str().unwrap()]);
        assert!(
            html.stdout.contains("<ul class=\"events\">") && html.stdout.contains("class=\"event\""),
            "{}",
            html.stdout
        );
    }
    assert!(leftovers(&base, run.pid).is_empty());
}
