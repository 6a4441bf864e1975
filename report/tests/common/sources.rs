//! The runs measured without a cgroup of their own: a CPU-bound step
//! recorded on this repo's hybrid host inside a simulated container
//! (read-only cgroupfs: CPU and IO from the process tree, stall from the
//! root cgroup, i.e. the whole machine), beside the same workload recorded
//! in its own cgroup, and copies edited to hold an enclosing cgroup's
//! memory. Shared by report's and export's `tests/sources.rs`.
#![allow(dead_code)] // each test file uses a part

use std::path::Path;

use stepmon_model::document::RunDocument;
use stepmon_model::source::{Bound, EnclosingCgroup, Group, Rung, Source};

/// The step recorded inside a simulated container.
pub(crate) const CONTAINER: &str = "container-process-tree-cpu-3s.json";
/// The same workload in its own cgroup.
pub(crate) const OWN_CGROUP: &str = "hybrid-cpu-3s.json";

/// The recorded run `name` of `report/tests/data/runs/`.
pub(crate) fn document(name: &str) -> RunDocument {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/data/runs").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The container recording with an enclosing cgroup that accounts memory:
/// `memory.current` sampled at `currents` (bytes), `memory.peak` as given.
pub(crate) fn with_enclosing_memory(currents: &[u64], peaks: Option<(u64, u64)>, reset: Option<u64>) -> RunDocument {
    let mut doc = document(CONTAINER);
    let run = doc.stepmon.as_mut().unwrap();
    let enclosing = run.enclosing_cgroup.as_mut().unwrap();
    let mut e = EnclosingCgroup::default();
    e.cgroup = "/sys/fs/cgroup/docker/abc".into();
    e.other_processes_at_start = Some(3);
    e.memory_peak_since_start = reset;
    e.samples.clone_from(&enclosing.samples);
    let last = e.samples.len() - 1;
    for (i, sample) in e.samples.iter_mut().enumerate() {
        sample.stepmon.memory_current = Some(currents[i.min(currents.len() - 1)]);
        if let Some((first, end)) = peaks {
            let mut memory = sample.memory_stat.unwrap_or_default();
            memory.peak = Some(if i == last { end } else { first });
            sample.memory_stat = Some(memory);
        }
    }
    let bound = match (reset, peaks) {
        (Some(_), _) => Bound::Exact,
        (None, Some((first, end))) if end > first => Bound::Exact,
        _ => Bound::LowerBound,
    };
    *enclosing = e;
    let covers = enclosing.covers();
    run.sources.set(
        Group::Memory,
        Some(if bound == Bound::Exact {
            Source::exact(Rung::EnclosingCgroup, covers)
        } else {
            Source::lower_bound(Rung::EnclosingCgroup, covers)
        }),
    );
    doc
}
