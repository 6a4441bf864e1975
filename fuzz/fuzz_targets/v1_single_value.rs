//! v1 single values: `v1::limit_in_bytes` (checked against
//! `single::parse_u64` + `limit_from_bytes`) and `v1::cfs_quota_us`
//! (checked against `number::parse_i64` of the only line and a
//! print/re-parse round trip).
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::format::single::{Limit, parse_u64};
use stepmon_cgroupfs_parse::v1::{UNLIMITED_BYTES_MIN, cfs_quota_us, limit_from_bytes, limit_in_bytes};
use stepmon_fuzz::check_error;

fuzz_target!(|data: &[u8]| {
    let limit = limit_in_bytes(data);
    assert_eq!(limit, parse_u64(data).map(limit_from_bytes));
    match limit {
        Ok(Limit::Max) => assert!(parse_u64(data).unwrap() >= UNLIMITED_BYTES_MIN),
        Ok(Limit::Value(v)) => assert!(v < UNLIMITED_BYTES_MIN),
        Err(err) => check_error(data, &err),
    }

    match cfs_quota_us(data) {
        Ok(quota) => {
            let line = data.strip_suffix(b"\n").unwrap_or(data);
            let value = stepmon_cgroupfs_parse::number::parse_i64(line).expect("a parsed quota is one i64");
            assert_eq!(quota == Limit::Max, value == -1);
            let printed = match quota {
                Limit::Max => "-1".to_owned(),
                Limit::Value(v) => v.to_string(),
            };
            assert_eq!(cfs_quota_us(printed.as_bytes()), Ok(quota));
        }
        Err(err) => check_error(data, &err),
    }
});
