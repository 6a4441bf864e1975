//! Timing: one criterion group per input file, ours and each applicable peer
//! as separate functions of the same group (see `stepmon_benches::cases`).
//!
//! `cargo bench -p stepmon-benches --bench parsers`, then `scripts/bench-table`.

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use stepmon_benches::cases::{GROUPS, Side, Sink};
use stepmon_benches::inputs::{Fixture, TmpDir};

struct Timing<'a, 'c> {
    group: &'a mut BenchmarkGroup<'c, WallTime>,
    fx: &'a Fixture,
}

impl Sink for Timing<'_, '_> {
    fn case<T: std::fmt::Debug>(&mut self, function: &'static str, _side: Side, run: impl Fn(&Fixture) -> T) {
        let fx = self.fx;
        // `black_box` on the fixture hides the input from the optimiser; criterion
        // black-boxes the result (and drops it inside the timed loop, so peers
        // pay for freeing what they allocated).
        self.group.bench_function(function, |b| b.iter(|| run(black_box(fx))));
    }
}

fn parsers(c: &mut Criterion) {
    let dir = TmpDir::new().expect("cannot create the tmpfs directory for the file-based cases");
    for g in GROUPS {
        let fx = Fixture::new(g.input, dir.path()).expect("cannot write the tmpfs copy");
        let mut group = c.benchmark_group(g.name);
        group.throughput(Throughput::Bytes(u64::try_from(g.input.bytes.len()).unwrap_or(u64::MAX)));
        g.cases(&mut Timing { group: &mut group, fx: &fx });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    // Modest times so the whole suite runs in a few minutes on 2 cores; the
    // command line (`-- --measurement-time 10`) can override them.
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = parsers
}
criterion_main!(benches);
