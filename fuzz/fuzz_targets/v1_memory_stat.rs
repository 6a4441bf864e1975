//! v1 `memory.stat`: `v1::MemoryStatV1::parse`, `parse_into`, `get`,
//! `iter`, `KEYS` (checked against the FlatKeyed model) and the
//! `hierarchical_*_limit()` accessors (checked against `limit_from_bytes`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::v1::{MemoryStatV1, limit_from_bytes};
use stepmon_fuzz::check_flat;

fuzz_target!(|data: &[u8]| {
    if let Some(m) = check_flat::<MemoryStatV1>(data) {
        assert_eq!(m.hierarchical_memory_limit(), m.hierarchical_memory_limit.map(limit_from_bytes));
        assert_eq!(m.hierarchical_memsw_limit(), m.hierarchical_memsw_limit.map(limit_from_bytes));
    }
});
