//! What the report tests share: the recorded runs in `tests/data/runs/`
//! and the chart's series by polyline class.
#![allow(dead_code)] // each test file uses a part

pub(crate) mod bundle;
pub(crate) mod job;
pub(crate) mod markdown;
#[allow(unused_imports)] // each test file uses a part
pub(crate) use stepmon_testsupport::{chromium, skip};

use std::path::{Path, PathBuf};

use stepmon_report::Step;
use stepmon_report::series::{Point, StepSeries};

/// `tests/data/runs/`.
pub(crate) fn runs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/runs")
}

/// The one step of the recorded run `name` (`hybrid-exit7` or `hybrid-exit7.json`).
pub(crate) fn load(name: &str) -> Step {
    let file = if name.ends_with(".json") { name.to_owned() } else { format!("{name}.json") };
    let text = std::fs::read_to_string(runs_dir().join(&file)).expect("read run");
    let mut steps = stepmon_report::import::steps(&text).expect("import");
    assert_eq!(steps.len(), 1, "{file}");
    steps.remove(0)
}

/// Every recorded run: (file stem, its step), sorted by name.
pub(crate) fn runs() -> Vec<(String, Step)> {
    let mut stems: Vec<String> = std::fs::read_dir(runs_dir())
        .expect("tests/data/runs")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.file_stem().and_then(|s| s.to_str()).expect("name").to_owned())
        .collect();
    stems.sort();
    assert!(stems.len() >= 4, "expected the four recorded runs, found {stems:?}");
    stems.into_iter().map(|stem| (stem.clone(), load(&stem))).collect()
}

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
