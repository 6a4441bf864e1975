//! `cgroup.type`: `CgroupType::parse`, checked against `single::parse_text`
//! (known values map to their variant, anything else is `Other(text)`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::CgroupType;
use stepmon_cgroupfs_parse::format::single::parse_text;
use stepmon_fuzz::check_error;

fuzz_target!(|data: &[u8]| {
    match (CgroupType::parse(data), parse_text(data)) {
        (Ok(parsed), Ok(text)) => {
            let expected = match text {
                "domain" => CgroupType::Domain,
                "domain threaded" => CgroupType::DomainThreaded,
                "domain invalid" => CgroupType::DomainInvalid,
                "threaded" => CgroupType::Threaded,
                other => CgroupType::Other(other),
            };
            assert_eq!(parsed, expected);
        }
        (Err(err), Err(expected)) => {
            assert_eq!(err, expected);
            check_error(data, &err);
        }
        (parsed, text) => panic!("CgroupType gave {parsed:?}, parse_text gave {text:?}"),
    }
});
