//! The recorded runs in `report/tests/data/runs/` (this host and a pure
//! cgroup v2 VM), each one `stepmon run` document: the input of the tests
//! of every crate that shows a step (`#[path]`-included from theirs).
#![allow(dead_code)] // each test file uses a part

use std::path::{Path, PathBuf};

use stepmon_model::document::RunDocument;
use stepmon_report::Step;

/// `report/tests/data/runs/`.
pub(crate) fn runs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/data/runs")
}

/// The one step of the recorded run `name` (`hybrid-exit7` or `hybrid-exit7.json`).
pub(crate) fn load(name: &str) -> Step {
    let file = if name.ends_with(".json") { name.to_owned() } else { format!("{name}.json") };
    let text = std::fs::read_to_string(runs_dir().join(&file)).expect("read run");
    let document: RunDocument = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    Step::from_run(&document)
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
