//! `baseline show`'s trends from a real store: 30 runs with a memory
//! regression at run 25 and a busy run; the SVG read back as XML (one point
//! per run, the band, the marked runs, the commit on hover), the text
//! table's sparkline of a known series; the HTML page in headless Chromium
//! without a console message (a blocked script or resource would log one).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use stepmon_testsupport::chromium;

use stepmon_history::show::{ShowFormat, show};
use stepmon_history::{Machine, Measure, MetricFilter, Policy, RunKey, RunRecord, Store, Verdict, trends};

const MIB: f64 = 1024.0 * 1024.0;

/// Run `i` (from 1): 100 MiB ± 0.2, 130 MiB from run 25 on; CPU 1 s ± 1 %,
/// 3 s on the busy run 10.
fn run(i: i64) -> RunRecord {
    let wobble = f64::from(i32::try_from(i % 3).unwrap()) - 1.0;
    let peak = if i >= 25 { 130.0 } else { 100.0 + 0.2 * wobble };
    let cpu = if i == 10 { 3.0 } else { 1.0 + 0.01 * wobble };
    RunRecord {
        key: RunKey { step: "build".into(), runner_class: "Linux-X64".into(), ..RunKey::default() },
        branch: Some("main".into()),
        time: jiff::Timestamp::from_second(1_800_000_000 + i * 3600).unwrap(),
        commit: Some(format!("c0ffee{i:02}")),
        machine: if i == 10 { Machine::Busy } else { Machine::Quiet },
        measures: vec![
            Measure { metric: "cpu-seconds".into(), value: cpu },
            Measure { metric: "memory-peak-bytes".into(), value: peak * MIB },
        ],
        content_key: format!("run-{i}"),
    }
}

fn stored() -> Vec<RunRecord> {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("history.db")).unwrap();
    let runs: Vec<RunRecord> = (1..=30).map(run).collect();
    store.add(&runs).unwrap();
    let back = store.runs(Some("build")).unwrap();
    assert_eq!(back.len(), 30);
    assert!(store.runs(Some("other")).unwrap().is_empty());
    back
}

#[test]
fn the_chart_draws_every_run_the_band_and_marks_the_regression_and_the_busy_run() {
    let steps = trends(&stored(), &Policy::default(), &MetricFilter::All, 0);
    assert_eq!(steps.len(), 1);
    let memory = steps[0].metrics.iter().find(|m| m.metric == "memory-peak-bytes").unwrap();
    // Run 25 is the regression; from run 26 on 130 MiB is still above the
    // band of mostly-100 MiB runs, so each is flagged until the window
    // holds enough of them to widen it.
    assert_eq!(memory.runs[24].verdict, Verdict::Regression);
    assert!(memory.runs[..24].iter().all(|r| r.verdict != Verdict::Regression));
    let svg = show(&steps, ShowFormat::Svg);
    let doc = roxmltree::Document::parse(&svg).expect("the SVG is XML");
    let charts: Vec<_> = doc.descendants().filter(|n| n.attribute("class") == Some("stepmon-trend")).collect();
    assert_eq!(charts.len(), 2, "one chart per metric");
    let chart = charts
        .iter()
        .find(|c| c.descendants().any(|n| n.text().is_some_and(|t| t.contains("memory-peak-bytes"))))
        .unwrap();
    let class_of = |n: &roxmltree::Node<'_, '_>| n.attribute("class").unwrap_or_default().to_owned();
    let points: Vec<_> = chart.descendants().filter(|n| class_of(n).starts_with("point")).collect();
    assert_eq!(points.len(), 30);
    assert_eq!(class_of(&points[24]), "point regression");
    let hover = points[24].children().find(|n| n.has_tag_name("title")).unwrap().text().unwrap();
    assert!(hover.contains("commit c0ffee25") && hover.contains("regression"), "{hover}");
    assert!(hover.contains("130.0 MiB"), "{hover}");
    // The band starts where the baseline has its 5 runs (run 6).
    let band = chart.descendants().find(|n| class_of(n) == "band").expect("a band");
    let d = band.attribute("d").unwrap();
    assert_eq!(d.matches('M').count(), 1, "{d}");
    assert_eq!(d.matches('L').count() + 1, 2 * 25, "upper and lower edge of runs 6..30: {d}");
    // The band is drawn under run 25: its upper edge is below (a larger y
    // than) the point.
    let cy: f64 = points[24].attribute("cy").unwrap().parse().unwrap();
    let upper_at_25: f64 = d
        .split(['M', 'L'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .nth(19)
        .unwrap()
        .split(',')
        .nth(1)
        .unwrap()
        .trim_end_matches(" Z")
        .parse()
        .unwrap();
    assert!(upper_at_25 > cy, "band top {upper_at_25} vs point {cy}");
    let vertices = chart.descendants().find(|n| class_of(n) == "series value").unwrap().attribute("points").unwrap();
    assert_eq!(vertices.split(' ').count(), 30);
    // The busy run is marked on the CPU chart (and left out of its band).
    let cpu = charts.iter().find(|c| *c != chart).unwrap();
    let busy: Vec<_> = cpu.descendants().filter(|n| class_of(n) == "point busy").collect();
    assert_eq!(busy.len(), 1);
    assert!(busy[0].children().any(|n| n.text().is_some_and(|t| t.contains("c0ffee10") && t.contains("machine busy"))));
    let cpu_trend = steps[0].metrics.iter().find(|m| m.metric == "cpu-seconds").unwrap();
    assert!(cpu_trend.runs[10..].iter().all(|r| r.baseline.is_none_or(|b| b.upper < 2.0)), "busy run in a band");
}

#[test]
fn the_text_table_has_a_sparkline_of_the_last_runs() {
    let steps = trends(&stored(), &Policy::default(), &MetricFilter::parse("memory"), 8);
    assert_eq!(steps[0].metrics.len(), 1);
    let text = show(&steps, ShowFormat::Text);
    let row = text.lines().find(|l| l.trim_start().starts_with("memory-peak-bytes")).unwrap();
    // Runs 23..30: 100.2 and 99.8 MiB (23 % 3 = 2, 24 % 3 = 0), then six
    // at 130 MiB: the two lowest bars, then six of the highest.
    assert!(row.contains(" ▁▁██████ "), "{row}");
    assert!(row.contains(" 30 "), "30 runs in all: {row}");
    let json: serde_json::Value = serde_json::from_str(&show(&steps, ShowFormat::Json)).unwrap();
    assert_eq!(json[0]["metrics"][0]["runs"].as_array().unwrap().len(), 8);
}

#[test]
fn chromium_opens_the_html_page_without_a_console_message() {
    let Some(binary) = chromium::chromium_or_skip("chromium_opens_the_html_page_without_a_console_message") else {
        return;
    };
    let steps = trends(&stored(), &Policy::default(), &MetricFilter::All, 0);
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("baselines.html");
    std::fs::write(&page, show(&steps, ShowFormat::Html)).unwrap();
    let output = std::process::Command::new("timeout")
        .args(["-k", "5", "60"])
        .arg(binary)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check"])
        .args(["--disable-extensions", "--disable-background-networking", "--enable-logging=stderr", "--v=0"])
        .arg(format!("--user-data-dir={}", tmp.path().join("profile").display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let console: Vec<&str> = stderr.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "{console:#?}");
    let dom = String::from_utf8(output.stdout).unwrap();
    assert_eq!(dom.matches("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"stepmon-trend\"").count(), 2);
    assert_eq!(
        dom.matches("class=\"point regression\"").count(),
        steps[0].metrics.iter().map(|m| m.count(Verdict::Regression)).sum::<usize>()
    );
}
