//! The parallelism advice in the exports: the suggested-jobs gauge, the
//! Markdown and HTML lines, the JSON; nothing where there is no advice;
//! in a job's Markdown, each step's advice or why it has none.

use stepmon_model::document::RunDocument;
use stepmon_model::processes::{Keep, Lifetime, ProcessRecord, Processes};
use stepmon_model::sample::LimitJson;
use stepmon_report::Step;

const MIB: u64 = 1 << 20;

/// A worker of `command` alive `[start, end)` s into the step, peaking at `peak_mib`.
fn worker(command: &str, pid: u32, start: f64, end: f64, peak_mib: u64) -> ProcessRecord {
    let origin = 1_796_000_000.0;
    #[allow(clippy::cast_possible_truncation)]
    let at = |s: f64| jiff::Timestamp::from_nanosecond(((origin + s) * 1e9) as i128).unwrap();
    let mut r = ProcessRecord::default();
    // Sleeping most of its life: a tenth of it on CPU.
    (r.command, r.pid, r.peak_rss_bytes, r.cpu_seconds) =
        (command.to_owned(), pid, Some(peak_mib * MIB), (end - start) / 10.0);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    {
        (r.start_unix_seconds, r.elapsed_seconds) = ((origin + start) as u64, end - start);
    }
    (r.start, r.end, r.lifetime) = (Some(at(start)), Some(at(end)), Some(Lifetime::ForkEvent));
    r.args = vec![command.to_owned(), format!("input{pid}.py")];
    r
}

/// Six workers of ~120-130 MiB started together, and their parent shell.
fn six_workers() -> Vec<ProcessRecord> {
    let mut all: Vec<ProcessRecord> =
        (0..6).map(|i| worker("python3", 100 + i, 0.05, 1.1 + f64::from(i) * 0.01, 120 + u64::from(i) * 2)).collect();
    all.push(worker("sh", 99, 0.0, 1.2, 3));
    all
}

/// A 2 s step with `processes`, memory.max `memory_max` and cpu.max of `cores`.
fn step(processes: Option<Processes>, memory_max: Option<u64>, cores: Option<u64>) -> Step {
    let json = r#"{"resourceUsage": {"samples": [
        {"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {"usageNanos": 0}, "pidsStat": {}},
        {"timestamp": "2026-11-30T10:00:02Z", "cpuStat": {"usageNanos": 1500000000}, "pidsStat": {}}]},
      "sysUsage": [],
      "stepmon": {"command": ["sh"], "exitCode": 0,
        "start": "2026-11-30T10:00:00Z", "end": "2026-11-30T10:00:02Z"}}"#;
    let mut document: RunDocument = serde_json::from_str(json).unwrap();
    document.stepmon.as_mut().unwrap().processes = processes;
    for s in &mut document.resource_usage.samples {
        s.stepmon.memory_max = memory_max.map(LimitJson::Value);
        s.stepmon.cpu_max_quota_usec = cores.map(|c| LimitJson::Value(c * 100_000));
        s.stepmon.cpu_max_period_usec = cores.map(|_| 100_000);
    }
    Step::from_run(&document)
}

fn taskstats(records: Vec<ProcessRecord>) -> Processes {
    let n = records.len() as u64;
    Processes::build(records, Keep::default(), n, 0)
}

#[test]
fn the_suggested_jobs_gauge_and_the_markdown_line() {
    let mut s = step(Some(taskstats(six_workers())), Some(400_000_000), Some(2));
    s.summary.memory.oom_kills = Some(3);
    let text = stepmon_export::prometheus::render(std::slice::from_ref(&s));
    assert!(text.contains("# TYPE stepmon_step_suggested_jobs gauge\n"), "{text}");
    let line = text.lines().find(|l| l.starts_with("stepmon_step_suggested_jobs{")).unwrap();
    assert!(line.ends_with(",worker=\"python3\",limited_by=\"memory\"} 2"), "{line}");
    let markdown = stepmon_export::markdown::render(std::slice::from_ref(&s));
    assert!(markdown.contains("\n**Advice**\n\n- parallelism: up to 6 python3 ran at once"), "{markdown}");
    let html = stepmon_export::html::render(std::slice::from_ref(&s));
    assert!(html.contains("<h3>Advice</h3>\n<ul>\n<li>parallelism: up to 6 python3 ran at once"), "{html}");
    let json: serde_json::Value =
        serde_json::from_str(&stepmon_export::render(stepmon_export::Format::Json, std::slice::from_ref(&s))).unwrap();
    assert_eq!(json["steps"][0]["advice"]["parallelism"]["suggestedJobs"], 2);
    // No advice: no sample, no section.
    let none = step(None, Some(400_000_000), None);
    assert!(!stepmon_export::prometheus::render(std::slice::from_ref(&none)).contains("suggested_jobs"));
    assert!(!stepmon_export::markdown::render(std::slice::from_ref(&none)).contains("**Advice**"));
}

/// A job's Markdown lists each step's advice and says why the others have
/// none, the steps of one reason on one line.
#[test]
fn the_jobs_markdown_lists_the_advice_and_why_not() {
    use stepmon_report::job::Entry;
    let advised = step(Some(taskstats(six_workers())), Some(400_000_000), Some(2));
    let (mut bare, mut also_bare) = (step(None, None, None), step(None, None, None));
    bare.name = "lint".to_owned();
    also_bare.name = "docs".to_owned();
    let entries: Vec<Entry> =
        [advised, bare, also_bare].into_iter().map(|s| Entry::of_run(s, "run.json".to_owned())).collect();
    let markdown = stepmon_export::job::markdown::render(&entries, &[]);
    let section =
        markdown.split("**Parallelism (`-j`)**\n\n").nth(1).expect("the section").split("\n\n").next().unwrap();
    let lines: Vec<&str> = section.lines().collect();
    assert_eq!(lines.len(), 2, "{section}");
    assert!(
        lines[0].starts_with("- sh: parallelism: up to 6 python3 ran at once")
            && lines[0].contains("→ -j2 (memory-bound"),
        "{section}"
    );
    assert!(lines[1].starts_with("- lint (sh), docs (sh): no parallelism advice: no per-process records"), "{section}");
}
