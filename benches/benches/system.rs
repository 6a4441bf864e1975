//! Timing of the whole-machine and network parsers (ours next to
//! procfs-core and fb_procfs on the same bytes / files) and of the system
//! probe on the live `/proc` against the bare-`pread` floor
//! (see `stepmon_benches::system`).
//!
//! `cargo bench -p stepmon-benches --bench system`, then `scripts/bench-table`.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use stepmon_benches::system::GROUPS;
use stepmon_benches::timing::Timing;

fn system(c: &mut Criterion) {
    for g in GROUPS {
        let mut group = c.benchmark_group(g.info.name);
        g.cases(&mut Timing { group: &mut group }).expect("cannot set up the group");
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = system
}
criterion_main!(benches);
