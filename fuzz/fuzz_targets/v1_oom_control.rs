//! `memory.oom_control`: `v1::OomControl::parse`, `parse_into`, `get`,
//! `iter`, `KEYS` (checked against the FlatKeyed model) and the flag
//! accessors.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::v1::OomControl;
use stepmon_fuzz::check_flat;

fuzz_target!(|data: &[u8]| {
    if let Some(o) = check_flat::<OomControl>(data) {
        assert_eq!(o.oom_kill_disabled(), o.oom_kill_disable.map(|v| v != 0));
        assert_eq!(o.is_under_oom(), o.under_oom.map(|v| v != 0));
    }
});
