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
pub(crate) use stepmon_testsupport::{chromium, skip};

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

/// A Python that can `import module`: `$STEPMON_PYTHON`, `python3`, then
/// `/usr/bin/python3` (a pyenv `python3` on PATH may lack Debian's packages).
pub(crate) fn python_with(module: &str) -> Option<String> {
    let candidates =
        std::env::var("STEPMON_PYTHON").into_iter().chain(["python3".to_owned(), "/usr/bin/python3".to_owned()]);
    candidates.into_iter().find(|python| {
        std::process::Command::new(python)
            .args(["-c", &format!("import {module}")])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// Feeds `text` to `program args` on stdin: (success, stdout, stderr) — how
/// the tests hand an export to its real consumer (promtool, a Python parser).
pub(crate) fn pipe(program: &str, args: &[&str], text: &str) -> (bool, Vec<u8>, String) {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.success(), out.stdout, String::from_utf8_lossy(&out.stderr).into())
}
