//! A step's brief end: what it keeps, read back whole.

use super::*;

#[test]
fn a_long_series_is_thinned_evenly_keeping_its_ends() {
    assert_eq!(thinned(MAX_POINTS), None);
    let kept = thinned(1000).unwrap();
    assert_eq!(kept.len(), MAX_POINTS);
    assert_eq!((kept[0], kept[MAX_POINTS - 1]), (0, 999));
    assert!(kept.windows(2).all(|w| w[0] < w[1]));
    let kept = thinned(MAX_POINTS + 1).unwrap();
    assert_eq!((kept.len(), kept[0], kept[MAX_POINTS - 1]), (MAX_POINTS, 0, MAX_POINTS));
}

#[test]
fn the_workers_are_the_commands_run_often_enough_without_their_processes() {
    use crate::processes::{CommandAggregate, ProcessRecord, Processes};
    let command = |name: &str, count: u64| CommandAggregate {
        command: name.to_owned(),
        count,
        p95_peak_rss_bytes: Some(1 << 20),
        ..CommandAggregate::default()
    };
    // Most CPU first, as a document lists them: ten that ran often, one
    // that ran twice.
    let mut commands: Vec<_> = (0..10).map(|i| command(&format!("cc{i}"), 3 + i)).collect();
    commands.insert(2, command("ld", 2));
    let processes = Processes {
        processes: 40,
        commands,
        top_by_cpu: vec![ProcessRecord::default()],
        all: vec![ProcessRecord::default(); 40],
        ..Processes::default()
    };
    let workers = workers_in_brief(&processes).expect("workers");
    let names: Vec<&str> = workers.commands.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(names, ["cc0", "cc1", "cc2", "cc3", "cc4", "cc5", "cc6", "cc7"]);
    assert_eq!(workers.commands.len(), MAX_WORKER_COMMANDS);
    assert!(workers.top_by_cpu.is_empty() && workers.all.is_empty());
    assert_eq!(workers.processes, 40, "the counts are the step's");
    let few = Processes { commands: vec![command("ld", 2)], ..Processes::default() };
    assert_eq!(workers_in_brief(&few), None);

    // Through the brief and back into a document.
    let json = r#"{"resourceUsage": {"samples": []}, "sysUsage": [],
        "stepmon": {"command": ["make"], "exitCode": 0,
                    "start": "2026-12-04T10:00:00Z", "end": "2026-12-04T10:00:02Z"}}"#;
    let mut document: RunDocument = serde_json::from_str(json).unwrap();
    document.stepmon.as_mut().unwrap().processes = Some(processes);
    let brief = StepBrief::of(&document).unwrap();
    let read: StepBrief = serde_json::from_str(&serde_json::to_string(&brief).unwrap()).unwrap();
    assert_eq!(read.to_document().stepmon.unwrap().processes, Some(workers));
}

#[test]
fn the_largest_process_is_an_array_read_back_whole() {
    let json = r#"{"resourceUsage": {"samples": []},
      "stepmon": {"command": ["make"], "exitCode": 0,
                  "start": "2026-12-04T10:00:00Z", "end": "2026-12-04T10:00:02Z"}}"#;
    let mut brief = StepBrief::of(&serde_json::from_str(json).unwrap()).unwrap();
    assert_eq!(brief.largest_process, None, "no per-process records");
    assert!(!serde_json::to_string(&brief).unwrap().contains("largestProcess"));
    for (process, written) in [
        (
            PeakProcess { command: "cc1plus".into(), pid: 8841, peak_rss_bytes: 157_286_400, label: None },
            r#""largestProcess":["cc1plus",8841,157286400]"#,
        ),
        (
            PeakProcess {
                command: "cc1plus".into(),
                pid: 8841,
                peak_rss_bytes: 157_286_400,
                label: Some("foo.cpp".into()),
            },
            r#""largestProcess":["cc1plus",8841,157286400,"foo.cpp"]"#,
        ),
    ] {
        brief.largest_process = Some(process);
        let text = serde_json::to_string(&brief).unwrap();
        assert!(text.contains(written), "{text}");
        assert_eq!(serde_json::from_str::<StepBrief>(&text).unwrap(), brief);
    }
}

#[test]
fn times_are_kept_to_the_nanosecond_either_side_of_the_start() {
    let start: Timestamp = "2026-12-04T10:00:00.5Z".parse().unwrap();
    for t in ["2026-12-04T10:00:00.499999999Z", "2026-12-04T10:00:07.123456789Z"] {
        let t: Timestamp = t.parse().unwrap();
        assert_eq!(after(start, nanos_after(start, t)), t);
    }
}
