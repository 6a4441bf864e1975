//! The HTML export of every recorded run, rendered by a real browser:
//! headless Chromium (Debian's `chromium`).
//!
//! 1. `--dump-dom` of the page as written: the DOM Chromium built holds one
//!    `svg.stepmon-chart` per step, the series polylines, the verdict lists,
//!    and a hostile step name as text, not as a `<script>`.
//! 2. `--dump-dom` of a copy with a measuring script added by this test (the
//!    export itself has none, and its Content-Security-Policy would block
//!    one, so the copy drops that meta tag): the SVG elements are in the SVG
//!    namespace and laid out — each polyline has the series' number of
//!    vertices and a non-empty bounding box, tick labels have a rendered
//!    width.
//! 3. `--screenshot` of the page as written: a PNG of the window's size, far
//!    larger than the screenshot of an empty page of the same size (text and
//!    charts were painted).
//!
//! Chromium runs under `timeout -k 5 60` (which kills its whole process
//! group) with a throwaway `--user-data-dir`. Without `chromium` on `PATH`
//! (or `STEPMON_CHROMIUM`) the test prints `SKIPPED: ...` and returns, unless
//! `STEPMON_REQUIRE_LIVE=1`, when it fails.

mod common;

use std::time::Instant;

use common::chromium::{Chromium, WINDOW, chromium_or_skip};

use stepmon_export::html;
use stepmon_report::Step;
use stepmon_report::series::StepSeries;

fn steps() -> Vec<Step> {
    let mut steps: Vec<Step> = common::runs::runs().into_iter().map(|(_, step)| step).collect();
    assert!(steps.len() >= 4, "expected the four recorded runs");
    // The same pure-v2 run once more under a hostile name.
    let mut hostile = steps.iter().find(|s| !StepSeries::of(s).memory_bytes.is_empty()).expect("pure-v2 run").clone();
    hostile.name = "<script>document.title='pwned'</script> & \"x\"".to_owned();
    steps.push(hostile);
    steps
}

/// Where the measuring script puts its JSON in the DOM.
const CHECK_ID: &str = "stepmon-check";

/// Measures the charts as laid out and writes the result into the page.
const MEASURE: &str = r"<script>
(function () {
  const result = { sections: document.querySelectorAll('section.step').length, charts: [] };
  for (const svg of document.querySelectorAll('svg.stepmon-chart')) {
    const box = svg.getBoundingClientRect();
    const chart = { ns: svg.namespaceURI, width: box.width, height: box.height, series: [],
      verdicts: svg.closest('section').querySelectorAll('ul.verdicts > li').length,
      notMeasured: svg.querySelectorAll('text.not-measured').length,
      ticksDrawn: Array.from(svg.querySelectorAll('text.tick')).filter(t => t.getComputedTextLength() > 0).length };
    for (const line of svg.querySelectorAll('polyline.series')) {
      const b = line.getBBox();
      chart.series.push({ class: line.getAttribute('class'), points: line.points.numberOfItems,
        width: b.width, height: b.height, length: line.getTotalLength() });
    }
    result.charts.push(chart);
  }
  const pre = document.createElement('pre');
  pre.id = 'stepmon-check';
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
})();
</script>";

/// The series of `step` by polyline class, as the chart draws them.
fn expected_series(step: &Step) -> Vec<(String, usize, bool)> {
    let s = StepSeries::of(step);
    let all = common::series_by_class(&s);
    all.iter()
        .filter(|(_, points)| !points.is_empty())
        .map(|(class, points)| {
            // A line through points at two different times has a length.
            let spans_time = points.iter().any(|p| (p.t - points[0].t).abs() > 1e-3);
            (format!("series {class}"), points.len(), spans_time)
        })
        .collect()
}

fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let be = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().expect("4 bytes"));
    assert_eq!(&png[12..16], b"IHDR");
    (be(16), be(20))
}

#[test]
fn chromium_renders_the_html_report() {
    let Some(binary) = chromium_or_skip("chromium_renders_the_html_report") else { return };
    let started = Instant::now();
    // Removed on drop, also when an assertion fails.
    let tmp = tempfile::Builder::new().prefix("stepmon-html-").tempdir().expect("create temp dir");
    let chromium = Chromium::new(binary, tmp.path().join("profile"));
    let steps = steps();
    let page = html::render(&steps);
    let report = tmp.path().join("report.html");
    std::fs::write(&report, &page).expect("write report");

    // 1. The DOM of the page as written.
    let dom = chromium.dump_dom(&report);
    assert_eq!(dom.matches("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"stepmon-chart\"").count(), steps.len());
    assert_eq!(dom.matches("<ul class=\"verdicts\">").count(), steps.len());
    assert!(dom.contains("<polyline class=\"series cpu\""));
    assert!(dom.contains("<polyline class=\"series memory\""));
    assert!(!dom.contains("<script"), "a step name became a script element");
    assert!(dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt; &amp; \"x\""));
    assert!(!dom.contains("<title>pwned</title>"));

    // 2. The charts as laid out, measured by a script in a copy of the page.
    let csp = format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">", html::CSP);
    assert!(page.contains(&csp), "the page declares its CSP");
    let measured = page.replace(&csp, "").replace("</body>", &format!("{MEASURE}\n</body>"));
    let measured_path = tmp.path().join("measured.html");
    std::fs::write(&measured_path, measured).expect("write measured copy");
    let dom = chromium.dump_dom(&measured_path);
    let start = dom.find(&format!("<pre id=\"{CHECK_ID}\">")).expect("the measuring script ran") + CHECK_ID.len() + 11;
    let end = start + dom[start..].find("</pre>").expect("</pre>");
    let json = dom[start..end].replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    let result: serde_json::Value = serde_json::from_str(&json).expect("measurements are JSON");
    assert_eq!(result["sections"], steps.len());
    let charts = result["charts"].as_array().expect("charts");
    assert_eq!(charts.len(), steps.len());
    for (chart, step) in charts.iter().zip(&steps) {
        let name = &step.name;
        assert_eq!(chart["ns"], "http://www.w3.org/2000/svg", "{name}");
        let (w, h) = (chart["width"].as_f64().expect("width"), chart["height"].as_f64().expect("height"));
        assert!(w >= 700.0 && h >= 300.0, "{name}: chart laid out at {w}×{h}");
        assert_eq!(chart["verdicts"].as_u64(), Some(step.verdicts().sentences().len() as u64), "{name}");
        assert!(chart["ticksDrawn"].as_u64().expect("ticks") >= 8, "{name}: {chart}");
        let series = StepSeries::of(step);
        let missing = u64::from(series.memory_bytes.is_empty()) + u64::from(series.cpu_cores.is_empty());
        assert_eq!(chart["notMeasured"].as_u64(), Some(missing), "{name}");
        let drawn = chart["series"].as_array().expect("series");
        let expected = expected_series(step);
        assert_eq!(drawn.len(), expected.len(), "{name}: {drawn:?} vs {expected:?}");
        for (class, points, spans_time) in expected {
            let line = drawn.iter().find(|l| l["class"] == class.as_str()).unwrap_or_else(|| panic!("{name}: {class}"));
            assert_eq!(line["points"].as_u64(), Some(points as u64), "{name}: {class}");
            let (bw, length) = (line["width"].as_f64().expect("w"), line["length"].as_f64().expect("length"));
            assert!(bw.is_finite() && length.is_finite(), "{name}: {class} {line}");
            if spans_time {
                assert!(bw > 1.0 && length > 1.0, "{name}: {class} drawn with no extent: {line}");
            }
        }
    }

    // 3. Pixels: the report against an empty page of the same size.
    let shot = chromium.screenshot(&report, &tmp.path().join("report.png"));
    let blank_page = tmp.path().join("blank.html");
    std::fs::write(&blank_page, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body></body></html>")
        .expect("write blank");
    let blank = chromium.screenshot(&blank_page, &tmp.path().join("blank.png"));
    assert_eq!(png_size(&shot), WINDOW);
    assert_eq!(png_size(&blank), WINDOW);
    eprintln!("screenshot {} bytes, empty page {} bytes", shot.len(), blank.len());
    assert!(shot.len() > 5 * blank.len(), "the report painted little: {} vs {} bytes", shot.len(), blank.len());
    eprintln!("chromium checks took {:.1} s in all", started.elapsed().as_secs_f64());
}
