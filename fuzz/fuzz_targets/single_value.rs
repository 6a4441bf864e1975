//! Single-value files: `format::single::{parse_u64, parse_flag, parse_text}`,
//! `Limit::parse` and `Limit::parse_token` (on the whole input and on its
//! first line), checked against each other and a print/re-parse round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::Limit;
use stepmon_cgroupfs_parse::format::single::{parse_flag, parse_text, parse_u64};
use stepmon_fuzz::check_error;

fuzz_target!(|data: &[u8]| {
    let number = parse_u64(data);
    let flag = parse_flag(data);
    let text = parse_text(data);
    let limit = Limit::parse(data);
    for err in [number.err(), flag.err(), text.err(), limit.err()].into_iter().flatten() {
        check_error(data, &err);
    }

    if let Ok(v) = number {
        // Digits are text too; a number is a finite limit.
        assert_eq!(limit, Ok(Limit::Value(v)));
        assert!(text.is_ok());
        assert_eq!(parse_u64(format!("{v}\n").as_bytes()), Ok(v));
        assert_eq!(parse_u64(v.to_string().as_bytes()), Ok(v));
    }
    if let Ok(b) = flag {
        assert_eq!(number, Ok(u64::from(b)));
    }
    match limit {
        Ok(Limit::Max) => {
            assert_eq!(text, Ok("max"));
            assert!(number.is_err());
        }
        Ok(Limit::Value(v)) => assert_eq!(number, Ok(v)),
        Err(_) => assert!(number.is_err()),
    }
    if let Ok(t) = text {
        // `parse_text` accepts exactly one printable line; re-parsing the
        // text alone gives the same answer.
        assert!(!t.is_empty() && t.bytes().all(|b| b.is_ascii_graphic() || b == b' '));
        assert_eq!(parse_text(t.as_bytes()), Ok(t));
    }

    // The token parser on the raw input and on the first line.
    let token = Limit::parse_token(data);
    if let Ok(l) = token {
        // A valid token has no newline, so it is a valid one-line file.
        assert_eq!(limit, Ok(l));
        assert_eq!(l.is_max(), l.value().is_none());
    }
    let first_line = data.split(|&b| b == b'\n').next().unwrap_or_default();
    if let Ok(l) = Limit::parse_token(first_line) {
        assert_eq!(Limit::parse(first_line), Ok(l));
    }
});
