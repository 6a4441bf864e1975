//! The Chrome trace export read back: the JSON Object Format's fields per
//! event (Trace Event Format: `name`, `ph`, `ts`, `pid`, `tid`; `dur` for
//! complete events, `args` for counters), counter tracks monotonic in
//! time, each step's slice covering its counters, and the counter values
//! equal to the step's series.

mod common;

use std::collections::BTreeMap;

use serde_json::Value;
use stepmon_export::trace;
use stepmon_report::Step;
use stepmon_report::series::{Point, StepSeries};

/// serde_json's default float reader may be one ulp off what its writer
/// wrote (it is not correctly rounded without `float_roundtrip`), so
/// numbers read back are compared to a few ulps.
fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 4.0 * f64::EPSILON * a.abs().max(b.abs())
}

/// The series of the trace's counter tracks, by the name after `<n>: `
/// and the arg key — written out again here rather than taken from the
/// export.
fn expected_tracks(series: &StepSeries) -> Vec<(&'static str, &'static str, Vec<Point>)> {
    vec![
        ("cpu", "cores", series.cpu_cores.clone()),
        ("memory", "bytes", series.memory_bytes.clone()),
        ("memory anon", "bytes", series.memory_anon_bytes.clone()),
        ("memory file", "bytes", series.memory_file_bytes.clone()),
        ("io read", "bytesPerSecond", series.io_read_bytes_per_second.clone()),
        ("io write", "bytesPerSecond", series.io_write_bytes_per_second.clone()),
        ("cpu stall", "share", series.cpu_stall_share.clone()),
        ("memory stall", "share", series.memory_stall_share.clone()),
        ("io stall", "share", series.io_stall_share.clone()),
        ("pids", "tasks", series.pids.clone()),
        ("machine cpu busy", "share", series.machine_cpu_busy_share.clone()),
        ("machine cpu stall", "share", series.machine_cpu_stall_share.clone()),
    ]
}

fn step_origin(step: &Step) -> Option<jiff::Timestamp> {
    step.start.or_else(|| step.usage.resource_usage.samples.first().map(|s| s.timestamp))
}

fn num(event: &Value, key: &str) -> f64 {
    event[key].as_f64().unwrap_or_else(|| panic!("{key} is not a number in {event}"))
}

/// Checks the trace of `steps` field by field and returns its events.
fn check(steps: &[Step]) -> Vec<Value> {
    let text = trace::render(steps);
    let trace: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    assert_eq!(trace["displayTimeUnit"], "ms");
    assert!(trace["otherData"].is_object());
    assert_eq!(trace["otherData"]["steps"], steps.len());
    let events = trace["traceEvents"].as_array().unwrap().clone();
    // Required fields of every event.
    for e in &events {
        assert!(e["name"].is_string(), "{e}");
        let ph = e["ph"].as_str().unwrap();
        assert!(["X", "C", "M", "i"].contains(&ph), "{e}");
        for key in ["ts", "pid", "tid"] {
            assert!(num(e, key).is_finite(), "{e}");
        }
        assert!(num(e, "ts") >= 0.0, "{e}");
        match ph {
            "X" => assert!(num(e, "dur") >= 0.0, "{e}"),
            "C" => {
                let args = e["args"].as_object().unwrap();
                assert_eq!(args.len(), 1, "{e}");
                assert!(args.values().all(|v| v.as_f64().is_some_and(f64::is_finite)), "{e}");
            }
            // An event of the step: on its thread (`s: t`), said in words.
            "i" => assert!(e["s"] == "t" && e["args"]["description"].is_string(), "{e}"),
            _ => assert!(e["args"].is_object(), "{e}"),
        }
    }
    // Metadata first, then the rest in time order.
    let first_timed = events.iter().position(|e| e["ph"] != "M").unwrap_or(events.len());
    assert!(events[first_timed..].iter().all(|e| e["ph"] != "M"));
    let times: Vec<f64> = events[first_timed..].iter().map(|e| num(e, "ts")).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "not in time order");
    // One process, named.
    assert!(events.iter().all(|e| e["pid"] == trace::PID));
    assert!(events.iter().any(|e| e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "stepmon"));
    // Monotonic ts within every counter track (pid, tid, name).
    let mut last: BTreeMap<(u64, u64, String), f64> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "C") {
        let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap(), e["name"].as_str().unwrap().to_owned());
        let ts = num(e, "ts");
        if let Some(previous) = last.insert(key.clone(), ts) {
            assert!(ts >= previous, "{key:?} went back from {previous} to {ts}");
        }
    }
    let origin = steps.iter().filter_map(step_origin).min();
    for (n, step) in (1u64..).zip(steps) {
        let of_step: Vec<&Value> = events.iter().filter(|e| e["tid"] == n).collect();
        let thread = of_step.iter().find(|e| e["name"] == "thread_name").unwrap();
        assert_eq!(thread["args"]["name"].as_str().unwrap(), format!("{n}: {}", step.label()));
        let Some(start) = step_origin(step) else {
            assert!(of_step.iter().all(|e| e["ph"] == "M"));
            continue;
        };
        let offset_us = start.duration_since(origin.unwrap()).as_secs_f64() * 1e6;
        let slices: Vec<&&Value> = of_step.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(slices.len(), 1);
        let slice = slices[0];
        assert_eq!(slice["name"].as_str().unwrap(), step.label());
        assert_eq!(slice["args"]["step"].as_str().unwrap(), step.name);
        assert!(close(num(slice, "ts"), (offset_us * 1e3).round() / 1e3), "{slice}");
        let (begin, dur) = (num(slice, "ts"), num(slice, "dur"));
        if let Some(wall) = step.wall_seconds {
            assert!((dur - wall * 1e6).abs() < 1e-3, "dur {dur} for wall {wall}");
            assert_eq!(slice["args"]["wallSeconds"].as_f64(), Some(wall));
        }
        let verdicts = step.verdicts();
        assert_eq!(slice["args"]["bottleneck"], serde_json::to_value(verdicts.bottleneck.class).unwrap());
        assert_eq!(slice["args"]["memory"], serde_json::to_value(verdicts.memory.class).unwrap());
        assert_eq!(slice["args"]["machine"], serde_json::to_value(verdicts.machine.class).unwrap());
        assert_eq!(slice["args"]["verdicts"].as_array().unwrap().len(), verdicts.sentences().len());
        match step.run.as_ref().and_then(|r| r.exit_code) {
            Some(code) => assert_eq!(slice["args"]["exitCode"], code),
            None => assert!(slice["args"].get("exitCode").is_none()),
        }
        // The slice covers every counter of the step.
        let counters: Vec<&&Value> = of_step.iter().filter(|e| e["ph"] == "C").collect();
        for c in &counters {
            let ts = num(c, "ts");
            assert!(ts >= begin - 1e-3 && ts <= begin + dur + 1e-3, "{c} outside [{begin}, {}]", begin + dur);
        }
        // Each track: the series' values in time order, at the series' times
        // (drawn at the slice's edge when read just outside it).
        let series = StepSeries::of(step);
        let mut drawn = 0;
        for (name, key, mut points) in expected_tracks(&series) {
            points.sort_by(|a, b| a.t.total_cmp(&b.t));
            let track: Vec<&&&Value> = counters.iter().filter(|c| c["name"] == format!("{n}: {name}")).collect();
            assert_eq!(track.len(), points.len(), "{n}: {name}");
            for (c, p) in track.iter().zip(&points) {
                let value = c["args"][key].as_f64().unwrap_or_else(|| panic!("{c} lacks {key}"));
                assert!(close(value, p.value), "{n}: {name}: {value} != {}", p.value);
                let at = begin + (p.t * 1e6).clamp(0.0, dur);
                assert!((num(c, "ts") - at).abs() < 1e-2, "{n}: {name} at {} not {at}", num(c, "ts"));
            }
            drawn += points.len();
        }
        assert_eq!(drawn, counters.len(), "counters the series do not have");
    }
    events
}

fn counter_names(events: &[Value]) -> Vec<String> {
    let mut names: Vec<String> =
        events.iter().filter(|e| e["ph"] == "C").map(|e| e["name"].as_str().unwrap().to_owned()).collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn every_recorded_run() {
    for (file, step) in common::runs::runs() {
        let events = check(std::slice::from_ref(&step));
        eprintln!("{file}: {} events, counters {:?}", events.len(), counter_names(&events));
        // A recorded run has a start: its slice begins the trace.
        let slice = events.iter().find(|e| e["ph"] == "X").unwrap();
        assert_eq!(slice["ts"].as_f64(), Some(0.0), "{file}");
        assert!(events.iter().any(|e| e["name"] == "1: cpu"), "{file}");
    }
}

#[test]
fn pure_v2_run_has_every_track() {
    let step = common::runs::load("pure-v2-6.1-oom-throttled-io.json");
    let events = check(std::slice::from_ref(&step));
    let names = counter_names(&events);
    for track in ["cpu", "memory", "memory anon", "memory file", "io read", "io write", "cpu stall", "pids"] {
        assert!(names.contains(&format!("1: {track}")), "{track} missing: {names:?}");
    }
    let slice = events.iter().find(|e| e["ph"] == "X").unwrap();
    assert_eq!(slice["args"]["memory"], "oomKilled");
    assert_eq!(slice["args"]["throttled"], true);
    assert_eq!(slice["args"]["exitCode"], 0);
    // 4 samples: memory.current at each of them (the first one taken just
    // before the start is drawn at the start).
    let memory: Vec<&Value> = events.iter().filter(|e| e["name"] == "1: memory").collect();
    assert_eq!(memory.len(), 4);
    assert_eq!(memory[0]["ts"].as_f64(), Some(0.0));
}

#[test]
fn hybrid_run_has_no_memory_tracks() {
    // The memory controller is on cgroup v1 there: nothing to draw, and
    // nothing drawn as 0.
    let events = check(&[common::runs::load("hybrid-cpu-3s.json")]);
    let names = counter_names(&events);
    for track in ["1: memory", "1: memory anon", "1: memory file", "1: pids", "1: io read"] {
        assert!(!names.iter().any(|n| n == track), "{track} in {names:?}");
    }
    assert!(names.contains(&"1: machine cpu busy".to_owned()));
}

#[test]
fn several_steps_one_track_each() {
    let text = std::fs::read_to_string(common::runs::runs_dir().join("pure-v2-6.1-oom-throttled-io.json")).unwrap();
    let document: stepmon_model::document::RunDocument = serde_json::from_str(&text).unwrap();
    let buildkit = Step::from_buildkit(
        "RUN make all".to_owned(),
        "step3".to_owned(),
        Some("sha256:0123".to_owned()),
        document.usage(),
    );
    let steps = vec![common::runs::load("hybrid-cpu-3s.json"), common::runs::load("hybrid-exit7.json"), buildkit];
    let events = check(&steps);
    let mut slices: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    // In time order in the file: the BuildKit step (recorded first) leads.
    assert_eq!(slices.iter().map(|e| e["tid"].as_u64().unwrap()).collect::<Vec<_>>(), [3, 1, 2]);
    slices.sort_by_key(|e| e["tid"].as_u64());
    // The earliest start (the BuildKit step, recorded hours before the
    // others) is the trace's origin.
    assert_eq!(slices[2]["ts"].as_f64(), Some(0.0));
    assert!(slices[0]["ts"].as_f64().unwrap() > 0.0);
    assert_eq!(slices[2]["args"]["origin"], "buildKit");
    assert_eq!(slices[2]["args"]["stepId"], "step3");
    let names = counter_names(&events);
    for n in 1..=3 {
        assert!(names.contains(&format!("{n}: cpu")), "{names:?}");
    }
    // Two stepmon runs in a row: the second starts after the first ends.
    let end_of_first = slices[0]["ts"].as_f64().unwrap() + slices[0]["dur"].as_f64().unwrap();
    assert!(slices[1]["ts"].as_f64().unwrap() >= end_of_first);
}

#[test]
fn step_with_unknown_start_uses_its_first_sample() {
    let text = std::fs::read_to_string(common::runs::runs_dir().join("pure-v2-6.1-oom-throttled-io.json")).unwrap();
    let document: stepmon_model::document::RunDocument = serde_json::from_str(&text).unwrap();
    let mut usage = document.usage();
    // BuildKit with only its final sample: no start, no wall time.
    usage.resource_usage.samples.drain(..usage.resource_usage.samples.len() - 1);
    let last = usage.resource_usage.samples[0].timestamp;
    let step = Step::from_buildkit("RUN true".to_owned(), "step1".to_owned(), None, usage);
    assert_eq!((step.start, step.wall_seconds), (None, None));
    // Its slice spans what is drawn of it: here up to the last machine
    // sample, read just after the step's one sample.
    let series = StepSeries::of(&step);
    let span = expected_tracks(&series).iter().flat_map(|(_, _, p)| p.iter().map(|p| p.t)).fold(0.0, f64::max);
    assert!(span > 0.0);
    let events = check(&[common::runs::load("hybrid-exit7.json"), step]);
    let slice = events.iter().find(|e| e["ph"] == "X" && e["tid"] == 2).unwrap();
    let origin = common::runs::load("hybrid-exit7.json").start.unwrap().min(last);
    assert!(close(slice["ts"].as_f64().unwrap(), last.duration_since(origin).as_secs_f64() * 1e6));
    assert!(close(slice["dur"].as_f64().unwrap(), (span * 1e9).round() / 1e3));
    // Its one sample was taken after its container exited: its live gauges
    // (memory in use, pids) read an emptied cgroup and are not drawn.
    assert!(step_gauges_absent(&events, 2), "{events:?}");
    // The same run whole has them.
    assert!(!step_gauges_absent(&check(&[Step::from_run(&document)]), 1), "the whole run's gauges are drawn");
}

/// Whether step `n`'s trace has neither a memory nor a pids counter.
fn step_gauges_absent(events: &[Value], n: usize) -> bool {
    !events.iter().any(|e| e["name"] == format!("{n}: memory") || e["name"] == format!("{n}: pids"))
}

#[test]
fn step_without_any_time_is_listed_not_drawn() {
    let mut step = common::runs::load("hybrid-exit7.json");
    step.start = None;
    step.usage.resource_usage.samples.clear();
    let events = check(&[step]);
    assert!(events.iter().all(|e| e["ph"] == "M"));
    let trace: Value = serde_json::from_str(&trace::render(&[common::runs::load("hybrid-exit7.json"), {
        let mut s = common::runs::load("hybrid-exit7.json");
        s.name = "untimed".to_owned();
        s.start = None;
        s.usage.resource_usage.samples.clear();
        s
    }]))
    .unwrap();
    let command = common::runs::load("hybrid-exit7.json").command().to_vec();
    let label = stepmon_report::step::label("untimed", &command);
    assert_eq!(trace["otherData"]["stepsWithoutTime"], serde_json::json!([label]));
}

#[test]
fn step_names_are_escaped() {
    let names = ["sh -c 'echo \"quoted\" \\ back\\slash'", "two\nlines\r\u{0}nul", "unicode ✓ ü 日本 \u{1F680}", ""];
    let steps: Vec<Step> = names
        .iter()
        .map(|name| {
            let mut step = common::runs::load("hybrid-exit7.json");
            step.name = (*name).to_owned();
            step
        })
        .collect();
    let text = trace::render(&steps);
    // One line of JSON: control characters are escaped, not written raw.
    assert_eq!(text.lines().count(), 1);
    let events = check(&steps);
    let mut slices: Vec<(u64, &str)> = events
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| (e["tid"].as_u64().unwrap(), e["args"]["step"].as_str().unwrap()))
        .collect();
    slices.sort_unstable();
    // The step's name as given in the slice's arguments (its title adds the command).
    assert_eq!(slices.into_iter().map(|(_, name)| name).collect::<Vec<_>>(), names);
}
