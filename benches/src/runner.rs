//! How the whole-machine, network and step-probe benches hand their cases to
//! the timing bench (`benches/system.rs`, `benches/step.rs`), the allocation
//! count (`benches/system_allocs.rs`) and the unit tests.
//!
//! Unlike [`crate::cases::Sink`], whose cases parse one fixed input, a case
//! here is any `FnMut` closure owning its state (a probe, held fds, a reused
//! buffer), so probes that need `&mut self` can be timed the same way.

use std::fmt::Debug;
use std::hint::black_box;

pub use crate::cases::Side;

/// Receives the cases of one group, in report order.
pub trait Runner {
    /// One case: `function` names it inside its group. Generic over the
    /// closure so each case is monomorphised and inlined into the timing
    /// loop. The result is `Debug` so tests can check no case fails.
    fn case<T: Debug>(&mut self, function: &'static str, side: Side, run: impl FnMut() -> T);

    /// A ratio measured by interleaving: `a` and `b` alternate in blocks of
    /// [`PAIR_BLOCK`] calls, so both see the same background load, and the
    /// timing bench reports `time(a) / time(b)` × [`PAIR_SCALE_NS`] as the
    /// "time" per iteration (so `median ns / 10,000` is the ratio). Only the
    /// timing bench implements it; elsewhere both run once (tests) or not at all.
    fn paired<A: Debug, B: Debug>(&mut self, function: &'static str, a: impl FnMut() -> A, b: impl FnMut() -> B) {
        let _ = (function, a, b);
    }

    /// The group cannot run here (no root, no cgroup v2, ...): says why.
    fn skip(&mut self, group: &'static str, reason: &str) {
        eprintln!("SKIPPED {group}: {reason}");
    }
}

/// Calls of each side per block of a [`Runner::paired`] measurement.
pub const PAIR_BLOCK: u64 = 8;

/// What a ratio of 1 is reported as by [`Runner::paired`], in ns per
/// iteration: close to the real cost of one `a` + `b` call pair, so
/// criterion's choice of iteration counts (from the reported times) keeps
/// the run near its measurement time.
pub const PAIR_SCALE_NS: f64 = 10_000.0;

/// A benchmark group of [`crate::system`] or [`crate::step`].
#[derive(Debug, Clone, Copy)]
pub struct GroupInfo {
    /// Criterion group name.
    pub name: &'static str,
    /// What every case of the group reads (a file under `data/`, or a live
    /// directory), as written to the allocation report.
    pub file: &'static str,
    /// Whether our cases in this group must not allocate (the parsers); the
    /// probes build owned samples and are only counted.
    pub zero_alloc: bool,
}

/// Hides a parsed value from the optimiser (for results that borrow a
/// reused buffer and so cannot be returned from the case).
#[inline]
pub fn keep<T>(value: T) {
    let _ = black_box(value);
}

/// A [`Runner`] for unit tests: runs every case once (a pair as both
/// sides once), fails on a result that reads `Err(`, and records each
/// function with its result's `Debug` text and whether the group skipped.
#[derive(Debug)]
pub struct CheckRunner {
    /// The group, for messages.
    pub group: &'static str,
    /// Every function run, in order, with its result's `Debug` text.
    pub seen: Vec<(&'static str, String)>,
    /// Whether the group said it cannot run here.
    pub skipped: bool,
}

impl CheckRunner {
    /// A runner for `group`.
    #[must_use]
    pub fn new(group: &'static str) -> Self {
        CheckRunner { group, seen: Vec::new(), skipped: false }
    }

    /// Whether `function` ran.
    #[must_use]
    pub fn ran(&self, function: &str) -> bool {
        self.seen.iter().any(|(f, _)| *f == function)
    }
}

impl Runner for CheckRunner {
    fn case<T: Debug>(&mut self, function: &'static str, _side: Side, mut run: impl FnMut() -> T) {
        let text = format!("{:?}", run());
        assert!(!text.contains("Err("), "{}/{function}: {text}", self.group);
        self.seen.push((function, text));
    }

    fn paired<A: Debug, B: Debug>(
        &mut self,
        function: &'static str,
        mut a: impl FnMut() -> A,
        mut b: impl FnMut() -> B,
    ) {
        self.case(function, Side::Ours, || (a(), b()));
    }

    /// Skips as every live test does: fails instead under
    /// `STEPMON_REQUIRE_LIVE=1`.
    fn skip(&mut self, group: &'static str, reason: &str) {
        crate::test_skip::skip(group, reason);
        self.skipped = true;
    }
}
