//! The step's top processes in the Chrome trace: a trace process per step
//! (`pid` 1 + n, named `<n>: <step> processes`) holding a thread per
//! process kept in the document's top lists (by CPU, by peak RSS, by IO; all
//! of them with `--processes all`), each a complete event (`ph: "X"`) over
//! the process's lifetime whose `args` hold its pid, CPU, peak RSS and IO.
//!
//! A record's start is the kernel's `ac_btime` (or the sampled start),
//! whole seconds since the epoch: a slice's start is known to a second and
//! is drawn within its step's slice; its length is the exact lifetime.

use std::collections::BTreeSet;

use serde_json::json;

use super::trace::{Event, metadata_of, micros, number};
use stepmon_model::processes::ProcessRecord;
use stepmon_report::step::Step;

/// The trace process of step `n`'s processes.
#[must_use]
pub(crate) fn pid_of(n: u64) -> u64 {
    super::trace::PID.saturating_add(n)
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
pub(crate) fn events(
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
