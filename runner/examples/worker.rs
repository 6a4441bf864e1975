//! A worker of known memory and CPU, for the parallelism advice's tests
//! (cli/tests/advice_live.rs), on the host and in the VM tier's guest
//! (static, no interpreter to start): it holds MIB MiB, every page
//! written, for SECONDS, asleep; with `burn`, computing until it has used
//! SECONDS of its own CPU time (so that many at once on few CPUs queue for
//! them).
//!
//! `worker MIB SECONDS [burn]`, e.g. `worker 120 1` or `worker 120 0.5 burn`.

use std::time::{Duration, Instant};

const MIB: usize = 1 << 20;

/// The CPU time this process has used (all its threads).
#[cfg(target_os = "linux")]
fn own_cpu(_started: Instant) -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(u64::try_from(t.tv_sec).unwrap_or(0), u32::try_from(t.tv_nsec).unwrap_or(0))
}

/// Off Linux (the example only has to build there): the wall time since
/// the start, as if never queued.
#[cfg(not(target_os = "linux"))]
fn own_cpu(started: Instant) -> Duration {
    started.elapsed()
}

fn usage() -> ! {
    eprintln!("usage: worker MIB SECONDS [burn]");
    std::process::exit(2);
}

fn main() {
    let started = Instant::now();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mib, seconds, burn) = match args.as_slice() {
        [mib, seconds] => (mib, seconds, false),
        [mib, seconds, verb] if verb == "burn" => (mib, seconds, true),
        _ => usage(),
    };
    let mib: usize = mib.parse().unwrap_or_else(|_| usage());
    let seconds: f64 = seconds.parse().unwrap_or_else(|_| usage());
    let span = Duration::try_from_secs_f64(seconds).unwrap_or_else(|_| usage());
    // Written, not zeroed: a zeroed allocation would not be resident.
    let mut memory = vec![1u8; mib * MIB];
    if burn {
        // Rewrites the memory while it computes, so that none of it can be
        // reclaimed as untouched, and reads the clock every 64 KiB.
        const CHUNK: usize = 64 << 10;
        let mut sum = 0u64;
        let mut at = 0;
        while own_cpu(started) < span {
            let end = (at + CHUNK).min(memory.len());
            for byte in &mut memory[at..end] {
                *byte = byte.wrapping_mul(31).wrapping_add(7);
                sum = sum.wrapping_add(u64::from(*byte));
            }
            at = if end == memory.len() { 0 } else { end };
        }
        std::hint::black_box(sum);
    } else {
        std::thread::sleep(span);
    }
    std::hint::black_box(&memory);
}
