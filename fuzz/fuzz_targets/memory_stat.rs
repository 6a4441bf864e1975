//! `memory.stat`: `MemoryStat::parse`, `get`, `iter` and `KEYS`, checked
//! against the FlatKeyed model.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::MemoryStat;
use stepmon_fuzz::check_flat;

fuzz_target!(|data: &[u8]| {
    check_flat::<MemoryStat>(data);
});
