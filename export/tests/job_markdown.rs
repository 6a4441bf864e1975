//! The job's Markdown for `$GITHUB_STEP_SUMMARY` at any size: GitHub
//! refuses a step summary over 1 MiB, so a job of 10,000 steps must give
//! one under it that still shows the steps that matter (the longest, the
//! heaviest, the most memory, the failed, the interrupted) and says how
//! many it left out; its notes and advice are capped the same way, and its
//! two charts (the job's cores and memory over time) stay at most
//! `MAX_CHART_POINTS` points. Read back with a CommonMark parser
//! (pulldown-cmark, GitHub's table extension).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::job::{at, end_with, entries_of, line, sample_lines, sample_with, start, sys};
use common::markdown::read_markdown;
use stepmon_export::job::markdown::{MAX_NOTES, MAX_TABLE_ROWS, render};
use stepmon_export::markdown::MAX_CHART_POINTS;
use stepmon_model::job::Record;
use stepmon_report::job::table::{self, remarks};

/// GitHub's limit on one step's summary.
const ONE_MIB: usize = 1024 * 1024;

/// The steps that matter in the big job, by their place (from 0).
const LONGEST: usize = 4321;
const HEAVIEST: usize = 1234;
const HUNGRIEST: usize = 8765;
const FAILED: usize = 7777;
const INTERRUPTED: usize = 9998;

/// A long name with Markdown's special characters: escaping makes it longer.
fn name(i: usize) -> String {
    format!("step {i:05} | {} <b>", "cargo test --workspace --all-features -- --test-threads=1 ".repeat(3))
}

/// `steps` steps, one a second, each 0.5 s (a gap between each two) but the
/// longest (2.5 s), with 0.2 s of CPU but the heaviest (0.45 s), 64 MiB but
/// the hungriest (900 MiB); one exits 2, one never ends.
fn job(steps: usize) -> String {
    let mut text = String::new();
    for i in 0..steps {
        let from = i as f64;
        let wall = if i == LONGEST { 2.5 } else { 0.5 };
        let cpu = if i == HEAVIEST { 450_000_000 } else { 200_000_000 };
        let memory: u64 = if i == HUNGRIEST { 900 << 20 } else { 64 << 20 };
        let step = start(i as u32 + 1, &at(from).to_string(), &name(i));
        let mut last = sample_with(at(from + wall), cpu, memory, 0);
        // The peak as the cgroup's memory.peak gives it.
        last.memory_stat = Some(serde_json::from_value(serde_json::json!({"peak": memory})).unwrap());
        let samples = [sample_with(at(from), 0, 0, 0), last];
        text += &line(Record::StepStart(step.clone()));
        text += &sample_lines(&step, &samples);
        if i == INTERRUPTED {
            continue;
        }
        let machine = [sys(at(from), 0.0, 0.0, 16 << 20, 4, 0), sys(at(from + wall), 1.0, 1.0, 16 << 20, 4, 0)];
        text += &end_with(&step, at(from + wall), if i == FAILED { 2 } else { 0 }, &samples, &machine);
    }
    text
}

#[test]
fn a_10000_step_job_stays_under_1_mib_with_the_steps_that_matter() {
    let entries = entries_of(&job(10_000));
    let md = render(&entries, &[]);
    assert!(md.len() < ONE_MIB / 4, "{} bytes", md.len());
    let read = read_markdown(&md);
    assert!(read.html.is_empty(), "a name became HTML: {:?}", read.html);
    let (head, rows) = read.tables[0].split_first().unwrap();
    assert_eq!(head[1], "step");
    assert_eq!(rows.len(), MAX_TABLE_ROWS);
    // Each row keeps its place in the whole job.
    let places: Vec<usize> = rows.iter().map(|r| r[0].parse::<usize>().unwrap() - 1).collect();
    assert!(places.windows(2).all(|w| w[0] < w[1]), "by start: {places:?}");
    for (what, i) in [
        ("longest", LONGEST),
        ("heaviest", HEAVIEST),
        ("hungriest", HUNGRIEST),
        ("failed", FAILED),
        ("interrupted", INTERRUPTED),
    ] {
        let row = rows.iter().find(|r| r[0] == (i + 1).to_string()).unwrap_or_else(|| panic!("no {what} row"));
        assert!(row[1].starts_with(&format!("step {i:05} | cargo test")), "{what}: {}", row[1]);
    }
    let failed = rows.iter().find(|r| r[0] == (FAILED + 1).to_string()).unwrap();
    assert_eq!(failed[10], "2");
    let interrupted = rows.iter().find(|r| r[0] == (INTERRUPTED + 1).to_string()).unwrap();
    assert_eq!(interrupted[9], "INTERRUPTED");
    assert!(md.contains(&format!("*{MAX_TABLE_ROWS} of the job's 10000 steps shown")), "the count");
    assert!(md.contains(&format!("; {} left out.", 10_000 - MAX_TABLE_ROWS)), "what was left out");
    // 9,999 gaps and an interrupted step: the notes are capped and counted.
    let notes = read.items.iter().filter(|i| i.starts_with("gap: ") || i.starts_with("interrupted: ")).count();
    assert_eq!(notes, MAX_NOTES);
    let all = remarks(&table::job(&entries, &[])).len();
    assert!(all > 9_000, "a gap between each two steps: {all}");
    let more = all - MAX_NOTES;
    assert!(
        read.items.iter().any(|i| i.starts_with(&format!("and {more} more notes"))),
        "{:?}",
        &read.items[read.items.len() - 3..]
    );
    // The two charts, each at most MAX_CHART_POINTS points.
    let charts: Vec<&String> = read.code.iter().filter(|(lang, _)| lang == "mermaid").map(|(_, c)| c).collect();
    assert_eq!(charts.len(), 2);
    for chart in charts {
        let line = chart.lines().find_map(|l| l.trim().strip_prefix("line [")).unwrap();
        let points = line.trim_end_matches(']').split(", ").count();
        assert!((2..=MAX_CHART_POINTS).contains(&points), "{points}");
    }
}

#[test]
fn a_small_job_keeps_every_step_and_charts_its_sums() {
    // Two overlapping steps: 0–2 s at 1 core and 100 MiB, 1–3 s at 0.5
    // core and 50 MiB; together 1.5 cores and 150 MiB over 1–2 s.
    let mut text = String::new();
    for (i, (from, cores, mib)) in [(0.0, 1.0, 100u64), (1.0, 0.5, 50)].into_iter().enumerate() {
        let step = start(i as u32 + 1, &at(from).to_string(), &format!("s{i}"));
        let samples: Vec<_> = (0..=20)
            .map(|k| {
                let t = f64::from(k) * 0.1;
                sample_with(at(from + t), (t * cores * 1e9) as u64, if k == 0 { 0 } else { mib << 20 }, 0)
            })
            .collect();
        text += &line(Record::StepStart(step.clone()));
        text += &sample_lines(&step, &samples);
        text += &end_with(&step, at(from + 2.0), 0, &samples, &[sys(at(from), 0.0, 0.0, 16 << 20, 2, 0)]);
    }
    let md = render(&entries_of(&text), &[]);
    let read = read_markdown(&md);
    assert_eq!(read.tables[0].len(), 3, "{md}");
    assert!(!md.contains("steps shown"), "{md}");
    let (cores, memory) =
        (values_in(&read, &md, "CPU of the job's steps together"), values_in(&read, &md, "Memory in use"));
    // 3 s in 0.05 s buckets: 60 points; bucket k ends at (k + 1) × 0.05 s.
    assert_eq!((cores.len(), memory.len()), (60, 60), "{md}");
    let near = |a: f64, b: f64| (a - b).abs() < 1e-3;
    assert!(near(cores[9], 1.0) && near(cores[29], 1.5) && near(cores[49], 0.5), "{cores:?}");
    assert!(near(memory[9], 100.0) && near(memory[29], 150.0) && near(memory[49], 50.0), "{memory:?}");
    // No step ran parallel workers: why there is no -j advice, both named.
    assert!(read.items.iter().any(|i| i.starts_with("s0, s1: no parallelism advice")), "{:?}", read.items);

    // The second step measured by the cgroup around it (its memory an upper
    // bound, not its own): its memory leaves the chart, as it leaves the
    // job's verdict, and the chart says so; its cores stay.
    let text: String = text
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if v["kind"] == "stepEnd" && v.pointer("/document/stepmon/name").and_then(|n| n.as_str()) == Some("s1") {
                v["document"]["stepmon"]["sources"]["memory"] =
                    serde_json::json!({"rung": "enclosingCgroup", "bound": "upperBound", "covers": "/ci"});
            }
            serde_json::to_string(&v).unwrap() + "\n"
        })
        .collect();
    let md = render(&entries_of(&text), &[]);
    let read = read_markdown(&md);
    let (cores, memory) =
        (values_in(&read, &md, "CPU of the job's steps together"), values_in(&read, &md, "Memory in use"));
    assert!(near(cores[29], 1.5) && near(cores[49], 0.5), "{cores:?}");
    assert!(near(memory[9], 100.0) && near(memory[29], 100.0) && near(memory[49], 0.0), "{memory:?}");
    assert!(md.contains("*1 of the job's 2 steps have no MiB readings of their own and add nothing to it.*"), "{md}");
}

/// The values of the Mermaid chart titled `title` in `md` (read as `read`).
fn values_in(read: &common::markdown::Read, md: &str, title: &str) -> Vec<f64> {
    let chart = read.code.iter().find(|(_, c)| c.contains(title)).unwrap_or_else(|| panic!("{md}")).1.clone();
    let line = chart.lines().find_map(|l| l.trim().strip_prefix("line [").map(str::to_owned)).unwrap();
    line.trim_end_matches(']').split(", ").map(|v| v.parse().unwrap()).collect()
}
