//! A step's events (its memory near what bounds it) on every view's
//! timeline, read back by real consumers: a job of two steps — one ended
//! with its run document holding its event, one interrupted with its event
//! on a `stepEvent` line of the record alone — and a run document alone.
//! The text views say each at its time; the trace has an instant event at
//! that time on the step's thread (JSON); the SVG timeline a marker on the
//! step's row and the chart a line across its panels (roxmltree); the HTML
//! page lists them per step and places the markers where the time says
//! (headless Chromium's layout).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::chromium::{Chromium, chromium_or_skip};
use common::job::{at, end_with, entries_of, line, sample_lines, sample_with, start, sys};
use serde_json::Value;
use stepmon_export::job as views;
use stepmon_model::event::{MemoryBound, MemoryNearLimit, StepEvent};
use stepmon_model::job::{Record, StepEventRecord};
use stepmon_report::Step;

const MIB: u64 = 1 << 20;
/// The interrupted step's start, s after the job's.
const LEAK_START: f64 = 12.0;

/// A memory event `seconds` into a step started at `start` (s after the job's).
fn event(start: f64, seconds: f64, file: &str) -> StepEvent {
    let mut memory = MemoryNearLimit::new(MemoryBound::OwnLimit, file.to_owned(), 100 * MIB, 95 * MIB, 0.9);
    memory.trend_bytes_per_second = Some(20.0 * MIB as f64);
    StepEvent::memory_near_limit(at(start + seconds), seconds, memory)
}

/// The words every view says of [`event`] `seconds` into its step.
fn words(seconds: &str) -> String {
    format!("memory 95.0% of memory.max (95.0 MiB of 100.0 MiB, growing 20.0 MiB/s) at {seconds}")
}

/// The job record: `grow` (0–10 s, its event at 9.5 s in its document),
/// `leak` (from 12 s, interrupted after 4 s, its event at 2.5 s on a line).
fn job_record() -> String {
    let grow = start(1, &at(0.0).to_string(), "grow");
    let samples: Vec<_> =
        (0..=5u32).map(|i| sample_with(at(2.0 * f64::from(i)), 0, u64::from(i) * 19 * MIB, 0)).collect();
    let machine = [sys(at(0.0), 0.0, 0.0, 16 << 20, 2, 0), sys(at(10.0), 1.0, 1.0, 16 << 20, 2, 0)];
    let mut text = line(Record::StepStart(grow.clone())) + &sample_lines(&grow, &samples);
    let ended = end_with(&grow, at(10.0), 137, &samples, &machine);
    let Ok(Record::StepEnd(mut end)) = serde_json::from_str(&ended) else { panic!("{ended}") };
    end.document.as_mut().unwrap().stepmon.as_mut().unwrap().events.push(event(0.0, 9.5, "memory.max"));
    text += &line(Record::StepEnd(end));

    let leak = start(2, &at(LEAK_START).to_string(), "leak");
    let samples: Vec<_> =
        (0..=2u32).map(|i| sample_with(at(LEAK_START + 2.0 * f64::from(i)), 0, u64::from(i) * 40 * MIB, 0)).collect();
    text += &line(Record::StepStart(leak.clone()));
    text += &sample_lines(&leak, &samples[..2]);
    let file = "/sys/fs/cgroup/memory/stepmon-run.2.1/memory.max";
    text += &line(Record::StepEvent(StepEventRecord::new(leak.step.clone(), event(LEAK_START, 2.5, file))));
    text + &sample_lines(&leak, &samples[2..])
}

#[test]
fn the_text_views_say_each_event_at_its_time() {
    let entries = entries_of(&job_record());
    assert_eq!(entries.len(), 2);
    let text = stepmon_report::job::render(&entries, &[]);
    let events: Vec<&str> = text.lines().filter(|l| l.starts_with("event: ")).collect();
    assert_eq!(
        events,
        [
            format!("event: grow: {} (+9.50 s in the job)", words("9.50 s")),
            format!("event: leak: {} (+14.50 s in the job)", words("2.50 s")),
        ],
        "{text}"
    );
    // A step's own summary (`stepmon report` of its run document).
    for (entry, seconds) in entries.iter().zip(["9.50 s", "2.50 s"]) {
        let summary = stepmon_report::text::render(&entry.step, &entry.step.verdicts());
        let lines: Vec<&str> = summary.lines().filter(|l| l.starts_with("  event    ")).collect();
        assert_eq!(lines, [format!("  event    {}", words(seconds))], "{summary}");
    }
}

/// The instant events of `trace` (JSON): the name of the step slice on
/// whose thread and within which each lies, its time into that slice (µs),
/// its description.
fn instants(trace: &str) -> Vec<(String, f64, String)> {
    let trace: Value = serde_json::from_str(trace).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let f = |e: &Value, key: &str| e[key].as_f64().unwrap();
    events
        .iter()
        .filter(|e| e["ph"] == "i")
        .map(|e| {
            assert_eq!((e["s"].as_str(), e["cat"].as_str()), (Some("t"), Some("event")), "{e}");
            assert_eq!(e["name"], "memory near its limit");
            assert_eq!(e["args"]["event"]["kind"], "memoryNearLimit", "{e}");
            let ts = f(e, "ts");
            let slice = events
                .iter()
                .find(|s| {
                    s["ph"] == "X"
                        && s["cat"] == "step"
                        && s["tid"] == e["tid"]
                        && s["pid"] == e["pid"]
                        && f(s, "ts") <= ts
                        && ts <= f(s, "ts") + f(s, "dur")
                })
                .unwrap_or_else(|| panic!("{e} in no step's slice"));
            (
                slice["name"].as_str().unwrap().to_owned(),
                ts - f(slice, "ts"),
                e["args"]["description"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_trace_has_an_instant_event_at_each_events_time() {
    let entries = entries_of(&job_record());
    let job_trace = instants(&views::render(stepmon_export::Format::Trace, &entries, &[]));
    let seen: Vec<(&str, f64, &str)> =
        job_trace.iter().map(|(name, t, d)| (name.as_str(), (t / 1e3).round() / 1e3, d.as_str())).collect();
    assert_eq!(seen, [("grow", 9.5, words("9.50 s").as_str()), ("leak", 2.5, words("2.50 s").as_str())]);
    // A run document alone.
    let steps: Vec<Step> = entries.into_iter().map(|e| e.step).collect();
    let single = instants(&stepmon_export::trace::render(&steps[..1]));
    let seen: Vec<(&str, f64, &str)> =
        single.iter().map(|(name, t, d)| (name.as_str(), (t / 1e3).round() / 1e3, d.as_str())).collect();
    assert_eq!(seen, [("grow", 9.5, words("9.50 s").as_str())]);
}

fn has_class(n: &roxmltree::Node<'_, '_>, class: &str) -> bool {
    n.attribute("class").is_some_and(|a| a.split(' ').any(|c| c == class))
}

/// The `<title>` text of `n`.
fn title(n: &roxmltree::Node<'_, '_>) -> String {
    n.children().find(|c| c.has_tag_name("title")).and_then(|t| t.text()).unwrap_or_default().to_owned()
}

#[test]
fn the_svg_timeline_and_charts_mark_each_event() {
    let entries = entries_of(&job_record());
    let svg = views::render(stepmon_export::Format::Svg, &entries, &[]);
    let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
    let timeline = doc.descendants().find(|n| has_class(n, "stepmon-timeline")).unwrap();
    let rows: Vec<_> = timeline.descendants().filter(|n| has_class(n, "step")).collect();
    let marked: Vec<(String, Vec<String>)> = rows
        .iter()
        .map(|row| {
            let name = row.descendants().find(|n| has_class(n, "step-name")).unwrap().text().unwrap().to_owned();
            (name, row.descendants().filter(|n| has_class(n, "event")).map(|n| title(&n)).collect())
        })
        .collect();
    assert_eq!(
        marked,
        [("grow".to_owned(), vec![words("9.50 s")]), ("leak".to_owned(), vec![words("2.50 s")])],
        "a marker on each step's row"
    );
    let charts: Vec<_> = doc.descendants().filter(|n| has_class(n, "stepmon-chart")).collect();
    assert_eq!(charts.len(), 2);
    for (chart, seconds) in charts.iter().zip(["9.50 s", "2.50 s"]) {
        let lines: Vec<String> = chart.descendants().filter(|n| has_class(n, "event")).map(|n| title(&n)).collect();
        assert_eq!(lines, [words(seconds)]);
    }
}

/// Reads the events of the page as laid out.
const MEASURE: &str = r"<script>
(function () {
  const box = e => { const b = e.getBBox(); return { x: b.x, width: b.width }; };
  const rows = Array.from(document.querySelectorAll('svg.stepmon-timeline g.step')).map(g => ({
    bar: g.querySelector('rect.bar') && box(g.querySelector('rect.bar')),
    events: Array.from(g.querySelectorAll('path.event')).map(box) }));
  const sections = Array.from(document.querySelectorAll('section.step')).map(s => ({
    events: Array.from(s.querySelectorAll('ul.events > li')).map(li => li.textContent),
    lines: Array.from(s.querySelectorAll('svg.stepmon-chart line.event')).map(l =>
      ({ x: l.getBBox().x, title: l.querySelector('title').textContent })),
    frame: box(s.querySelector('svg.stepmon-chart rect.frame')),
    ticks: Array.from(s.querySelectorAll('svg.stepmon-chart text.tick.x')).map(t =>
      ({ x: t.x.baseVal[0].value, label: t.textContent })) }));
  const pre = document.createElement('pre');
  pre.id = 'stepmon-check';
  pre.textContent = JSON.stringify({ rows, sections });
  document.body.appendChild(pre);
})();
</script>";

#[test]
fn the_html_page_lists_each_event_and_places_its_markers_at_its_time() {
    let test = "the_html_page_lists_each_event_and_places_its_markers_at_its_time";
    let Some(binary) = chromium_or_skip(test) else { return };
    let tmp = tempfile::Builder::new().prefix("stepmon-events-html-").tempdir().unwrap();
    let chromium = Chromium::new(binary, tmp.path().join("profile"));
    let entries = entries_of(&job_record());
    let page = views::render(stepmon_export::Format::Html, &entries, &[]);
    let result = common::measured(&chromium, &page, MEASURE, tmp.path());
    let f = |v: &Value| v.as_f64().unwrap();
    // The timeline: grow's bar spans 0–10 s, its marker (4 px either side
    // of its tip) at 9.5 s of it; leak's bar 12–16 s, its marker at 14.5 s.
    let rows = result["rows"].as_array().unwrap();
    let grow_bar = &rows[0]["bar"];
    let per_second = f(&grow_bar["width"]) / 10.0;
    for (row, seconds) in rows.iter().zip([9.5, 14.5]) {
        let [marker] = row["events"].as_array().unwrap().as_slice() else { panic!("{result}") };
        let tip = f(&marker["x"]) + f(&marker["width"]) / 2.0;
        let expected = f(&grow_bar["x"]) + seconds * per_second;
        assert!((tip - expected).abs() < 1.0, "marker at {tip} px, {seconds} s is at {expected} px: {result}");
    }
    // Each step's section lists its event, and its chart's line is at its time.
    let sections = result["sections"].as_array().unwrap();
    assert_eq!(sections.len(), 2);
    for (section, (seconds, wall)) in sections.iter().zip([(9.5, 10.0), (2.5, 4.0)]) {
        let shown = format!("{seconds:.2} s");
        assert_eq!(section["events"], serde_json::json!([words(&shown)]), "{result}");
        let [line] = section["lines"].as_array().unwrap().as_slice() else { panic!("{result}") };
        assert_eq!(line["title"].as_str(), Some(words(&shown).as_str()));
        // Where the chart's x ticks say that time is.
        let (frame_x, ticks) = (f(&section["frame"]["x"]), section["ticks"].as_array().unwrap());
        let tick = ticks
            .iter()
            .find_map(|t| {
                let value: f64 = t["label"].as_str()?.strip_suffix(" s")?.parse().ok()?;
                (value > 0.0).then(|| (value, f(&t["x"])))
            })
            .unwrap_or_else(|| panic!("no tick in seconds: {result}"));
        let expected = frame_x + seconds * (tick.1 - frame_x) / tick.0;
        assert!((f(&line["x"]) - expected).abs() < 1.0, "{seconds} s at {} px, not {expected}: {result}", line["x"]);
        assert!(seconds < wall, "inside the step");
    }
}
