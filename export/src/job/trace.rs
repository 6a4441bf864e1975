//! The job as one Chrome trace (Perfetto, `chrome://tracing`): every step
//! a slice on one timeline, the machine's counters once underneath.
//!
//! * Process 1 (`job`) holds the steps without a group; each group
//!   ([`Entry::group`], e.g. one BuildKit build) is a process of its own
//!   (`group: <name>`), in order of first appearance.
//! * Within a process, a step takes the lowest thread (lane) free at its
//!   start, so overlapping steps lie on their own tracks and sequential
//!   ones share one (`super::timeline::spans`).
//! * Each step's slice and counters are the single-step trace's
//!   ([`crate::trace`]: counters `<n>: cpu`, … with `n` its row in
//!   the job table), without the machine's counters; its `args` add
//!   `status` (`ended`, `notRun`, `interrupted`, `cached`), `from`, the
//!   step's `action` when a launcher recorded one (its slice is named by
//!   it, `serde 1.0.219 (lib)`) and, for
//!   an interrupted step, `recordEnds` — its slice ends at the record's end
//!   and is coloured `cname: "terrible"`, a cached one `"grey"`.
//! * The last process (`machine`) has the machine's CPU busy share and CPU
//!   stall share from every step's machine samples, once
//!   (`super::timeline::machine_samples`), and a `gaps` thread with a
//!   slice (`cat: "gap"`) for each stretch in which no step ran.
//!
//! `otherData` names the interrupted and cached steps and counts the gaps.

use serde_json::{Map, Value, json};

use super::timeline::{machine_series, spans};
use crate::trace::{Counter, Event, Track, document, metadata_of, micros, track_events};
use stepmon_report::job::Entry;
use stepmon_report::job::table::{gaps, job};

/// The job of `entries` as Chrome trace event JSON.
#[must_use]
pub fn render(entries: &[Entry]) -> String {
    let job = job(entries, &[]);
    // Process ids: 1 for steps without a group, then one per group.
    let mut groups: Vec<&str> = Vec::new();
    for r in &job.steps {
        if let Some(g) = r.group.as_deref()
            && !groups.contains(&g)
        {
            groups.push(g);
        }
    }
    let pid_of = |group: Option<&str>| -> u64 {
        group.and_then(|g| groups.iter().position(|x| *x == g)).map_or(1, |i| i as u64 + 2)
    };
    let machine_pid = groups.len() as u64 + 2;
    let spans = spans(&job, |a, b| a.group == b.group);
    let mut events = vec![
        Event::Value(metadata_of(1, "process_name", 0, json!({ "name": "job" }))),
        Event::Value(metadata_of(1, "process_sort_index", 0, json!({ "sort_index": 1 }))),
    ];
    for (i, g) in groups.iter().enumerate() {
        let pid = i as u64 + 2;
        events.push(Event::Value(metadata_of(pid, "process_name", 0, json!({ "name": format!("group: {g}") }))));
        events.push(Event::Value(metadata_of(pid, "process_sort_index", 0, json!({ "sort_index": pid }))));
    }
    events.push(Event::Value(metadata_of(machine_pid, "process_name", 0, json!({ "name": "machine" }))));
    events.push(Event::Value(metadata_of(machine_pid, "process_sort_index", 0, json!({ "sort_index": machine_pid }))));
    let mut lanes: Vec<(u64, u64)> =
        spans.iter().map(|s| (pid_of(job.steps[s.row].group.as_deref()), s.lane as u64 + 1)).collect();
    lanes.sort_unstable();
    lanes.dedup();
    for (pid, tid) in lanes {
        let name = if tid == 1 { "steps".to_owned() } else { format!("steps (overlapping, lane {tid})") };
        events.push(Event::Value(metadata_of(pid, "thread_name", tid, json!({ "name": name }))));
        events.push(Event::Value(metadata_of(pid, "thread_sort_index", tid, json!({ "sort_index": tid }))));
    }
    events.push(Event::Value(metadata_of(machine_pid, "thread_name", 1, json!({ "name": "gaps" }))));
    let mut timed: Vec<(f64, Event)> = Vec::new();
    let mut untimed = Vec::new();
    for (i, r) in job.steps.iter().enumerate() {
        let Some(span) = spans.iter().find(|s| s.row == i) else {
            untimed.push(r.shown_name());
            continue;
        };
        let at = Track { pid: pid_of(r.group.as_deref()), tid: span.lane as u64 + 1, n: i as u64 + 1, machine: false };
        let first = timed.len();
        track_events(&entries[r.entry].step, at, span.start, &mut timed);
        if let Some((_, Event::Value(slice))) = timed.get_mut(first)
            && let Some(slice) = slice.as_object_mut()
        {
            // The row's name (`Row::label`): an action's words in place of
            // the step's command.
            slice.insert("name".into(), json!(r.label));
        }
        if let Some((_, Event::Value(slice))) = timed.get_mut(first)
            && let Some(args) = slice.get_mut("args").and_then(Value::as_object_mut)
        {
            if let Some(action) = &r.action {
                args.insert("action".into(), json!(action));
            }
            args.insert("status".into(), json!(r.status));
            args.insert("from".into(), json!(r.from));
            if let Some(g) = &r.group {
                args.insert("group".into(), json!(g));
            }
            if let Some(t) = r.record_ends {
                args.insert("recordEnds".into(), json!(t.to_string()));
            }
            let colour = match r.status {
                "interrupted" => Some("terrible"),
                "cached" => Some("grey"),
                _ => None,
            };
            if let (Some(colour), Some(slice)) = (colour, slice.as_object_mut()) {
                slice.insert("cname".into(), json!(colour));
            }
        }
    }
    let (busy, stall) = machine_series(&job, entries);
    for (name, points) in [("machine cpu busy", busy), ("machine cpu stall", stall)] {
        let name: std::rc::Rc<str> = name.into();
        for p in points.iter().filter(|p| p.t.is_finite() && p.value.is_finite()) {
            let (ts, name) = (micros(p.t), std::rc::Rc::clone(&name));
            let counter = Counter { name, cat: "machine", pid: machine_pid, tid: 1, ts, key: "share", value: p.value };
            timed.push((ts, Event::Counter(counter)));
        }
    }
    let gaps = gaps(&job);
    for &(from, to) in &gaps {
        let ts = micros(from);
        timed.push((
            ts,
            Event::Value(json!({ "name": "gap: no step ran", "cat": "gap", "ph": "X", "pid": machine_pid, "tid": 1,
                    "ts": ts, "dur": micros(to - from), "args": { "seconds": to - from } })),
        ));
    }
    // Metadata first, then everything in time order (stable: each track's
    // own order is kept).
    timed.sort_by(|a, b| a.0.total_cmp(&b.0));
    events.extend(timed.into_iter().map(|(_, e)| e));
    let mut other = Map::new();
    other.insert("generator".into(), json!(concat!("stepmon-export ", env!("CARGO_PKG_VERSION"))));
    if let Some(origin) = job.origin {
        other.insert("timeOrigin".into(), json!(origin.to_string()));
    }
    other.insert("steps".into(), json!(job.steps.len()));
    let named = |status: &str| -> Vec<&str> {
        job.steps.iter().filter(|r| r.status == status).map(|r| r.label.as_str()).collect()
    };
    other.insert("interrupted".into(), json!(named("interrupted")));
    other.insert("cached".into(), json!(named("cached")));
    other.insert("gaps".into(), json!(gaps.len()));
    if !untimed.is_empty() {
        other.insert("stepsWithoutTime".into(), json!(untimed));
    }
    document(&events, other)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;
    use stepmon_model::action::{Action, Compile, CrateBuild, CrateKind};
    use stepmon_model::job::{Record, StepEnd, StepStart};
    use stepmon_report::job::{Entry, read};

    #[test]
    fn a_launchers_actions_are_slices_named_by_what_they_build() {
        let mut serde = CrateBuild::new("serde".into(), CrateKind::Lib, "rustc".into());
        serde.version = Some("1.0.219".into());
        let actions = [Action::Crate(serde), Action::Compile(Compile::new("cc".into(), Some("main.o".into()), None))];
        let mut text = String::new();
        for (i, action) in actions.iter().enumerate() {
            let at: jiff::Timestamp = format!("2026-12-04T10:00:0{i}Z").parse().unwrap();
            let mut start = StepStart::new(7, at, "rustc".into(), vec!["rustc".into(), format!("arg{i}")]);
            start.action = Some(action.clone());
            let end = StepEnd::new(start.step.clone(), at, 0);
            for record in [Record::StepStart(start), Record::StepEnd(end)] {
                text += &(serde_json::to_string(&record).unwrap() + "\n");
            }
        }
        let entries: Vec<Entry> = read(&text).steps.iter().map(|s| Entry::of_job(s, "job.jsonl".into())).collect();
        let trace: Value = serde_json::from_str(&super::render(&entries)).unwrap();
        let slices: Vec<&Value> =
            trace["traceEvents"].as_array().unwrap().iter().filter(|e| e["cat"] == "step").collect();
        let names: Vec<&str> = slices.iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["serde 1.0.219 (lib)", "main.o (cc)"]);
        assert_eq!(slices[0]["args"]["action"]["crate"], "serde");
        assert_eq!(slices[1]["args"]["action"]["output"], "main.o");
    }
}
