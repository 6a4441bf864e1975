//! Reads the step sample of `data/pure-v2-step/` (copied to tmpfs) N times
//! with `CgroupProbe::read`, for counting instructions per sample with
//! callgrind: `scripts/callgrind-step` runs it and divides. Instruction
//! counts do not depend on what else the machine is doing, so they show a
//! change of our user-space cost that a criterion run on a noisy machine
//! cannot; the timings and ratios in the README still come from criterion.
//!
//! `probe_instructions [N] [fake|captured]` (default 1000 samples of the
//! hand-made `data/pure-v2-step/`; `captured` reads `data/captured-v2-6.1/`);
//! prints how many samples had a `memoryStat`, so the work cannot be
//! optimised away.

use std::hint::black_box;

use jiff::Timestamp;
use stepmon_benches::inputs::TmpDir;
use stepmon_benches::step::{CAPTURED_V2_STEP, PURE_V2_STEP, write_files};
use stepmon_sampler::cgroup::CgroupProbe;

fn main() -> std::io::Result<()> {
    let samples: usize = match std::env::args().nth(1) {
        Some(n) => n.parse().map_err(|e| std::io::Error::other(format!("N: {e}")))?,
        None => 1000,
    };
    let files = match std::env::args().nth(2).as_deref() {
        None | Some("fake") => PURE_V2_STEP,
        Some("captured") => CAPTURED_V2_STEP,
        Some(other) => return Err(std::io::Error::other(format!("unknown file set {other} (fake or captured)"))),
    };
    let dir = TmpDir::new()?;
    write_files(dir.path(), files)?;
    let mut probe = CgroupProbe::open(dir.path())?;
    let mut with_memory = 0usize;
    for _ in 0..samples {
        let sample = probe.read(Timestamp::UNIX_EPOCH);
        with_memory += usize::from(black_box(&sample).memory_stat.is_some());
    }
    println!("{with_memory} of {samples} samples had a memoryStat");
    Ok(())
}
