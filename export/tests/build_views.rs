//! The build's report (`stepmon build`) read by real consumers: its
//! Markdown by a CommonMark reader (pulldown-cmark, GitHub's tables), its
//! HTML by headless Chromium — a build of 10,000 actions, as the page must
//! stay small and render: every bar and every row there, the memory chart
//! drawn, nothing refused by the page's Content-Security-Policy, no
//! console message.

mod common;

use std::process::Command;
use std::time::Instant;

use jiff::{SignedDuration, Timestamp};
use stepmon_model::action::{Action, Compile, CrateBuild, CrateKind};
use stepmon_model::document::{RunDocument, RunInfo};
use stepmon_model::sample::{StepSample, StepUsage};
use stepmon_report::Step;
use stepmon_report::build::Build;
use stepmon_report::job::{Entry, StepStatus};

use common::markdown::read_markdown;

const MIB: u64 = 1 << 20;

fn at(seconds: f64) -> Timestamp {
    let t0: Timestamp = "2026-03-01T10:00:00Z".parse().expect("time");
    t0.checked_add(SignedDuration::from_secs_f64(seconds)).expect("in range")
}

fn step(name: &str, start: f64, end: f64, cpu: f64, peak: u64, samples: Vec<StepSample>) -> Step {
    let mut info = RunInfo::default();
    info.name = Some(name.to_owned());
    info.command = vec!["rustc".to_owned(), "--crate-name".to_owned(), name.to_owned()];
    (info.start, info.end, info.exit_code) = (Some(at(start)), Some(at(end)), Some(0));
    info.summary.wall_seconds = Some(end - start);
    let mut usage = StepUsage::default();
    usage.resource_usage.samples = samples;
    let mut step = Step::from_run_document(RunDocument::new(usage, info));
    step.summary.cpu.usage_seconds = Some(cpu);
    step.summary.memory.peak_bytes = Some(peak);
    step.summary.cpu_stall.some_share = Some(0.1);
    step
}

fn entry(mut step: Step, action: Option<Action>, exit_code: i32) -> Entry {
    if let Some(a) = &action {
        step.name = a.to_string();
    }
    let mut entry = Entry::of_run(step, "job.jsonl".to_owned());
    entry.action = action;
    entry.status = StepStatus::Ended { exit_code };
    entry
}

/// A build of `n` actions on 2 lanes, 2 ms apart each, of every kind; one
/// failed, one with a hostile name, two that share a name.
#[allow(clippy::cast_precision_loss)]
fn build(n: usize) -> Build {
    let wall = n as f64 * 0.02 + 1.0;
    let samples: Vec<StepSample> = (0..=10)
        .map(|i| {
            let t = wall * i as f64 / 10.0;
            serde_json::from_value(serde_json::json!({
                "timestamp": at(t).to_string(), "pidsStat": {},
                "stepmon": {"memoryCurrent": (100 + 30 * (i % 4)) * MIB},
            }))
            .expect("sample")
        })
        .collect();
    let mut entries = vec![entry(step("cargo", 0.0, wall, wall * 1.5, 300 * MIB, samples), None, 0)];
    let kinds = [CrateKind::Lib, CrateKind::Bin, CrateKind::ProcMacro, CrateKind::BuildScript, CrateKind::Test];
    for i in 0..n {
        let start = 0.5 + (i / 2) as f64 * 0.04;
        let end = start + 0.03 + (i % 7) as f64 * 0.001;
        let name = match i {
            3 => "<script>document.title='pwned'</script>|x".to_owned(),
            5 | 6 => "twin".to_owned(),
            _ => format!("crate{i}"),
        };
        let action = if i % 11 == 0 {
            Action::Compile(Compile::new("cc".to_owned(), Some(format!("{name}.o")), Some(format!("{name}.c"))))
        } else {
            let mut c = CrateBuild::new(name.clone(), kinds[i % kinds.len()], "rustc".to_owned());
            c.version = Some("1.0.0".to_owned());
            Action::Crate(c)
        };
        let peak = (10 + (i * 7919) % 190) as u64 * MIB;
        let code = i32::from(i == 8);
        entries.push(entry(step(&name, start, end, end - start, peak, Vec::new()), Some(action), code));
    }
    Build::of_entries(&entries, 0, &[])
}

#[test]
fn markdown_reads_as_commonmark_with_every_part() {
    let build = build(40);
    let text = stepmon_export::build::markdown::render(&build, 5);
    let read = read_markdown(&text);
    assert!(read.html.is_empty(), "raw HTML reached the reader: {:?}", read.html);
    assert_eq!(
        read.headings,
        ["stepmon build", "Longest actions (wall)", "Heaviest actions (memory peak)", "Failed actions"]
    );
    // Three tables, each with the same head; five rows in each ranking.
    assert_eq!(read.tables.len(), 3);
    for table in &read.tables {
        assert_eq!(table[0], stepmon_export::build::HEADER);
    }
    assert_eq!(read.tables[0].len(), 6);
    // The rankings find actions by their place: the first longest is the
    // one the report ranks first, named by its place in the job.
    let first = build.by_wall()[0];
    assert_eq!(read.tables[0][1][0], format!("#{}", build.actions[first].row + 1));
    let heaviest = build.by_peak()[0];
    assert_eq!(read.tables[1][1][1], build.row(&build.actions[heaviest]).shown_name());
    // The failed one, marked.
    assert_eq!(read.tables[2].len(), 2);
    assert!(read.tables[2][1][1].ends_with("— FAILED"), "{:?}", read.tables[2]);
    // The facts, one item each; the hostile name is text.
    let labels: Vec<&str> = read.items.iter().map(|i| i.split(':').next().unwrap_or("")).collect();
    assert_eq!(labels, ["build", "actions", "remainder", "critical path", "memory", "actions at once", "-j"]);
    assert!(read.items[1].starts_with("actions: 40 (lib 7, bin 7, proc-macro 7, build script 7, test 8, compile 4)"));
    assert!(text.contains("and 35 more:"));
    let all: String = read.tables.iter().flatten().flatten().cloned().collect();
    assert!(!all.contains("<script>") || !text.contains("<script>"), "unescaped");
}

/// Chromium's stdout (the DOM) and stderr (its log, console messages
/// included) for `page`.
fn chromium(binary: &std::path::Path, profile: &std::path::Path, page: &std::path::Path) -> (String, String, f64) {
    let started = Instant::now();
    let output = Command::new("timeout")
        .args(["-k", "5", "120"])
        .arg(binary)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check"])
        .args(["--disable-extensions", "--disable-background-networking", "--hide-scrollbars"])
        .args(["--enable-logging=stderr", "--v=0", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run timeout/chromium");
    let seconds = started.elapsed().as_secs_f64();
    assert!(output.status.success(), "chromium failed ({})", output.status);
    (
        String::from_utf8(output.stdout).expect("UTF-8 DOM"),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        seconds,
    )
}

#[test]
fn chromium_renders_a_build_of_ten_thousand_actions() {
    let Some(binary) = common::chromium::chromium_or_skip("chromium_renders_a_build_of_ten_thousand_actions") else {
        return;
    };
    let tmp = tempfile::Builder::new().prefix("stepmon-build-html-").tempdir().expect("temp dir");
    let started = Instant::now();
    let build = build(10_000);
    let analysed = started.elapsed().as_secs_f64();
    let page = stepmon_export::build::html::render(&build, 10);
    eprintln!(
        "10,000 actions: analysed in {analysed:.2} s, rendered in {:.2} s",
        started.elapsed().as_secs_f64() - analysed
    );
    eprintln!("page: {} bytes", page.len());
    assert!(page.len() <= 5 << 20, "the page is {} bytes", page.len());
    assert!(!page.contains("<script"), "the page holds a script");
    let path = tmp.path().join("build.html");
    std::fs::write(&path, &page).expect("write page");
    let (dom, log, seconds) = chromium(&binary, &tmp.path().join("profile"), &path);
    eprintln!("chromium --dump-dom: {seconds:.2} s");
    // Every bar and every row; the memory chart's two curves and its peak.
    assert_eq!(dom.matches("<rect class=\"action k-").count(), 10_000);
    assert_eq!(dom.matches("class=\"action k-compile").count(), 10_000 / 11 + 1);
    assert_eq!(dom.matches(" failed\" data-row=").count(), 1);
    assert!(dom.matches(" critical").count() >= 2, "the critical path is outlined");
    let table = &dom[dom.find("<table class=\"build-actions\">").expect("the table")..];
    assert_eq!(table.matches("<tr>").count() + table.matches("<tr class=\"failed\">").count(), 10_001);
    assert!(dom.contains("<polyline class=\"build-memory\" points=\""));
    assert!(dom.contains("<polyline class=\"actions-together\" points=\""));
    assert!(dom.contains("<circle class=\"peak\""));
    // The details only for the actions that matter.
    let details = dom.matches("<details class=\"action\"").count();
    assert!((20..=60).contains(&details), "{details} details");
    // The hostile name is text; the title is the page's.
    assert!(dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;|x"));
    assert!(dom.contains("<title>stepmon build: cargo"));
    // Nothing refused, nothing said on the console.
    let said: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE") || l.contains("Refused")).collect();
    assert!(said.is_empty(), "console: {said:?}");
}
