//! `cgroup.events`: `CgroupEvents::parse`, checked against the FlatKeyed
//! model (last `populated`/`frozen` wins, values must be `0`/`1`, unknown
//! keys ignored, same error on malformed input).
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::CgroupEvents;
use stepmon_cgroupfs_parse::format::flat::FlatKeyed;
use stepmon_cgroupfs_parse::{ErrorKind, ParseError};
use stepmon_fuzz::check_error;

fn flag(value: &[u8]) -> Result<bool, ErrorKind> {
    match value {
        b"0" => Ok(false),
        b"1" => Ok(true),
        _ => Err(ErrorKind::InvalidFlag),
    }
}

fn model(data: &[u8]) -> Result<(Option<bool>, Option<bool>), ParseError> {
    let (mut populated, mut frozen) = (None, None);
    for entry in FlatKeyed::new(data) {
        let entry = entry?;
        match entry.key {
            "populated" => populated = Some(entry.convert(flag)?),
            "frozen" => frozen = Some(entry.convert(flag)?),
            _ => {}
        }
    }
    Ok((populated, frozen))
}

fuzz_target!(|data: &[u8]| {
    let parsed = CgroupEvents::parse(data);
    match (parsed, model(data)) {
        (Ok(events), Ok((populated, frozen))) => {
            assert_eq!((events.populated, events.frozen), (populated, frozen));
        }
        (Err(err), Err(expected)) => {
            assert_eq!(err, expected);
            check_error(data, &err);
        }
        (parsed, expected) => panic!("parse gave {parsed:?}, model {expected:?}"),
    }
});
