//! `cpu.stat`, `cpu.stat.local` and `cpu.max`: `CpuStat::parse`,
//! `CpuStatLocal::parse` (checked against the FlatKeyed model, incl. `get`,
//! `iter`, `KEYS`) and `CpuMax::parse` (checked against its halves and a
//! print/re-parse round trip).
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::{CpuMax, CpuStat, CpuStatLocal, Limit};
use stepmon_fuzz::{check_error, check_flat};

fuzz_target!(|data: &[u8]| {
    check_flat::<CpuStat>(data);
    check_flat::<CpuStatLocal>(data);

    match CpuMax::parse(data) {
        Ok(max) => {
            // One line: `QUOTA PERIOD`, each half valid on its own.
            let line = data.strip_suffix(b"\n").unwrap_or(data);
            assert!(!line.contains(&b'\n'));
            let space = line.iter().position(|&b| b == b' ').expect("a parsed cpu.max has a space");
            assert_eq!(Limit::parse_token(&line[..space]), Ok(max.quota_usec));
            assert_eq!(stepmon_cgroupfs_parse::number::parse_u64(&line[space + 1..]), Ok(max.period_usec));
            assert_eq!(max.quota_usec.is_max(), max.quota_usec.value().is_none());
            let quota = match max.quota_usec {
                Limit::Max => "max".to_owned(),
                Limit::Value(v) => v.to_string(),
            };
            let printed = format!("{quota} {}\n", max.period_usec);
            assert_eq!(CpuMax::parse(printed.as_bytes()), Ok(max));
        }
        Err(err) => check_error(data, &err),
    }
});
