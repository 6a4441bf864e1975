//! A job record whose steps end in brief (`StepEnd::brief`) reads as the
//! same record with whole run documents does: the same table, the same job
//! verdict, the same step verdicts and charts' series — on the recorded
//! jobs of `tests/data/job/` (real steps of a 2-CPU host: CPU, 300 MiB,
//! parallel steps, a killed one) turned into briefs line by line. The
//! whole-document records are the records of earlier versions: they still
//! read, as every other job test shows.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::job::{entries_of, recorded_text};
use serde::Serialize;
use serde_json::Value;
use stepmon_model::brief::StepBrief;
use stepmon_model::document::RunDocument;
use stepmon_model::processes::{Keep, ProcessRecord, Processes};
use stepmon_report::job::{self, JobVerdict};
use stepmon_report::series::StepSeries;

/// `text` with each end's run document replaced by its brief, as today's
/// writer writes it; and how many ends were.
fn in_brief(text: &str) -> (String, usize) {
    let mut briefed = 0;
    let lines = text.lines().map(|line| {
        let mut value: Value = serde_json::from_str(line).unwrap();
        if let Some(document) = value.get_mut("document").map(Value::take) {
            let document: RunDocument = serde_json::from_value(document).unwrap();
            let brief = StepBrief::of(&document).expect("a run's document");
            let object = value.as_object_mut().unwrap();
            object.remove("document");
            object.insert("brief".to_owned(), serde_json::to_value(brief).unwrap());
            briefed += 1;
        }
        serde_json::to_string(&value).unwrap() + "\n"
    });
    (lines.collect(), briefed)
}

/// Whether `a` and `b` are the same JSON, numbers within a relative 1e-9
/// (series times and the machine's CPU seconds are added up in another
/// order); `at` says where they differ.
fn same(a: &Value, b: &Value, at: &str) -> Result<(), String> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            if (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1e-12) {
                Ok(())
            } else {
                Err(format!("{at}: {x} != {y}"))
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().try_for_each(|(i, (x, y))| same(x, y, &format!("{at}[{i}]")))
        }
        (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
            x.iter().try_for_each(|(k, v)| same(v, y.get(k).unwrap_or(&Value::Null), &format!("{at}.{k}")))
        }
        _ if a == b => Ok(()),
        _ => Err(format!("{at}: {a} != {b}")),
    }
}

fn json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap()
}

#[test]
fn a_record_in_brief_reads_as_its_whole_documents_do() {
    for name in ["recorded.jsonl", "other.jsonl"] {
        let whole = recorded_text(name);
        let (brief, briefed) = in_brief(&whole);
        assert!(briefed >= 3, "{name}: {briefed} ends");
        let ends =
            |text: &str| text.lines().filter(|l| l.starts_with("{\"kind\":\"stepEnd\"")).map(str::len).sum::<usize>();
        assert!(
            ends(&brief) * 5 < ends(&whole),
            "{name}: ends of {} bytes in brief, {} whole",
            ends(&brief),
            ends(&whole)
        );
        let record = job::read(&brief);
        assert!(record.lost.is_empty() && record.unknown.is_empty(), "{name}: {:?}", record.lost);
        let (a, b) = (entries_of(&whole), entries_of(&brief));
        assert_eq!(a.len(), b.len());

        // The table (text and JSON) and the job's verdict.
        same(
            &serde_json::from_str(&job::to_json(&a, &[])).unwrap(),
            &serde_json::from_str(&job::to_json(&b, &[])).unwrap(),
            name,
        )
        .unwrap();
        assert_eq!(job::render(&a, &[]), job::render(&b, &[]), "{name}");
        same(&json(&JobVerdict::judged(&a, 0.0)), &json(&JobVerdict::judged(&b, 0.0)), name).unwrap();

        for (a, b) in a.iter().zip(&b) {
            let at = format!("{name}: {}", a.step.name);
            assert_eq!(a.status, b.status, "{at}");
            assert_eq!(
                (a.step.start, a.step.end, a.step.wall_seconds),
                (b.step.start, b.step.end, b.step.wall_seconds)
            );
            same(&json(&a.step.summary), &json(&b.step.summary), &at).unwrap();
            assert_eq!(
                a.step.sources.pressure.as_ref().map(|s| s.rung),
                b.step.sources.pressure.as_ref().map(|s| s.rung)
            );
            // Each step's verdicts, the memory verdict's largest process
            // too (the brief keeps it).
            same(&json(&a.step.verdicts()), &json(&b.step.verdicts()), &at).unwrap();
            // The charts' series.
            same(&json(&StepSeries::of(&a.step)), &json(&StepSeries::of(&b.step)), &at).unwrap();
            assert_eq!(a.step.usage.resource_usage.samples.len(), b.step.usage.resource_usage.samples.len(), "{at}");
            assert_eq!(a.step.label(), b.step.label());
            let run = |e: &job::Entry| e.step.run.as_ref().map(|r| (r.exit_code, r.signal, r.collector.clone()));
            assert_eq!(run(a), run(b), "{at}");
        }
    }
}

/// `text` with per-process records in each end's run document, as a
/// runner with taskstats writes them: a compiler of 150 MiB, a linker of
/// 20 MiB (the recorded jobs ran without taskstats).
fn with_processes(text: &str) -> String {
    let process = |command: &str, pid: u32, peak: u64, args: &str| {
        let mut record = ProcessRecord::default();
        (record.command, record.pid, record.peak_rss_bytes, record.cpu_seconds) =
            (command.to_owned(), pid, Some(peak), 1.0);
        record.args = args.split(' ').map(str::to_owned).collect();
        record
    };
    let processes = Processes::build(
        vec![
            process("cc1plus", 8841, 150 << 20, "cc1plus -quiet src/foo.cpp -o /tmp/foo.s"),
            process("ld", 9, 20 << 20, "ld -o app foo.o"),
        ],
        Keep::default(),
        2,
        0,
    );
    let lines = text.lines().map(|line| {
        let mut value: Value = serde_json::from_str(line).unwrap();
        if let Some(run) = value.pointer_mut("/document/stepmon") {
            run["processes"] = json(&processes);
        }
        serde_json::to_string(&value).unwrap() + "\n"
    });
    lines.collect()
}

#[test]
fn a_brief_keeps_the_largest_process_the_memory_verdict_names() {
    let whole = with_processes(&recorded_text("recorded.jsonl"));
    let (brief, briefed) = in_brief(&whole);
    assert!(briefed >= 3);
    let (a, b) = (entries_of(&whole), entries_of(&brief));
    let mut named = 0;
    for (a, b) in a.iter().zip(&b) {
        let (va, vb) = (a.step.verdicts().memory, b.step.verdicts().memory);
        assert_eq!(va, vb, "{}", a.step.name);
        if a.step.largest_process.is_some() {
            let peak = vb.peak_process.unwrap_or_else(|| panic!("{}: {}", b.step.name, vb.reason));
            assert_eq!((peak.command.as_str(), peak.pid, peak.peak_rss_bytes), ("cc1plus", 8841, 150 << 20));
            assert_eq!(peak.label.as_deref(), Some("foo.cpp"));
            assert!(vb.reason.contains("largest process cc1plus (pid 8841, foo.cpp) 150.0 MiB"), "{}", vb.reason);
            named += 1;
        }
    }
    assert!(named >= 3, "{named} steps");
    // What it costs a brief: the one process, some 50 bytes.
    for line in whole.lines().filter(|l| l.contains("\"document\":")) {
        let value: Value = serde_json::from_str(line).unwrap();
        let document: RunDocument = serde_json::from_value(value["document"].clone()).unwrap();
        let mut brief = StepBrief::of(&document).unwrap();
        let with = serde_json::to_string(&brief).unwrap().len();
        brief.largest_process = None;
        let without = serde_json::to_string(&brief).unwrap().len();
        eprintln!("the largest process: {} bytes of a {with}-byte brief", with - without);
        assert!(with - without <= 64, "{} bytes", with - without);
    }
}

#[test]
fn a_brief_is_a_fifth_of_its_document_or_less() {
    for name in ["recorded.jsonl", "other.jsonl"] {
        for line in recorded_text(name).lines().filter(|l| l.contains("\"document\":")) {
            let value: Value = serde_json::from_str(line).unwrap();
            let document: RunDocument = serde_json::from_value(value["document"].clone()).unwrap();
            let brief = serde_json::to_string(&StepBrief::of(&document).unwrap()).unwrap();
            let whole = serde_json::to_string(&document).unwrap();
            eprintln!("{name}: {} bytes in brief, {} whole", brief.len(), whole.len());
            assert!(brief.len() * 5 <= whole.len(), "{name}: {} bytes in brief, {} whole", brief.len(), whole.len());
        }
    }
}
