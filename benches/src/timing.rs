//! The criterion side of [`Runner`], shared by the `system` and `step` benches.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::BenchmarkGroup;
use criterion::measurement::WallTime;

use crate::runner::{PAIR_BLOCK, PAIR_SCALE_NS, Runner, Side};

/// Runs a group's cases as criterion benchmarks; paired cases are timed in
/// interleaved blocks and reported as their ratio (see [`PAIR_SCALE_NS`]).
pub struct Timing<'a, 'c> {
    /// The criterion group the cases go to.
    pub group: &'a mut BenchmarkGroup<'c, WallTime>,
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
