//! Building blocks of the `/proc/net/dev` fast path: the exact layout
//! `dev_seq_printf_stats()` prints (runs of spaces, plain decimal numbers,
//! `\n`), read straight off the unsplit input in one forward pass.
//!
//! A line that deviates in any way (a tab, a sign, a 20-digit number, a
//! 17th column, a truncated line) is re-read by the general line parser,
//! which decides its value or its located error; the fast path only accepts
//! what the general path accepts, with the same result (tests compare them).
//! Why: `Lines` + `Fields` + `parse_u64` walk every byte three times (line
//! end, token end, digits), and this file is mostly numbers and padding.
//!
//! `stepmon-sysusage` has the same helpers for `/proc/stat`; the two crates
//! do not depend on each other, and these few lines are not worth a crate.

/// The most decimal digits that always fit a `u64` (`u64::MAX` has 20).
const SAFE_DIGITS: usize = 19;

/// The 1–19 digit decimal number at the start of `bytes` and what follows
/// it; `None` if there is no digit or 20 or more (the general parser then
/// decides between a value and an overflow).
#[inline(always)]
pub(crate) fn leading_u64(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let mut value: u64 = 0;
    let mut rest = bytes;
    while let [b, tail @ ..] = rest {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        value = value.wrapping_mul(10).wrapping_add(u64::from(digit));
        rest = tail;
    }
    let len = bytes.len().saturating_sub(rest.len());
    (1..=SAFE_DIGITS).contains(&len).then_some((value, rest))
}

/// One or more spaces, then a number ([`leading_u64`]): a column as the
/// kernel pads it (`" %7llu"`).
#[inline(always)]
pub(crate) fn spaced_u64(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let [b' ', rest @ ..] = bytes else { return None };
    let mut rest = rest;
    while let [b' ', tail @ ..] = rest {
        rest = tail;
    }
    leading_u64(rest)
}

/// The end of a line: what follows its `\n`, or the empty rest after a last
/// line without one; `None` if the line goes on.
#[inline(always)]
pub(crate) fn line_end(bytes: &[u8]) -> Option<&[u8]> {
    match bytes {
        [] => Some(bytes),
        [b'\n', rest @ ..] => Some(rest),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_ends() {
        assert_eq!(leading_u64(b"123 4"), Some((123, &b" 4"[..])));
        assert_eq!(leading_u64(b"9999999999999999999"), Some((9_999_999_999_999_999_999, &b""[..])));
        assert_eq!(leading_u64(b"18446744073709551615"), None, "20 digits go to the general parser");
        assert_eq!(leading_u64(b"x1"), None);
        assert_eq!(spaced_u64(b"   7\n"), Some((7, &b"\n"[..])));
        assert_eq!(spaced_u64(b"7"), None);
        assert_eq!(spaced_u64(b" \t7"), None);
        assert_eq!(line_end(b"\nnext"), Some(&b"next"[..]));
        assert_eq!(line_end(b""), Some(&b""[..]));
        assert_eq!(line_end(b" \n"), None);
    }
}
