//! `Pressure::parse` (and `StallDelta`) allocate nothing: measured with
//! `allocation_counter::measure`, whose `#[global_allocator]` (linked only
//! into this test binary) counts the current thread's allocations, including
//! reallocations. A control test shows the counter can fail.
//!
//! (A hand-written counting allocator would need `unsafe impl GlobalAlloc`,
//! which the workspace's `unsafe_code = "forbid"` rejects even in tests.)

use std::hint::black_box;
use std::time::Duration;

use allocation_counter::measure;
use stepmon_psi::{Pressure, StallDelta};

const CPU: &[u8] = include_bytes!("data/hybrid-6.18/proc_pressure_cpu.txt");
const ROOT_CPU: &[u8] = include_bytes!("data/hybrid-6.18/cgroup2_root_cpu.pressure.txt");
const MEMORY: &[u8] = include_bytes!("data/pure-v2-handmade/memory.pressure");

#[test]
#[allow(clippy::vec_init_then_push)] // the push is the allocation under test
fn control_the_counter_sees_one_vec_push() {
    let info = measure(|| {
        let mut v: Vec<u8> = Vec::new();
        v.push(1);
        black_box(&v);
    });
    assert_eq!(info.count_total, 1, "{info:?}");
}

#[test]
fn pressure_parse_and_delta_do_not_allocate() {
    let mut out = None;
    let info = measure(|| {
        let before = Pressure::parse(black_box(CPU)).unwrap();
        let after = Pressure::parse(black_box(ROOT_CPU)).unwrap();
        let memory = Pressure::parse(black_box(MEMORY)).unwrap();
        let delta = StallDelta::between(&before, &after, Duration::from_millis(10));
        let error = Pressure::parse(black_box(b"some avg10=1.234\n")).is_err();
        out = Some((
            after.some.and_then(|l| l.total_usec),
            memory.full.and_then(|l| l.avg10),
            delta.some_usec,
            delta.some_percent_of_wall(),
            error,
        ));
    });
    assert_eq!(info.count_total, 0, "{info:?}");
    let (total, avg10, delta, percent, error) = out.unwrap();
    assert_eq!((total, avg10.map(|h| h.0), delta, error), (Some(3_220_430), Some(8001), Some(351), true));
    assert!((percent.unwrap() - 3.51).abs() < 1e-9);
}
