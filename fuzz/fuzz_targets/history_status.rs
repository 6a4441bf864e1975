//! BuildKit's status stream (`application/vnd.buildkit.status.v0`):
//! `status::decode` checked against an independent walk of the framing
//! (4-byte little-endian length, then that many bytes): it succeeds only
//! when the frames tile the input exactly, with one message per frame, and
//! its errors are one line; merged vertexes have distinct digests. The
//! same bytes go through the solve-status JSON decoder (`decode_json`),
//! which must not panic either.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_import::history::status::{MAX_MESSAGE_BYTES, decode, decode_json};

/// The frames' count when the input is whole frames of accepted sizes.
fn frames(mut data: &[u8]) -> Option<usize> {
    let mut n = 0;
    while !data.is_empty() {
        let (prefix, rest) = data.split_first_chunk::<4>()?;
        let len = u32::from_le_bytes(*prefix) as usize;
        if len > MAX_MESSAGE_BYTES || len > rest.len() {
            return None;
        }
        data = &rest[len..];
        n += 1;
    }
    Some(n)
}

fuzz_target!(|data: &[u8]| {
    match decode(data) {
        Ok(status) => {
            assert_eq!(Some(status.messages), frames(data), "decode accepted what the framing walk refuses");
            let mut digests: Vec<&str> = status.vertexes.iter().map(|v| v.digest.as_str()).collect();
            digests.sort_unstable();
            let before = digests.len();
            digests.dedup();
            assert_eq!(before, digests.len(), "a vertex listed twice");
        }
        Err(e) => assert!(!e.to_string().contains('\n'), "a multi-line error: {e}"),
    }
    if let Err(e) = decode_json(data) {
        assert!(!e.to_string().contains('\n'), "a multi-line error: {e}");
    }
});
