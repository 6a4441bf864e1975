//! The writer's lines read back as `stepmon report` reads them
//! (`stepmon_report::job::read`): whole steps, steps that could not run,
//! live samples, events beside them, writers on many threads at once, a
//! torn line, and a full
//! disk (root: a tmpfs in a mount namespace of the test's own). Linux's:
//! whole lines from concurrent writers are its guarantee (see
//! `stepmon_outfile::Appender`), and the markers name Linux processes.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use stepmon_testsupport::skip;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use stepmon_job::{Appended, JobError, JobWriter, MarkerDirs};
use stepmon_model::RunDocument;
use stepmon_model::job::{LiveSample, Record, SampleOf, StepStart};
use stepmon_model::sample::StepSample;
use stepmon_report::job::{self as reader, StepStatus};

/// A sample at `second` s past 10:00 with `cpu_ns` of CPU, padded with
/// `padding` bytes of a missing field's reason (a sample line that long).
fn sample(second: u32, cpu_ns: u64, padding: usize) -> StepSample {
    serde_json::from_value(serde_json::json!({
        "timestamp": format!("2026-12-04T10:00:{:02}Z", second % 60),
        "cpuStat": {"usageNanos": cpu_ns},
        "pidsStat": {},
        "stepmon": {"missing": [{"field": "memory.peak", "file": "memory.peak", "kind": "notFound", "reason": "x".repeat(padding)}]},
    }))
    .unwrap()
}

fn live(sample: &StepSample) -> LiveSample {
    LiveSample::new(SampleOf::Step, sample.clone())
}

/// A step start of the process `pid` named `name`.
fn started(pid: u32, name: &str) -> StepStart {
    StepStart::new(pid, jiff::Timestamp::now(), name.to_owned(), vec![name.to_owned()])
}

/// A run document holding `samples`, as a runner's would.
fn document(samples: &[StepSample]) -> RunDocument {
    let mut document = RunDocument::default();
    document.resource_usage.samples = samples.to_vec();
    document
}

/// The markers of a test: its own directory, not where `stepmon gc` looks.
fn markers(dir: &Path) -> MarkerDirs {
    MarkerDirs::new(vec![dir.join("markers")])
}

fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, Iterator::count)
}

#[test]
fn a_step_is_read_back_whole_its_marker_kept_while_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.jsonl");
    let command = vec!["make".to_owned(), "-j8".to_owned()];
    let labels = [stepmon_model::Label::new("role", "compile")];
    let start = stepmon_job::start(Some("build"), &labels, &command);
    let mut writer = JobWriter::open_marked(&path, start.clone(), &markers(dir.path())).unwrap();
    assert_eq!(writer.step(), start.step);
    assert_eq!(entries(&dir.path().join("markers")), 1, "a marker while the step runs");
    let samples: Vec<StepSample> = (0..3).map(|i| sample(i, u64::from(i) * 1_000_000, 10)).collect();
    for s in &samples {
        assert_eq!(writer.append_sample(live(s)), Appended::Written);
    }
    let report = writer.end(0, None, Some(document(&samples)));
    assert_eq!(report.end, Appended::Written);
    assert!(report.stopped.is_none() && report.sync.is_none(), "{report:?}");
    assert_eq!(entries(&dir.path().join("markers")), 0, "the marker removed at the end");

    let record = reader::read(&std::fs::read_to_string(&path).unwrap());
    assert!(record.lost.is_empty() && record.unknown.is_empty(), "{:?}", record.lost);
    let [step] = record.steps.as_slice() else { panic!("{:?}", record.steps) };
    assert_eq!(step.status(), StepStatus::Ended { exit_code: 0 });
    assert_eq!(step.start.as_ref(), Some(&start));
    // Each sample line is its document's sample, byte for byte as the
    // reader expects the writer to lay it out: counted, not read again.
    assert_eq!(step.sample_lines, 3);
    assert_eq!(step.end.as_ref().and_then(|e| e.document.as_deref()), Some(&document(&samples)));
}

#[test]
fn a_running_actions_marker_names_it_by_what_it_builds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.jsonl");
    let command: Vec<String> =
        "rustc --crate-name serde --edition=2021 src/lib.rs --crate-type lib".split(' ').map(str::to_owned).collect();
    let mut start = stepmon_job::start(None, &[], &command);
    let version = |name: &str| (name == "CARGO_PKG_VERSION").then(|| "1.0.219".to_owned());
    start.action = Some(stepmon_job::action::identify(&command, version));
    assert_eq!(start.name, "rustc", "the step's own name is its program's");
    let markers = markers(dir.path());
    let writer = JobWriter::open_marked(&path, start, &markers).unwrap();
    let running = markers.running();
    let [marker] = running.as_slice() else { panic!("{running:?}") };
    assert_eq!(marker.name.as_deref(), Some("serde 1.0.219 (lib)"));
    assert_eq!(marker.step, writer.step());
    let _ = writer.end(0, None, None);
    assert!(markers.running().is_empty());
}

#[test]
fn a_step_that_could_not_run_ends_with_its_error_and_no_samples() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.jsonl");
    let writer = JobWriter::open_marked(&path, started(7, "missing"), &markers(dir.path())).unwrap();
    let report = writer.end(127, Some("missing: command not found".to_owned()), None);
    assert!(report.stopped.is_none() && report.sync.is_none());
    let record = reader::read(&std::fs::read_to_string(&path).unwrap());
    assert_eq!(
        record.steps[0].status(),
        StepStatus::NotRun { exit_code: 127, error: "missing: command not found".to_owned() }
    );
}

/// A memory event at `second` s past 10:00.
fn event(second: u32) -> stepmon_model::event::StepEvent {
    use stepmon_model::event::{MemoryBound, MemoryNearLimit, StepEvent};
    let memory = MemoryNearLimit::new(MemoryBound::OwnLimit, "memory.max".to_owned(), 100 << 20, 95 << 20, 0.9);
    let at = format!("2026-12-04T10:00:{:02}Z", second % 60).parse().unwrap();
    StepEvent::memory_near_limit(at, f64::from(second), memory)
}

#[test]
fn events_go_between_the_samples_and_the_reader_reads_them_into_their_step() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.jsonl");
    let mut writer = JobWriter::open_marked(&path, started(9, "events"), &markers(dir.path())).unwrap();
    let mut events = writer.events(|why| panic!("{why}")).unwrap();
    let samples: Vec<StepSample> = (0..2).map(|i| sample(i, 1, 10)).collect();
    assert_eq!(writer.append_sample(live(&samples[0])), Appended::Written);
    assert_eq!(events.append(event(1)), Appended::Written);
    assert_eq!(writer.append_sample(live(&samples[1])), Appended::Written);
    let report = writer.end(0, None, Some(document(&samples)));
    assert!(report.stopped.is_none(), "{report:?}");

    let text = std::fs::read_to_string(&path).unwrap();
    let third = text.lines().nth(2).unwrap();
    let line: stepmon_model::job::Record = serde_json::from_str(third).unwrap();
    assert_eq!(
        line,
        stepmon_model::job::Record::StepEvent(stepmon_model::job::StepEventRecord::new(writer_step(&text), event(1)))
    );
    let record = reader::read(&text);
    assert!(record.lost.is_empty(), "{:?}", record.lost);
    assert!(record.unknown.is_empty(), "{:?}", record.unknown);
    let [step] = record.steps.as_slice() else { panic!("{:?}", record.steps) };
    assert_eq!((step.status(), step.sample_lines), (StepStatus::Ended { exit_code: 0 }, 2));
    assert_eq!(step.events, [event(1)]);
}

/// The step id of the record's first line.
fn writer_step(text: &str) -> String {
    let Ok(Record::StepStart(start)) = serde_json::from_str(text.lines().next().unwrap()) else { panic!("{text}") };
    start.step
}

#[test]
fn an_event_that_cannot_be_appended_stops_the_record_for_the_writer_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.jsonl");
    let mut writer = JobWriter::open_marked(&path, started(10, "full"), &markers(dir.path())).unwrap();
    // The event appender opens the record again by its path: /dev/full
    // there, whose every write fails with ENOSPC.
    let kept = dir.path().join("kept.jsonl");
    std::fs::rename(&path, &kept).unwrap();
    std::os::unix::fs::symlink("/dev/full", &path).unwrap();
    let said = Arc::new(AtomicBool::new(false));
    let mut events = {
        let said = Arc::clone(&said);
        writer.events(move |_| said.store(true, Ordering::SeqCst)).unwrap()
    };
    assert_eq!(events.append(event(1)), Appended::Stopped);
    assert!(said.load(Ordering::SeqCst), "said once, as it happened");
    assert_eq!(events.append(event(2)), Appended::AlreadyStopped);
    assert_eq!(writer.append_sample(live(&sample(3, 1, 10))), Appended::AlreadyStopped, "the writer stops too");
    let report = writer.end(0, None, None);
    assert_eq!(report.end, Appended::AlreadyStopped);
    assert!(matches!(report.stopped, Some(JobError::Append { .. })), "the end says why: {report:?}");
    assert_eq!(std::fs::read_to_string(&kept).unwrap().lines().count(), 1, "the start alone");
}

/// Waits until `path` holds `n` lines.
fn wait_for_lines(path: &Path, n: usize) {
    let start = Instant::now();
    while std::fs::read_to_string(path).unwrap().lines().count() < n {
        assert!(start.elapsed() < Duration::from_secs(10), "fewer than {n} lines after 10 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn followed_samples_are_appended_as_they_come() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.jsonl");
    let writer = JobWriter::open_marked(&path, started(8, "live"), &markers(dir.path())).unwrap();
    let said = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let following = {
        let said = Arc::clone(&said);
        writer.follow(rx, move |_| said.store(true, Ordering::SeqCst)).unwrap()
    };
    // The first is held until the second comes; then each one is in the
    // file while the step still runs (its sender open).
    tx.send(live(&sample(0, 1, 10))).unwrap();
    for i in 1..4u32 {
        tx.send(live(&sample(i, 1, 10))).unwrap();
        wait_for_lines(&path, 2 + i as usize);
    }
    drop(tx);
    let writer = following.join().unwrap();
    assert!(writer.stopped().is_none() && !said.load(Ordering::SeqCst));
    assert!(writer.end(0, None, None).stopped.is_none());
    let record = reader::read(&std::fs::read_to_string(&path).unwrap());
    assert_eq!(record.steps[0].samples.len(), 4, "read from the sample lines (no document)");
}

/// A run's document as `stepmon run` writes it, of `samples` over the 3 s
/// from 10:00:00 (the run's start and end, its sources).
fn run_document(samples: &[StepSample]) -> RunDocument {
    let mut document = document(samples);
    document.stepmon = Some(
        serde_json::from_value(serde_json::json!({
            "command": ["cc", "-c", "main.c"], "name": "cc", "exitCode": 0,
            "start": "2026-12-04T10:00:00Z", "end": "2026-12-04T10:00:03Z",
            "collector": {"cpuSeconds": 0.004, "maxRssBytes": 9_000_000, "samples": samples.len(), "sysSamples": 0},
            "sources": {"cpu": {"rung": "cgroupV2", "bound": "exact", "covers": "the step's own cgroup /sys/fs/cgroup/x"}},
            "cgroup": "/sys/fs/cgroup/x",
        }))
        .unwrap(),
    );
    document
}

#[test]
fn a_step_ending_before_its_second_sample_writes_its_start_and_its_end_in_brief() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.jsonl");
    let start = stepmon_job::start(Some("cc"), &[], &["cc".to_owned(), "-c".to_owned(), "main.c".to_owned()]);
    let writer = JobWriter::open_marked(&path, start, &markers(dir.path())).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let following = writer.follow(rx, |why| panic!("{why}")).unwrap();
    // The runner's baseline; its final sample is the document's only.
    let samples = [sample(0, 0, 10), sample(3, 1_500_000_000, 10)];
    tx.send(live(&samples[0])).unwrap();
    drop(tx);
    let writer = following.join().unwrap();
    let document = run_document(&samples);
    let report = writer.end(0, None, Some(document.clone()));
    assert!(report.stopped.is_none() && report.sync.is_none(), "{report:?}");

    let text = std::fs::read_to_string(&path).unwrap();
    let kinds: Vec<&str> = text.lines().map(|l| l.split('"').nth(3).unwrap()).collect();
    assert_eq!(kinds, ["stepStart", "stepEnd"], "no sample line: {text}");
    assert!(text.len() <= 2048, "{} bytes: {text}", text.len());
    let Ok(Record::StepEnd(end)) = serde_json::from_str(text.lines().nth(1).unwrap()) else { panic!("{text}") };
    assert!(end.document.is_none(), "the whole document is the step's own output");
    let brief = end.brief.as_deref().expect("the step in brief");
    assert_eq!(brief, &stepmon_model::brief::StepBrief::of(&document).unwrap());
    assert_eq!(brief.sources.cpu.as_ref().map(|s| s.covers.as_str()), Some(""), "said nowhere for an exact source");

    let record = reader::read(&text);
    let [step] = record.steps.as_slice() else { panic!("{:?}", record.steps) };
    assert_eq!((step.status(), step.sample_lines), (StepStatus::Ended { exit_code: 0 }, 0));
    let step = step.to_step();
    assert_eq!((step.name.as_str(), step.wall_seconds), ("cc", Some(3.0)));
    assert_eq!(step.summary.cpu.usage_seconds, Some(1.5));
    assert_eq!(step.usage.resource_usage.samples.len(), 2, "both samples, from the brief");
    assert_eq!(step.run.as_ref().and_then(|r| r.collector.cpu_seconds), Some(0.004), "stepmon's own cost");
}

#[test]
fn the_record_is_whole_when_end_returns_and_synced_as_its_durability_says() {
    use stepmon_job::Durability;
    for (durability, synced) in
        [(Durability::EveryStep, true), (Durability::LongSteps, false), (Durability::WriteBack, false)]
    {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.jsonl");
        let writer = JobWriter::open_marked(&path, started(12, "sync"), &markers(dir.path()))
            .unwrap()
            .with_durability(durability);
        assert_eq!(writer.durability(), durability);
        let (tx, rx) = std::sync::mpsc::channel();
        let following = writer.follow(rx, |why| panic!("{why}")).unwrap();
        let samples: Vec<StepSample> = (0..3).map(|i| sample(i, u64::from(i) * 1_000_000, 10)).collect();
        for s in &samples {
            tx.send(live(s)).unwrap();
        }
        drop(tx);
        let report = following.join().unwrap().end(0, None, Some(run_document(&samples)));
        assert_eq!(report.end, Appended::Written);
        assert!(report.stopped.is_none() && report.sync.is_none(), "{durability:?}: {report:?}");
        // A step of milliseconds: synced only when every step is.
        assert_eq!(report.synced, synced, "{durability:?}");
        // Every line is in the file for any reader once `end` returns.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 5, "start, 3 samples, end: {durability:?}");
        let record = reader::read(&text);
        assert!(record.lost.is_empty(), "{:?}", record.lost);
        let [step] = record.steps.as_slice() else { panic!("{:?}", record.steps) };
        assert_eq!((step.status(), step.sample_lines), (StepStatus::Ended { exit_code: 0 }, 3));
    }
}

#[test]
fn a_record_that_cannot_take_the_start_is_an_error_with_the_os_error_as_source() {
    use std::error::Error as _;
    // /dev/full: every write fails with ENOSPC.
    let dir = tempfile::tempdir().unwrap();
    let e = JobWriter::open_marked("/dev/full", started(9, "full"), &markers(dir.path())).unwrap_err();
    assert!(matches!(e, JobError::Append { .. }), "{e}");
    let source = e.source().and_then(|s| s.downcast_ref::<std::io::Error>()).map(std::io::Error::kind);
    assert_eq!(source, Some(std::io::ErrorKind::StorageFull));
    assert!(e.to_string().starts_with("cannot append to the job record /dev/full: "), "{e}");
    assert_eq!(entries(&dir.path().join("markers")), 0, "no marker for a step that has no record");

    let e = JobWriter::open_marked(dir.path().join("no/such/dir/job.jsonl"), started(9, "x"), &markers(dir.path()))
        .unwrap_err();
    assert!(matches!(e, JobError::Open { .. }), "{e}");
    assert_eq!(e.io_error().map(std::io::Error::kind), Some(std::io::ErrorKind::NotFound));
}

#[test]
fn writers_on_eight_threads_at_once_make_whole_lines_and_eight_whole_steps() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.jsonl");
    const SAMPLES: u32 = 40;
    let writers: Vec<_> = (0..8u32)
        .map(|t| {
            let (path, markers) = (path.clone(), markers(dir.path()));
            std::thread::spawn(move || {
                let mut writer = JobWriter::open_marked(&path, started(100 + t, &format!("s{t}")), &markers).unwrap();
                // Lines longer than a pipe's PIPE_BUF (4096 bytes): the
                // guarantee is of O_APPEND writes to a regular file.
                let samples: Vec<StepSample> =
                    (0..SAMPLES).map(|i| sample(i, u64::from(t * 1000 + i), 5_000 + t as usize)).collect();
                for s in &samples {
                    assert!(writer.append_sample(live(s)).is_written());
                }
                // Half with their run document, half without.
                let document = (t % 2 == 0).then(|| document(&samples));
                assert!(writer.end(0, None, document).stopped.is_none());
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'));
    assert_eq!(text.lines().count(), 8 * (SAMPLES as usize + 2));
    for (i, line) in text.lines().enumerate() {
        serde_json::from_str::<Record>(line).unwrap_or_else(|e| panic!("line {} is not a whole record: {e}", i + 1));
    }
    let record = reader::read(&text);
    assert!(record.lost.is_empty() && record.unknown.is_empty(), "{:?}", record.lost);
    assert_eq!(record.steps.len(), 8);
    for step in &record.steps {
        assert_eq!(step.status(), StepStatus::Ended { exit_code: 0 }, "{}", step.id);
        assert_eq!(step.sample_lines, SAMPLES as usize, "{}", step.id);
    }
    assert_eq!(entries(&dir.path().join("markers")), 0);
}

#[test]
fn a_torn_line_is_its_steps_and_the_next_writers_lines_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.jsonl");
    let mut first = JobWriter::open_marked(&path, started(21, "first"), &markers(dir.path())).unwrap();
    for i in 0..2 {
        assert!(first.append_sample(live(&sample(i, 1, 100))).is_written());
    }
    // The disk filled mid-line: the last sample line cut short, as a short
    // write leaves it (the writer then appends nothing more).
    let text = std::fs::read_to_string(&path).unwrap();
    let last = text.trim_end().rfind('\n').unwrap() + 1;
    let cut = last + 60;
    std::fs::write(&path, &text[..cut]).unwrap();
    drop(first);
    // Another step's writer appends after it: its start is glued to the
    // torn line, and read.
    let second = JobWriter::open_marked(&path, started(22, "second"), &markers(dir.path())).unwrap();
    assert!(second.end(0, None, None).stopped.is_none());

    let record = reader::read(&std::fs::read_to_string(&path).unwrap());
    assert_eq!(record.steps.len(), 2, "{:?}", record.steps);
    let StepStatus::Interrupted { torn: Some(torn), .. } = record.steps[0].status() else {
        panic!("{:?}", record.steps[0].status())
    };
    assert_eq!((torn.line, torn.bytes), (3, 60));
    assert_eq!(record.steps[0].sample_lines, 1, "the whole sample line kept");
    assert_eq!(record.steps[1].status(), StepStatus::Ended { exit_code: 0 });
    assert_eq!(record.lost.len(), 1);
    assert!(record.lost[0].torn, "{:?}", record.lost);
}

/// The full-disk test's child: set when this binary runs it.
const FULL_DISK: &str = "STEPMON_JOB_TEST_FULL_DISK";

#[test]
fn a_full_disk_stops_the_record_not_its_writer_and_tears_one_line_at_most() {
    let name = "a_full_disk_stops_the_record_not_its_writer_and_tears_one_line_at_most";
    if !rustix::process::geteuid().is_root() {
        skip::skip(name, "needs root to mount a tmpfs (in a mount namespace of its own)");
        return;
    }
    if !std::process::Command::new("unshare").args(["-m", "true"]).status().is_ok_and(|s| s.success()) {
        skip::skip(name, "unshare -m does not work here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("m")).unwrap();
    // A 16 KiB tmpfs in a mount namespace of the test's own (private:
    // never seen outside, gone with the child), filled by the child below;
    // it copies the record out before it goes.
    let script = r#"mount -t tmpfs -o size=16k tmpfs m || exit 90
exec "$0" --ignored --exact full_disk_child --nocapture --test-threads=1"#;
    let out = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", script, std::env::current_exe().unwrap().to_str().unwrap()])
        .current_dir(dir.path())
        .env(FULL_DISK, dir.path())
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && stdout.contains("1 passed"), "{}\n{stdout}\n{stderr}", out.status);

    let text = std::fs::read_to_string(dir.path().join("job.jsonl")).unwrap();
    let record = reader::read(&text);
    let [step] = record.steps.as_slice() else { panic!("{:?}", record.steps) };
    assert!(step.sample_lines >= 1, "samples until the disk filled");
    // A short write leaves the last line cut short (unless the record
    // ended exactly at the tmpfs's last free byte: no line torn then).
    if text.ends_with('\n') {
        assert!(record.lost.is_empty(), "{:?}", record.lost);
        eprintln!("{name}: the record filled the tmpfs to the byte: no line was torn");
        return;
    }
    let StepStatus::Interrupted { torn: Some(torn), .. } = step.status() else { panic!("{:?}", step.status()) };
    assert_eq!(torn.line, text.lines().count(), "only the last line is torn");
    assert_eq!(record.lost.len(), 1, "{:?}", record.lost);
}

/// The half of the test above that fills the disk (in its mount namespace).
#[test]
#[ignore = "run in a mount namespace with a 16 KiB tmpfs by a_full_disk_stops_the_record_not_its_writer_and_tears_one_line_at_most"]
fn full_disk_child() {
    let dir = PathBuf::from(std::env::var_os(FULL_DISK).expect("run by the full-disk test"));
    let path = dir.join("m/job.jsonl");
    let mut writer = JobWriter::open_marked(&path, started(31, "full"), &markers(&dir)).unwrap();
    let mut samples = Vec::new();
    let stopped_at = (0..1000u32).find_map(|i| {
        let s = sample(i, u64::from(i), 1_000 + i as usize * 7);
        let appended = writer.append_sample(live(&s));
        samples.push(s);
        (appended != Appended::Written).then_some((i, appended))
    });
    let Some((i, Appended::Stopped)) = stopped_at else { panic!("16 KiB never filled: {stopped_at:?}") };
    assert!(i > 0, "the start and a sample fit");
    let why = writer.stopped().expect("why it stopped");
    assert!(matches!(why, JobError::Append { .. }), "{why}");
    let size = std::fs::metadata(&path).unwrap().len();
    // Nothing more is appended once stopped: the end neither.
    assert_eq!(writer.append_sample(live(&samples[0])), Appended::AlreadyStopped);
    let report = writer.end(0, None, Some(document(&samples)));
    assert_eq!(report.end, Appended::AlreadyStopped);
    assert!(matches!(report.stopped, Some(JobError::Append { .. })), "{report:?}");
    assert!(report.sync.is_none(), "no sync of a stopped record");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
    assert_eq!(entries(&dir.join("markers")), 0, "the marker removed at the end");
    std::fs::copy(&path, dir.join("job.jsonl")).unwrap();
}
