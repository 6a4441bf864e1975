//! Criterion benchmarks of the stepmon parsers side by side with peer crates
//! on the same bytes, and an allocation count per parse. See the README.
//!
//! The library holds the inputs ([`inputs`]) and the list of cases per input
//! file ([`cases`]); `benches/parsers.rs` times them with criterion and
//! `benches/allocs.rs` counts their allocations, so both run the same code.
//!
//! The whole-machine, network and probe benches work the same way with
//! closures that own their state ([`runner`]): [`system`] (`/proc/stat`,
//! `meminfo`, `loadavg`, `/proc/net/dev`, the system probe) and [`step`]
//! (one step sample of a cgroup), timed by `benches/system.rs` and
//! `benches/step.rs`, counted by `benches/system_allocs.rs`, measured
//! against the bare-`pread` floor of [`floor`].

pub mod alloc_report;
pub mod cases;
pub mod floor;
pub mod inputs;
pub mod runner;
pub mod step;
pub mod system;
pub mod timing;

/// How a live test says it cannot run here (shared by the workspace's tests):
/// [`runner::CheckRunner`] skips through it.
use stepmon_testsupport::skip as test_skip;
