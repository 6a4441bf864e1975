//! v1 `cpu.stat` and `cpu.stat.local`: `v1::CpuStatV1` (C `int` counters
//! for `nr_*`) and `v1::CpuStatLocalV1` (`parse`, `parse_into`, `get`,
//! `iter`, `KEYS`), checked against the FlatKeyed model.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::v1::{CpuStatLocalV1, CpuStatV1};
use stepmon_fuzz::check_flat;

fuzz_target!(|data: &[u8]| {
    check_flat::<CpuStatV1>(data);
    check_flat::<CpuStatLocalV1>(data);
});
