//! What the export tests share: the recorded runs, job records, the
//! chart's series by polyline class, and the real consumers of the formats
//! (Chromium, a CommonMark parser, Python's parsers).
#![allow(dead_code)] // each test file uses a part

#[path = "../../../report/tests/common/job.rs"]
pub(crate) mod job;
pub(crate) mod markdown;
#[path = "../../../report/tests/common/runs.rs"]
pub(crate) mod runs;
#[allow(unused_imports)] // each test file uses a part
pub(crate) use stepmon_testsupport::{
    chromium,
    consumers::{openmetrics_python_or_skip, pipe, python_with},
    skip,
};

use stepmon_report::series::{Point, StepSeries};

/// Every series the chart may draw, by the class of its polyline.
pub(crate) fn series_by_class(s: &StepSeries) -> Vec<(&'static str, &Vec<Point>)> {
    vec![
        ("memory", &s.memory_bytes),
        ("memory-anon", &s.memory_anon_bytes),
        ("memory-file", &s.memory_file_bytes),
        ("cpu", &s.cpu_cores),
        ("cpu-stall", &s.cpu_stall_share),
        ("memory-stall", &s.memory_stall_share),
        ("io-stall", &s.io_stall_share),
        ("machine-busy", &s.machine_cpu_busy_share),
        ("machine-cpu-stall", &s.machine_cpu_stall_share),
    ]
}

/// What a measuring `script` (it writes JSON into `pre#stepmon-check`)
/// found in `page` as Chromium laid it out: a copy of the page with the
/// script added, written to `dir`, without the Content-Security-Policy
/// that blocks it (the page itself has no script).
pub(crate) fn measured(
    chromium: &chromium::Chromium,
    page: &str,
    script: &str,
    dir: &std::path::Path,
) -> serde_json::Value {
    let csp = format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">", stepmon_export::html::CSP);
    assert!(page.contains(&csp), "the page declares its CSP");
    let copy = dir.join("measured.html");
    std::fs::write(&copy, page.replace(&csp, "").replace("</body>", &format!("{script}\n</body>"))).expect("write");
    let dom = chromium.dump_dom(&copy);
    let from = dom.find("<pre id=\"stepmon-check\">").expect("the script ran") + "<pre id=\"stepmon-check\">".len();
    let json = dom[from..from + dom[from..].find("</pre>").expect("</pre>")]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).expect("the measurements are JSON")
}
