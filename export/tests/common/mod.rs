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
    consumers::{pipe, python_with},
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
