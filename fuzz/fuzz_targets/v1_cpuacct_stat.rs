//! `cpuacct.stat`: `v1::CpuacctStat::parse`, `parse_into`, `get`, `iter`,
//! `KEYS`, checked against the FlatKeyed model.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::v1::CpuacctStat;
use stepmon_fuzz::check_flat;

fuzz_target!(|data: &[u8]| {
    check_flat::<CpuacctStat>(data);
});
