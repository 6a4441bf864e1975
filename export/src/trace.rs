//! Steps as Chrome trace event JSON, which [Perfetto](https://ui.perfetto.dev)
//! and `chrome://tracing` open: the JSON Object Format of the
//! [Trace Event Format] — `{"traceEvents": [...], "displayTimeUnit": "ms",
//! "otherData": {...}}`.
//!
//! What is in it:
//!
//! * One process (`pid` 1, named `stepmon`) and one thread (`tid` 1, 2, …)
//!   per step, named `<n>: <step name>` by `process_name` / `thread_name`
//!   metadata events (`ph: "M"`) and kept in report order by
//!   `thread_sort_index`.
//! * A complete event (`ph: "X"`, `ts` + `dur`) per step spanning its wall
//!   time, whose `args` hold the exit code or signal, the wall time and how
//!   it is known, the verdict classes and the verdict sentences.
//! * Counter events (`ph: "C"`) for every [`StepSeries`] of the step: CPU
//!   cores, memory (total, anon, file) bytes, IO read/write bytes per
//!   second, PSI stall shares of CPU, memory and IO, pids, and the machine's
//!   CPU busy share and CPU stall share. Counters belong to the process in
//!   both viewers, so each is named `<n>: <series>` (`1: cpu`, `2: cpu`) to
//!   keep one step's track from merging into another's; each event has one
//!   arg, whose key is the unit (`cores`, `bytes`, `share`, ...).
//! * An instant event (`ph: "i"`, scope `t`: on the step's thread) per
//!   event of the step at its time ([`stepmon_report::event`]: its memory
//!   near what bounds it), named by its kind (`memory near its limit`),
//!   whose `args` hold it in words (`description`) and as recorded
//!   (`event`).
//! * A trace process per step with a track per top process, its lifetime
//!   and peak RSS (`process_events`).
//! * The metadata events come first, then every other event in time order.
//!
//! Time: `ts` and `dur` are microseconds (fractions down to nanoseconds)
//! since the earliest step's start — its `start`, or its first sample when
//! the start is unknown, as [`Step::offset_seconds`] counts; `otherData`
//! carries that origin as RFC 3339 (`timeOrigin`). Relative times keep the
//! numbers small and exact in a double; Perfetto and `chrome://tracing`
//! treat both alike.
//!
//! A step's samples may be read just outside its wall time (stepmon takes a
//! baseline sample right before starting the command and a last one right
//! after it exits; machine samples likewise): their counter points are
//! drawn at the slice's nearest edge, so every counter lies within its
//! step's slice — the baseline reading is the state at the start, the last
//! reading the state at the end. Within each counter track `ts` never
//! decreases. A step whose wall time is unknown spans its samples.
//!
//! Only finite numbers are written (non-finite points are dropped), and
//! the document is built with `serde_json`, so step names with quotes,
//! control characters or any Unicode come out as valid JSON.
//!
//! [Trace Event Format]: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
//!
//! ```
//! use stepmon_model::document::RunDocument;
//! use stepmon_report::Step;
//!
//! let json = r#"{"resourceUsage": {"samples": [
//!     {"timestamp": "2026-11-30T10:00:00Z", "cpuStat": {"usageNanos": 0}, "pidsStat": {}},
//!     {"timestamp": "2026-11-30T10:00:02Z", "cpuStat": {"usageNanos": 1500000000}, "pidsStat": {}}]},
//!   "sysUsage": [],
//!   "stepmon": {"command": ["make"], "exitCode": 0,
//!     "start": "2026-11-30T10:00:00Z", "end": "2026-11-30T10:00:02Z"}}"#;
//! let step = Step::from_run(&serde_json::from_str::<RunDocument>(json)?);
//! let trace: serde_json::Value = serde_json::from_str(&stepmon_export::trace::render(&[step]))?;
//! let events = trace["traceEvents"].as_array().unwrap();
//! let slice = events.iter().find(|e| e["ph"] == "X").unwrap();
//! assert_eq!((slice["name"].as_str(), slice["ts"].as_f64(), slice["dur"].as_f64()), (Some("make"), Some(0.0), Some(2e6)));
//! let cpu = events.iter().find(|e| e["ph"] == "C" && e["name"] == "1: cpu").unwrap();
//! assert_eq!((cpu["ts"].as_f64(), cpu["args"]["cores"].as_f64()), (Some(2e6), Some(0.75)));
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::collections::BTreeSet;
use std::rc::Rc;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value, json};
use stepmon_model::processes::ProcessRecord;
use stepmon_report::series::{Point, StepSeries};
use stepmon_report::step::{Origin, Step};

/// The one process all steps are threads of.
pub const PID: u64 = 1;

/// A counter track of a step: the name after `<n>: `, the arg key (its
/// unit), and the series it draws.
fn tracks(series: &StepSeries) -> [(&'static str, &'static str, &[Point]); 12] {
    [
        ("cpu", "cores", &series.cpu_cores),
        ("memory", "bytes", &series.memory_bytes),
        ("memory anon", "bytes", &series.memory_anon_bytes),
        ("memory file", "bytes", &series.memory_file_bytes),
        ("io read", "bytesPerSecond", &series.io_read_bytes_per_second),
        ("io write", "bytesPerSecond", &series.io_write_bytes_per_second),
        ("cpu stall", "share", &series.cpu_stall_share),
        ("memory stall", "share", &series.memory_stall_share),
        ("io stall", "share", &series.io_stall_share),
        ("pids", "tasks", &series.pids),
        ("machine cpu busy", "share", &series.machine_cpu_busy_share),
        ("machine cpu stall", "share", &series.machine_cpu_stall_share),
    ]
}

/// Seconds → microseconds, rounded to whole nanoseconds (so that the JSON
/// shows `1500000.0`, not `1500000.0000000002`).
pub(crate) fn micros(seconds: f64) -> f64 {
    (seconds * 1e9).round() / 1e3
}

/// A JSON number, `None` when not finite (JSON has no NaN or infinity).
pub(crate) fn number(v: f64) -> Option<Value> {
    v.is_finite().then(|| json!(v))
}

/// The verdict classes and sentences, and what the run says of its end.
fn slice_args(step: &Step) -> Value {
    let verdicts = step.verdicts();
    let mut args = Map::new();
    args.insert("step".into(), json!(step.name));
    if !step.command().is_empty() {
        args.insert("command".into(), json!(step.command()));
    }
    args.insert("origin".into(), json!(step.origin.name()));
    if let Origin::BuildKit { step_id, digest } = &step.origin {
        args.insert("stepId".into(), json!(step_id));
        if let Some(d) = digest {
            args.insert("digest".into(), json!(d));
        }
    }
    if let Some(run) = &step.run {
        if !run.labels.is_empty() {
            let labels: Map<String, Value> = run.labels.iter().map(|l| (l.key.clone(), json!(l.value))).collect();
            args.insert("labels".into(), Value::Object(labels));
        }
        // The CI context whole: the run id, attempt and URL that the metric
        // exports leave out (one value per run) belong here.
        if let Some(ci) = &run.ci {
            args.insert("ci".into(), json!(ci));
        }
        if let Some(code) = run.exit_code {
            args.insert("exitCode".into(), json!(code));
        }
        if let Some(signal) = run.signal {
            args.insert("signal".into(), json!(signal));
        }
    }
    if let Some(wall) = step.wall_seconds.and_then(number) {
        args.insert("wallSeconds".into(), wall);
    }
    args.insert("wallSource".into(), json!(step.wall_source));
    for (key, time) in [("start", step.start), ("end", step.end)] {
        if let Some(t) = time {
            args.insert(key.into(), json!(t.to_string()));
        }
    }
    args.insert("bottleneck".into(), json!(verdicts.bottleneck.class));
    if let Some(throttled) = verdicts.throttling.throttled {
        args.insert("throttled".into(), json!(throttled));
    }
    args.insert("machine".into(), json!(verdicts.machine.class));
    args.insert("memory".into(), json!(verdicts.memory.class));
    if !step.sources.is_empty() {
        // Where each group's numbers (and counter tracks) came from.
        args.insert("sources".into(), json!(step.sources));
    }
    args.insert("verdicts".into(), json!(verdicts.sentences()));
    Value::Object(args)
}

/// A counter point (`ph: "C"`): most of a trace's events, written straight
/// from its fields as a [`Value`] of the same event would be written — its
/// keys in `serde_json`'s order (sorted), the same numbers — without
/// building that value (a map, a string per key) for each point.
#[derive(Debug, Clone)]
pub(crate) struct Counter {
    /// `<n>: <series>`, shared by the points of a track.
    pub(crate) name: Rc<str>,
    pub(crate) cat: &'static str,
    pub(crate) pid: u64,
    pub(crate) tid: u64,
    pub(crate) ts: f64,
    /// The arg's key: the unit.
    pub(crate) key: &'static str,
    /// A finite number (JSON has no NaN or infinity).
    pub(crate) value: f64,
}

impl Serialize for Counter {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Arg<'a>(&'a str, f64);
        impl Serialize for Arg<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry(self.0, &self.1)?;
                map.end()
            }
        }
        let mut map = serializer.serialize_map(Some(7))?;
        map.serialize_entry("args", &Arg(self.key, self.value))?;
        map.serialize_entry("cat", self.cat)?;
        map.serialize_entry("name", &*self.name)?;
        map.serialize_entry("ph", "C")?;
        map.serialize_entry("pid", &self.pid)?;
        map.serialize_entry("tid", &self.tid)?;
        map.serialize_entry("ts", &self.ts)?;
        map.end()
    }
}

/// An event of a trace: a counter point, or any other as a JSON value.
#[derive(Debug, Clone)]
pub(crate) enum Event {
    /// A counter point.
    Counter(Counter),
    /// Any other event.
    Value(Value),
}

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Event::Counter(c) => c.serialize(serializer),
            Event::Value(v) => v.serialize(serializer),
        }
    }
}

/// The trace document: `{"displayTimeUnit", "otherData", "traceEvents"}`,
/// in that (sorted) order as a [`Value`] of it would be written.
pub(crate) fn document(events: &[Event], other: Map<String, Value>) -> String {
    struct Document<'a>(&'a [Event], Map<String, Value>);
    impl Serialize for Document<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(Some(3))?;
            map.serialize_entry("displayTimeUnit", "ms")?;
            map.serialize_entry("otherData", &self.1)?;
            map.serialize_entry("traceEvents", self.0)?;
            map.end()
        }
    }
    // Serialising cannot fail (every key is a string, every number finite).
    serde_json::to_string(&Document(events, other)).unwrap_or_default() + "\n"
}

/// Where a step's events go: its slice on thread `tid` of process `pid`,
/// its counters named `<n>: <series>` on that process.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Track {
    pub(crate) pid: u64,
    pub(crate) tid: u64,
    pub(crate) n: u64,
    /// Whether to draw the machine's counters with the step's (a job draws
    /// them once, on a track of their own).
    pub(crate) machine: bool,
}

/// Names of the machine's counters among [`tracks`].
pub(crate) const MACHINE_TRACKS: [&str; 2] = ["machine cpu busy", "machine cpu stall"];

/// The events of step number `n` (1-based; its `tid`), whose times count
/// from `offset` seconds after the trace's origin, each with its `ts`.
fn step_events(step: &Step, n: u64, offset: f64, meta: &mut Vec<Event>, events: &mut Vec<(f64, Event)>) {
    let duration = track_events(step, Track { pid: PID, tid: n, n, machine: true }, offset, events);
    process_events(step, n, offset, duration, meta, events);
}

/// The events of `step` on `at`, whose times count from `offset` seconds
/// after the trace's origin, each with its `ts`; the slice comes first.
/// Returns the slice's length, s.
pub(crate) fn track_events(step: &Step, at: Track, offset: f64, events: &mut Vec<(f64, Event)>) -> f64 {
    let Track { pid, tid, n, machine } = at;
    let series = StepSeries::of(step);
    let mut tracks = tracks(&series).to_vec();
    if !machine {
        tracks.retain(|(name, _, _)| !MACHINE_TRACKS.contains(name));
    }
    // The slice: the wall time, or (unknown) up to the last point drawn.
    let last_point = tracks.iter().flat_map(|(_, _, points)| points.iter()).map(|p| p.t).filter(|t| t.is_finite());
    let duration = match step.wall_seconds.filter(|w| w.is_finite() && *w >= 0.0) {
        Some(wall) => wall,
        None => last_point.fold(0.0, f64::max),
    };
    let ts = micros(offset);
    events.push((
        ts,
        Event::Value(json!({
            "name": step.label(), "cat": "step", "ph": "X", "pid": pid, "tid": tid,
            "ts": ts, "dur": micros(duration), "args": slice_args(step),
        })),
    ));
    for (series_name, key, points) in tracks {
        let mut points: Vec<Point> =
            points.iter().copied().filter(|p| p.t.is_finite() && p.value.is_finite()).collect();
        // Monotonic within the track, equal times in sample order.
        points.sort_by(|a, b| a.t.total_cmp(&b.t));
        let name: Rc<str> = format!("{n}: {series_name}").into();
        for p in points {
            let ts = micros(offset + p.t.clamp(0.0, duration));
            let (name, value) = (Rc::clone(&name), p.value);
            events.push((ts, Event::Counter(Counter { name, cat: "usage", pid, tid, ts, key, value })));
        }
    }
    for placed in stepmon_report::event::of_step(step) {
        let Some(t) = placed.offset_seconds.filter(|t| t.is_finite()) else { continue };
        // Within the slice, as the counters are.
        let ts = micros(offset + t.clamp(0.0, duration));
        let event = json!({
            "name": stepmon_report::event::name(placed.event), "cat": "event", "ph": "i", "s": "t",
            "pid": pid, "tid": tid, "ts": ts, "args": { "description": placed.words, "event": placed.event },
        });
        events.push((ts, Event::Value(event)));
    }
    duration
}

fn metadata(name: &str, tid: u64, args: Value) -> Value {
    metadata_of(PID, name, tid, args)
}

/// A metadata event (`ph: "M"`) of thread `tid` of process `pid`.
pub(crate) fn metadata_of(pid: u64, name: &str, tid: u64, args: Value) -> Value {
    json!({ "name": name, "ph": "M", "pid": pid, "tid": tid, "ts": 0, "args": args })
}

/// Renders `steps` as Chrome trace event JSON (JSON Object Format).
#[must_use]
pub fn render(steps: &[Step]) -> String {
    let origin = steps.iter().filter_map(Step::time_origin).min();
    let mut events = vec![Event::Value(metadata("process_name", 0, json!({ "name": "stepmon" })))];
    let mut timed = Vec::new();
    let mut untimed = Vec::new();
    for (n, step) in (1u64..).zip(steps) {
        events.push(Event::Value(metadata("thread_name", n, json!({ "name": format!("{n}: {}", step.label()) }))));
        events.push(Event::Value(metadata("thread_sort_index", n, json!({ "sort_index": n }))));
        match (origin, step.time_origin()) {
            (Some(origin), Some(start)) => {
                let offset = start.duration_since(origin).as_secs_f64();
                step_events(step, n, offset, &mut events, &mut timed);
            }
            // No start and no sample: nowhere to draw it.
            _ => untimed.push(step.label()),
        }
    }
    // Metadata first, then everything in time order (a stable sort: a
    // slice stays ahead of the counters at its start), which viewers that
    // stream the file take best; each track's order is kept.
    timed.sort_by(|a, b| a.0.total_cmp(&b.0));
    events.extend(timed.into_iter().map(|(_, event)| event));
    let mut other = Map::new();
    other.insert("generator".into(), json!(concat!("stepmon-export ", env!("CARGO_PKG_VERSION"))));
    if let Some(origin) = origin {
        other.insert("timeOrigin".into(), json!(origin.to_string()));
    }
    other.insert("steps".into(), json!(steps.len()));
    if !untimed.is_empty() {
        other.insert("stepsWithoutTime".into(), json!(untimed));
    }
    document(&events, other)
}

// The step's top processes in the Chrome trace: a trace process per step
// (`pid` 1 + n, named `<n>: <step> processes`) holding a thread per
// process kept in the document's top lists (by CPU, by peak RSS, by IO; all
// of them with `--processes all`), each a complete event (`ph: "X"`) over
// the process's lifetime whose `args` hold its pid, CPU, peak RSS and IO.
//
// A record's start is the kernel's `ac_btime` (or the sampled start),
// whole seconds since the epoch: a slice's start is known to a second and
// is drawn within its step's slice; its length is the exact lifetime.

/// The trace process of step `n`'s processes.
#[must_use]
fn pid_of(n: u64) -> u64 {
    PID.saturating_add(n)
}

/// The processes to draw: every top list's, once each, in start order.
fn drawn(step: &Step) -> Vec<&ProcessRecord> {
    let Some(p) = step.run.as_ref().and_then(|r| r.processes.as_ref()) else { return Vec::new() };
    let mut seen = BTreeSet::new();
    let mut out: Vec<&ProcessRecord> = p
        .all
        .iter()
        .chain(&p.top_by_cpu)
        .chain(&p.top_by_peak_rss)
        .chain(&p.top_by_io)
        .filter(|r| seen.insert((r.pid, r.start_unix_seconds)))
        .collect();
    out.sort_by_key(|r| (r.start_unix_seconds, r.pid));
    out
}

/// Step `n`'s process events: metadata into `meta`, slices (with their `ts`)
/// into `events`; `offset` is the step's start after the trace's origin, s,
/// `duration` its slice's length.
fn process_events(
    step: &Step,
    n: u64,
    offset: f64,
    duration: f64,
    meta: &mut Vec<Event>,
    events: &mut Vec<(f64, Event)>,
) {
    let processes = drawn(step);
    let Some(start) = step.time_origin().filter(|_| !processes.is_empty()) else { return };
    let pid = pid_of(n);
    #[allow(clippy::cast_precision_loss)] // seconds since the epoch
    let step_start = start.as_second() as f64 + f64::from(start.subsec_nanosecond()) * 1e-9;
    meta.push(Event::Value(metadata_of(
        pid,
        "process_name",
        0,
        json!({ "name": format!("{n}: {} processes", step.name) }),
    )));
    meta.push(Event::Value(metadata_of(pid, "process_sort_index", 0, json!({ "sort_index": pid }))));
    for r in processes {
        let tid = u64::from(r.pid);
        meta.push(Event::Value(metadata_of(
            pid,
            "thread_name",
            tid,
            json!({ "name": r.label().map_or_else(|| format!("{} {}", r.command, r.pid), |l| format!("{} {} {l}", r.command, r.pid)) }),
        )));
        // The sub-second start where recorded, else the whole second.
        let (from, to, _) = r.interval();
        let after = from - step_start;
        let begin = after.clamp(0.0, duration);
        let length = (to - from).max(0.0).min((duration - begin).max(0.0));
        let ts = micros(offset + begin);
        let mut args = json!({ "pid": r.pid, "ppid": r.ppid, "cpuSeconds": number(r.cpu_seconds) });
        for (key, value) in
            [("peakRssBytes", r.peak_rss_bytes), ("readBytes", r.read_bytes), ("writeBytes", r.write_bytes)]
        {
            if let Some(v) = value {
                args[key] = json!(v);
            }
        }
        if !r.args.is_empty() {
            args["args"] = json!(r.args);
        }
        events.push((
            ts,
            Event::Value(json!({ "name": r.command, "cat": "process", "ph": "X", "pid": pid, "tid": tid,
                    "ts": ts, "dur": micros(length), "args": args })),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_rounds_to_nanoseconds() {
        assert_eq!(micros(1.5), 1_500_000.0);
        assert_eq!(micros(0.1 + 0.2), 300_000.0);
        assert_eq!(micros(1e-9), 0.001);
    }

    #[test]
    fn non_finite_numbers_are_dropped() {
        assert_eq!(number(f64::NAN), None);
        assert_eq!(number(f64::INFINITY), None);
        assert_eq!(number(0.25), Some(json!(0.25)));
    }

    #[test]
    fn empty_report_is_an_empty_trace() {
        let trace: Value = serde_json::from_str(&render(&[])).unwrap();
        assert_eq!(trace["traceEvents"].as_array().map(Vec::len), Some(1));
        assert_eq!(trace["displayTimeUnit"], "ms");
        assert_eq!(trace["otherData"]["steps"], 0);
    }
}
