use super::*;
use stepmon_model::processes::{CpuTime, Keep, ProcessRecord, ProcessSource, RUSAGE, ReapedProcess, SAMPLED};

fn process(command: &str, pid: u32, cpu: f64, rss: u64, written: u64) -> ProcessRecord {
    ProcessRecord {
        command: command.to_owned(),
        pid,
        start_unix_seconds: u64::from(pid),
        threads: 1,
        cpu_seconds: cpu,
        cpu_time: Some(CpuTime::Exact),
        peak_rss_bytes: Some(rss),
        read_bytes: Some(0),
        write_bytes: Some(written),
        ..ProcessRecord::default()
    }
}

#[test]
fn aggregates_per_command_and_bounded_top_lists() {
    let mut all: Vec<_> = (0..100).map(|i| process("cc1", 1000 + i, 0.5, 10 << 20, 0)).collect();
    all.push(process("ld", 7, 3.0, 900 << 20, 1 << 30));
    all.push(process("cc1", 2000, 0.1, 1 << 30, 0));
    let p = Processes::build(all, Keep::Top(5), 102, 0);
    assert_eq!((p.processes, p.records, p.partial), (102, 102, false));
    assert_eq!(p.commands.len(), 2);
    let cc1 = &p.commands[0];
    assert_eq!((cc1.command.as_str(), cc1.count), ("cc1", 101));
    assert!((cc1.cpu_seconds - 50.1).abs() < 1e-9);
    assert_eq!((cc1.max_peak_rss_bytes, cc1.max_peak_rss_pid), (Some(1 << 30), Some(2000)));
    assert_eq!(p.commands[1].write_bytes, 1 << 30);
    assert_eq!(p.top_by_cpu.len(), 5);
    assert_eq!(p.top_by_cpu[0].command, "ld");
    assert_eq!(p.peak().map(|r| r.pid), Some(2000));
    assert_eq!(p.top_by_io[0].pid, 7);
    assert!(p.all.is_empty(), "only with Keep::All");
    assert!((p.cpu_seconds() - 53.1).abs() < 1e-9);
    assert_eq!(p.cpu_time, Some(CpuTime::Exact));
}

#[test]
fn keep_all_lists_every_process_in_start_order() {
    let p = Processes::build(vec![process("b", 9, 1.0, 1, 0), process("a", 3, 2.0, 1, 0)], Keep::All, 2, 0);
    assert_eq!(p.all.iter().map(|r| r.pid).collect::<Vec<_>>(), [3, 9]);
    assert_eq!(p.top_by_cpu.len(), 2);
}

#[test]
fn drops_make_it_partial() {
    let p = Processes::build(vec![process("a", 1, 1.0, 1, 0)], Keep::default(), 1, 412);
    assert!(p.partial);
    assert_eq!(p.lost_at_most, 412);
}

#[test]
fn one_tick_sampled_process_labels_the_whole_document() {
    let mut sampled = process("a", 1, 1.0, 1, 0);
    sampled.cpu_time = Some(CpuTime::TickSampled);
    let p = Processes::build(vec![sampled, process("b", 2, 1.0, 1, 0)], Keep::default(), 2, 0);
    assert_eq!(p.cpu_time, Some(CpuTime::TickSampled));
}

#[test]
fn threads_add_cpu_and_io_but_share_the_peak() {
    let mut leader = process("rustc", 5, 1.0, 100, 10);
    leader.delays.cpu_seconds = Some(0.5);
    let mut thread = process("rustc", 5, 2.0, 120, 5);
    thread.delays.cpu_seconds = Some(0.25);
    leader.add_thread(&thread);
    assert_eq!((leader.threads, leader.cpu_seconds, leader.peak_rss_bytes), (2, 3.0, Some(120)));
    assert_eq!((leader.write_bytes, leader.delays.cpu_seconds), (Some(15), Some(0.75)));
    assert_eq!(leader.delays.blkio_seconds, None, "absent stays absent");
}

#[test]
fn the_json_round_trips() {
    let p = Processes::build(vec![process("a", 1, 1.0, 1, 0)], Keep::Top(3), 1, 0);
    let json = serde_json::to_string(&p).unwrap();
    assert!(json.contains("\"topByCpu\"") && json.contains("\"lostAtMost\":0"), "{json}");
    assert_eq!(serde_json::from_str::<Processes>(&json).unwrap(), p);
    let none = Processes::unavailable("taskstats needs root");
    assert_eq!(serde_json::from_str::<Processes>(&serde_json::to_string(&none).unwrap()).unwrap(), none);
}

#[test]
fn keep_reads_a_count_or_all() {
    assert_eq!("all".parse::<Keep>(), Ok(Keep::All));
    assert_eq!("5".parse::<Keep>(), Ok(Keep::Top(5)));
    assert!("-1".parse::<Keep>().is_err());
}

/// A run document with these processes and memory samples from the step's cgroup.
fn run_with(processes: Option<Processes>) -> crate::Step {
    let json = r#"{"resourceUsage": {"samples": [
        {"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {"usageNanos": 0}, "memoryStat": {"peak": 1000}, "pidsStat": {}},
        {"timestamp": "2026-11-30T10:00:02Z", "cpuStat": {"usageNanos": 1500000000}, "memoryStat": {"peak": 200000000}, "pidsStat": {}}]},
      "sysUsage": [],
      "stepmon": {"command": ["make"], "exitCode": 0,
        "start": "2026-11-30T10:00:00Z", "end": "2026-11-30T10:00:02Z"}}"#;
    let mut document: stepmon_model::document::RunDocument = serde_json::from_str(json).unwrap();
    document.stepmon.as_mut().unwrap().processes = processes;
    crate::Step::from_run(&document)
}

#[test]
fn the_memory_verdict_names_the_process_that_peaked() {
    let p = Processes::build(
        vec![process("cc1plus", 8841, 1.0, 150 << 20, 0), process("ld", 9, 1.0, 20 << 20, 0)],
        Keep::default(),
        2,
        0,
    );
    let verdict = run_with(Some(p)).verdicts().memory;
    let peak = verdict.peak_process.clone().unwrap();
    assert_eq!((peak.command.as_str(), peak.pid, peak.peak_rss_bytes), ("cc1plus", 8841, 150 << 20));
    assert!(verdict.reason.contains("largest process cc1plus (pid 8841) 150.0 MiB"), "{}", verdict.reason);
    let without = run_with(None).verdicts().memory;
    assert_eq!(without.peak_process, None);
    assert!(!without.reason.contains("largest process"), "{}", without.reason);
}

#[test]
fn the_summary_has_the_top_processes_lines() {
    let p = Processes::build(vec![process("cc1plus", 8841, 0.75, 150 << 20, 0)], Keep::default(), 1, 0);
    let step = run_with(Some(p));
    let text = crate::text::render(&step, &step.verdicts());
    assert!(text.contains("\n  procs    1 processes (taskstats), none lost\n"), "{text}");
    assert!(
        text.contains("\n  top      cc1plus ×1: 50.0% of the step's CPU, largest 150.0 MiB (pid 8841)\n"),
        "{text}"
    );
}

#[test]
fn a_sampled_document_says_so_and_is_partial() {
    let p =
        Processes::sampled(vec![process("sleep", 5, 0.0, 1 << 20, 0)], Keep::default(), "taskstats listener refused");
    assert_eq!(p.source, Some(ProcessSource::Sampled));
    assert!(p.partial, "processes shorter than the interval are missing");
    assert_eq!(p.missing, [SAMPLED, "taskstats listener refused"]);
    assert_eq!(p.peak().map(|r| r.pid), Some(5));
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["source"], "sampled");
    let procs = p.summary_lines(None).remove(0);
    assert_eq!(procs, "procs    1 processes (sampled), processes shorter than the interval are missing");
}

#[test]
fn diff_flags_a_command_whose_cpu_changed_beyond_the_noise() {
    let run = |cc_cpu: f64| {
        let p = Processes::build(
            vec![process("cc1", 10, cc_cpu, 100 << 20, 0), process("ld", 11, 0.5, 50 << 20, 0)],
            Keep::default(),
            2,
            0,
        );
        run_with(Some(p))
    };
    let diff = crate::diff::StepDiff::between(&run(1.0), &run(3.0));
    let cc1 = diff.commands.iter().find(|c| c.command == "cc1").unwrap();
    assert!(cc1.cpu.significant, "{cc1:#?}");
    assert_eq!(cc1.cpu.direction, crate::diff::Direction::Up);
    assert!(!cc1.peak_rss.significant, "same peak");
    let ld = diff.commands.iter().find(|c| c.command == "ld").unwrap();
    assert!(!ld.cpu.significant && !ld.peak_rss.significant, "{ld:#?}");
    let text = diff.render_text();
    assert!(text.lines().any(|l| l.starts_with("* command  cc1: CPU ") && l.contains(" → ")), "{text}");
    assert!(!text.contains("command  ld"), "{text}");
    let json = serde_json::to_value(&diff).unwrap();
    assert_eq!(json["commands"][0]["command"], "cc1");
    assert!(crate::diff::StepDiff::between(&run_with(None), &run_with(None)).commands.is_empty());
}

proptest::proptest! {
    /// The top lists, chosen without sorting every process, are the first n
    /// of every process sorted.
    #[test]
    fn top_lists_are_the_head_of_the_whole_order(
        values in proptest::collection::vec((0u32..50, 0u8..8, 0u64..6, 0u64..4), 0..120),
        n in 0usize..30,
    ) {
        let all: Vec<ProcessRecord> = values
            .iter()
            .enumerate()
            .map(|(i, &(pid, cpu, rss, written))| {
                // A process is one (pid, start): pids repeat, starts differ.
                let mut p = process("cc", pid, f64::from(cpu) / 4.0, rss << 20, written);
                p.start_unix_seconds = i as u64;
                p
            })
            .collect();
        let doc = Processes::build(all.clone(), Keep::Top(n), all.len() as u64, 0);
        let head = |key: fn(&ProcessRecord) -> f64| {
            let mut sorted = all.clone();
            sorted.sort_by(|a, b| {
                key(b).total_cmp(&key(a)).then(a.pid.cmp(&b.pid)).then(a.start_unix_seconds.cmp(&b.start_unix_seconds))
            });
            sorted.truncate(n);
            sorted
        };
        proptest::prop_assert_eq!(&doc.top_by_cpu, &head(|p| p.cpu_seconds));
        proptest::prop_assert_eq!(&doc.top_by_peak_rss, &head(|p| p.peak_rss_bytes.map_or(-1.0, |b| b as f64)));
        proptest::prop_assert_eq!(&doc.top_by_io, &head(|p| p.io_bytes() as f64));
    }
}

fn with_args(mut p: ProcessRecord, line: &str) -> ProcessRecord {
    p.args = line.split(' ').map(str::to_owned).collect();
    p
}

#[test]
fn the_largest_process_is_named_by_its_input_in_the_summary_the_verdict_and_the_json() {
    let big = with_args(process("cc1plus", 8841, 0.5, 150 << 20, 0), "cc1plus -quiet src/foo.cpp -o /tmp/foo.s");
    let small = with_args(process("cc1plus", 8842, 0.25, 10 << 20, 0), "cc1plus -quiet src/bar.cpp -o /tmp/bar.s");
    let unread = process("ld", 9, 0.1, 1 << 20, 0);
    let p = Processes::build(vec![big, small, unread], Keep::default(), 3, 0);
    assert_eq!(p.commands[0].max_peak_rss_args, ["cc1plus", "-quiet", "src/foo.cpp", "-o", "/tmp/foo.s"]);
    assert_eq!(p.commands[0].max_peak_rss_label(), Some("foo.cpp"));
    let step = run_with(Some(p.clone()));
    let text = crate::text::render(&step, &step.verdicts());
    assert!(
        text.contains("\n  top      cc1plus ×2: 50.0% of the step's CPU, largest 150.0 MiB (pid 8841, foo.cpp)\n"),
        "{text}"
    );
    assert!(text.contains("largest 1.0 MiB (pid 9)\n"), "no label without args: {text}");
    let verdict = step.verdicts().memory;
    assert_eq!(verdict.peak_process.as_ref().and_then(|p| p.label.as_deref()), Some("foo.cpp"));
    assert!(verdict.reason.contains("largest process cc1plus (pid 8841, foo.cpp) 150.0 MiB"), "{}", verdict.reason);
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["topByPeakRss"][0]["args"][2], "src/foo.cpp");
    assert_eq!(json["commands"][0]["maxPeakRssArgs"][2], "src/foo.cpp");
    let ld = json["topByCpu"].as_array().unwrap().iter().find(|r| r["command"] == "ld").unwrap();
    assert!(ld.get("args").is_none(), "empty args are left out: {ld}");
    assert!(json["commands"][1].get("maxPeakRssArgs").is_none());
    assert_eq!(serde_json::from_value::<Processes>(json).unwrap(), p);
    // And in the trace: stepmon-export's tests/processes.rs.
}

fn reaped(pid: u32, command: Option<&str>, cpu: f64, max_rss: u64) -> ReapedProcess {
    ReapedProcess {
        pid,
        command: command.map(str::to_owned),
        main: pid == 77,
        cpu_seconds: cpu,
        user_seconds: cpu,
        max_rss_bytes: max_rss,
        ..ReapedProcess::default()
    }
}

#[test]
fn a_sampled_document_carries_the_reaped_rusage_bounded() {
    let mut p = Processes::sampled(vec![process("sleep", 5, 0.0, 1 << 20, 0)], Keep::Top(2), "needs root");
    let all = [
        reaped(77, Some("make"), 1.0, 512 << 20),
        reaped(80, None, 0.125, 1 << 20),
        reaped(81, Some("sleep"), 0.0625, 2 << 20),
    ];
    p.add_reaped(&all, 4);
    let r = p.reaped.as_ref().unwrap();
    assert_eq!((r.count, r.not_kept), (7, 4));
    assert!((r.cpu_seconds - 1.1875).abs() < 1e-12, "{}", r.cpu_seconds);
    assert_eq!(r.top_by_cpu.iter().map(|r| r.pid).collect::<Vec<_>>(), [77, 80], "bounded by keep");
    assert_eq!(r.top_by_max_rss.iter().map(|r| r.pid).collect::<Vec<_>>(), [77, 81]);
    assert_eq!(r.largest().map(|r| r.pid), Some(77));
    let lines = p.summary_lines(None);
    assert_eq!(
        lines.last().unwrap(),
        "reaped   7 processes (wait4 rusage, with what each waited for): 1.19 s CPU, \
         largest 512.0 MiB (pid 77, make, or one it waited for)"
    );
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["reaped"]["rusage"], RUSAGE);
    assert_eq!(json["reaped"]["topByCpu"][0]["main"], true);
    assert!(json["reaped"]["topByCpu"][1].get("command").is_none(), "unread command left out");
    assert_eq!(json["reaped"]["topByCpu"][1]["maxRssBytes"], 1 << 20);
    assert_eq!(serde_json::from_value::<Processes>(json).unwrap(), p);
    // Keep::All lists them all; a taskstats document has none.
    let mut every = Processes::sampled(Vec::new(), Keep::All, "needs root");
    every.add_reaped(&all, 0);
    assert_eq!(every.reaped.as_ref().unwrap().top_by_cpu.len(), 3);
    let mut alone = Processes::sampled(Vec::new(), Keep::All, "needs root");
    alone.add_reaped(&all[..1], 0);
    assert_eq!(alone.reaped.as_ref().unwrap().count, 1);
    assert!(!alone.summary_lines(None).iter().any(|l| l.starts_with("reaped")), "the tree line says it all");
    let taskstats = Processes::build(vec![process("a", 1, 1.0, 1, 0)], Keep::default(), 1, 0);
    assert!(serde_json::to_value(&taskstats).unwrap().get("reaped").is_none());
    assert!(!taskstats.summary_lines(None).iter().any(|l| l.starts_with("reaped")));
}
