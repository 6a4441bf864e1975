//! Criterion benchmarks of the stepmon parsers side by side with peer crates
//! on the same bytes, and an allocation count per parse. See the README.
//!
//! The library holds the inputs ([`inputs`]) and the list of cases per input
//! file ([`cases`]); `benches/parsers.rs` times them with criterion and
//! `benches/allocs.rs` counts their allocations, so both run the same code.

pub mod cases;
pub mod inputs;
