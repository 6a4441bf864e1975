//! Benchmarks live in `benches/`; see the README for how to run them.
