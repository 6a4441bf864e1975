//! Timing of the step sample: `CgroupProbe` against the floor,
//! open/read/close and cgroups-rs, on a pure-v2 copy on tmpfs and on a
//! real child cgroup (root needed, else skipped with the reason)
//! (see `stepmon_benches::step`).
//!
//! `cargo bench -p stepmon-benches --bench step`, then `scripts/bench-table`.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use stepmon_benches::step::GROUPS;
use stepmon_benches::timing::Timing;

fn step(c: &mut Criterion) {
    for g in GROUPS {
        let mut group = c.benchmark_group(g.info.name);
        g.cases(&mut Timing { group: &mut group }).expect("cannot set up the group");
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = step
}
criterion_main!(benches);
