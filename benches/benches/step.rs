//! Timing of the step sample: `CgroupProbe` against the floor,
//! open/read/close and cgroups-rs, on a pure-v2 copy on tmpfs and on a
//! real child cgroup (root needed, else skipped with the reason)
//! (see `stepmon_benches::step`).
//!
//! `cargo bench -p stepmon-benches --bench step`, then `scripts/bench-table`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main};
use stepmon_benches::runner::{PAIR_BLOCK, PAIR_SCALE_NS, Runner, Side};
use stepmon_benches::step::GROUPS;

struct Timing<'a, 'c> {
    group: &'a mut BenchmarkGroup<'c, WallTime>,
}

impl Runner for Timing<'_, '_> {
    fn case<T: std::fmt::Debug>(&mut self, function: &'static str, _side: Side, mut run: impl FnMut() -> T) {
        // criterion black-boxes the result and drops it inside the timed loop,
        // so the peers pay for freeing what they allocated.
        self.group.bench_function(function, |b| b.iter(|| black_box(run())));
    }

    fn paired<A: std::fmt::Debug, B: std::fmt::Debug>(
        &mut self,
        function: &'static str,
        mut a: impl FnMut() -> A,
        mut b: impl FnMut() -> B,
    ) {
        self.group.bench_function(function, |bencher| {
            bencher.iter_custom(|iters| {
                let (mut time_a, mut time_b) = (Duration::ZERO, Duration::ZERO);
                let mut left = iters;
                while left > 0 {
                    let n = left.min(PAIR_BLOCK);
                    let start = Instant::now();
                    for _ in 0..n {
                        black_box(a());
                    }
                    time_a += start.elapsed();
                    let start = Instant::now();
                    for _ in 0..n {
                        black_box(b());
                    }
                    time_b += start.elapsed();
                    left -= n;
                }
                // The ratio, scaled, as the "time" of every iteration.
                let ratio = time_a.as_secs_f64() / time_b.as_secs_f64().max(f64::MIN_POSITIVE);
                Duration::from_secs_f64(ratio * PAIR_SCALE_NS * 1e-9 * iters as f64)
            })
        });
    }
}

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
