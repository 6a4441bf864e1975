//! Building blocks of one-pass fast paths: the exact layout the kernel
//! prints (single keys, runs of spaces, plain decimal numbers, `\n`), read
//! straight off the unsplit input in one forward pass. Used by this crate's
//! cgroup parsers (flat keyed files, `io.stat`, `cpu.max`), by `stepmon-psi`
//! and by the `/proc` parsers of `stepmon-sysusage` and `stepmon-netns-stats`.
//!
//! A parser reads a line with these first and, on *any* deviation
//! (a tab, a sign, a 20-digit number, a vendor column, a truncated line),
//! re-reads that line with its general line-based path, which decides the
//! value or the located error. A fast path therefore only ever accepts what
//! the general path would accept with the same result; the general path is
//! the specification and the tests compare the two.
//!
//! Why not `Lines` + `Fields` + `parse_u64` for everything: that finds each
//! line end, then each token end, then reads the digits, walking every byte
//! three times; files like `/proc/stat` and `/proc/net/dev` are mostly
//! numbers and padding, so that was most of their parse time.
//!
//! ```
//! use stepmon_cgroupfs_parse::scan::{line_end, spaced_u64};
//!
//! let (rx, rest) = spaced_u64(b"   1200 7\n").unwrap();
//! let (packets, rest) = spaced_u64(rest).unwrap();
//! assert_eq!((rx, packets, line_end(rest)), (1200, 7, Some(&b""[..])));
//! ```

use crate::number::Hundredths;

/// The most decimal digits that always fit a `u64` (`u64::MAX` has 20).
pub const SAFE_DIGITS: usize = 19;

/// The 1–19 digit decimal number at the start of `bytes` and what follows
/// it; `None` if there is no digit or 20 or more (the general parser then
/// decides between a value and an overflow).
///
/// A plain byte loop: it beat an eight-bytes-at-a-time (SWAR) version
/// here, whose digit count sits on the critical path from one number to the
/// next, while the predicted branches of this loop let the CPU run ahead.
#[inline(always)]
pub fn leading_u64(bytes: &[u8]) -> Option<(u64, &[u8])> {
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

/// Bytes a number and the byte after it can span: [`SAFE_DIGITS`] digits,
/// then one more that must not be a digit (see [`leading_u64`]).
pub const WINDOW: usize = SAFE_DIGITS + 1;

/// The 1–19 digit number at the start of `input`, the byte that ended it
/// (`None` at the end of the input) and the input after that byte; `None`
/// if there is no digit or 20 or more (see [`leading_u64`] for why those
/// are left to the general path).
///
/// Away from the end of the input the digits are read from a fixed
/// [`WINDOW`]-byte array, which needs no bounds check per byte and hands
/// over the byte that ended the number without reading it again (the
/// caller matches it: `' '` before the next column, `'\n'` at the line's
/// end). This halved the `/proc/stat` fast path together with its other
/// changes; widening each byte to `u64` before the digit check saves a
/// re-extension per digit.
///
/// ```
/// use stepmon_cgroupfs_parse::scan::terminated_u64;
/// assert_eq!(terminated_u64(b"42 7\n"), Some((42, Some(b' '), &b"7\n"[..])));
/// assert_eq!(terminated_u64(b"42"), Some((42, None, &b""[..])));
/// assert_eq!(terminated_u64(b" 42"), None);
/// ```
#[inline(always)]
pub fn terminated_u64(input: &[u8]) -> Option<(u64, Option<u8>, &[u8])> {
    let Some(window) = input.first_chunk::<WINDOW>() else {
        return terminated_u64_near_end(input);
    };
    let mut value: u64 = 0;
    for (len, &b) in window.iter().enumerate() {
        // Widened first: one 64-bit subtract and compare, no re-extension.
        let digit = u64::from(b).wrapping_sub(u64::from(b'0'));
        if digit > 9 {
            let after = input.get(len.wrapping_add(1)..).unwrap_or_default();
            return (len.wrapping_sub(1) < SAFE_DIGITS).then_some((value, Some(b), after));
        }
        value = value.wrapping_mul(10).wrapping_add(digit);
    }
    None
}

/// [`terminated_u64`] within the last [`WINDOW`] bytes of the input: a
/// slice loop, one length check per byte.
#[inline(always)]
fn terminated_u64_near_end(input: &[u8]) -> Option<(u64, Option<u8>, &[u8])> {
    let mut value: u64 = 0;
    let mut rest = input;
    while let [b, tail @ ..] = rest {
        let digit = u64::from(*b).wrapping_sub(u64::from(b'0'));
        if digit > 9 {
            break;
        }
        value = value.wrapping_mul(10).wrapping_add(digit);
        rest = tail;
    }
    let len = input.len().wrapping_sub(rest.len());
    let (end, after) = match rest {
        [b, after @ ..] => (Some(*b), after),
        [] => (None, rest),
    };
    (len.wrapping_sub(1) < SAFE_DIGITS).then_some((value, end, after))
}

/// `INT.DD` at the start of `bytes` (the kernel's `"%lu.%02lu"`, e.g. the
/// load averages of `/proc/loadavg` and the `avg*` shares of PSI files) with
/// 1–16 integer digits, so that ×100 cannot overflow, and what follows it;
/// `None` otherwise, and when a digit follows the two decimals (a third
/// decimal would not be exact): the general parser then decides.
///
/// `D.DD` and `DD.DD`, values below 100 (nearly all loads and stall
/// shares), are read as patterns without the digit loop.
///
/// ```
/// use stepmon_cgroupfs_parse::{number::Hundredths, scan::leading_hundredths};
/// assert_eq!(leading_hundredths(b"3.77 1"), Some((Hundredths(377), &b" 1"[..])));
/// assert_eq!(leading_hundredths(b"100.00"), Some((Hundredths(10000), &b""[..])));
/// assert_eq!(leading_hundredths(b"1.234"), None);
/// assert_eq!(leading_hundredths(b"1.2 "), None);
/// ```
#[inline(always)]
pub fn leading_hundredths(bytes: &[u8]) -> Option<(Hundredths, &[u8])> {
    fn digit(b: u8) -> u64 {
        u64::from(b.wrapping_sub(b'0'))
    }
    // The value once its digits are found; a third decimal is refused.
    fn value(int: u64, d1: u8, d2: u8, rest: &[u8]) -> Option<(Hundredths, &[u8])> {
        let frac = digit(d1).wrapping_mul(10).wrapping_add(digit(d2));
        let third_decimal = rest.first().is_some_and(u8::is_ascii_digit);
        (!third_decimal).then_some((Hundredths(int.wrapping_mul(100).wrapping_add(frac)), rest))
    }
    match bytes {
        [i @ b'0'..=b'9', b'.', d1 @ b'0'..=b'9', d2 @ b'0'..=b'9', rest @ ..] => value(digit(*i), *d1, *d2, rest),
        [i1 @ b'0'..=b'9', i2 @ b'0'..=b'9', b'.', d1 @ b'0'..=b'9', d2 @ b'0'..=b'9', rest @ ..] => {
            value(digit(*i1).wrapping_mul(10).wrapping_add(digit(*i2)), *d1, *d2, rest)
        }
        _ => {
            let (int, rest) = leading_u64(bytes)?;
            let [b'.', d1 @ b'0'..=b'9', d2 @ b'0'..=b'9', rest @ ..] = rest else { return None };
            (bytes.len().saturating_sub(rest.len()) <= 19).then_some(())?;
            value(int, *d1, *d2, rest)
        }
    }
}

/// `bytes` after the literal `lit` it starts with, `None` if it does not.
/// Compared as a fixed-size array, which the compiler turns into a word
/// compare or two; `strip_prefix` with a key from a list of keys of
/// different lengths called `memcmp`.
///
/// ```
/// use stepmon_cgroupfs_parse::scan::after_literal;
/// assert_eq!(after_literal(b"rbytes=12", b"rbytes="), Some(&b"12"[..]));
/// assert_eq!(after_literal(b"wbytes=12", b"rbytes="), None);
/// assert_eq!(after_literal(b"rby", b"rbytes="), None);
/// ```
#[inline(always)]
pub fn after_literal<'a, const N: usize>(bytes: &'a [u8], lit: &[u8; N]) -> Option<&'a [u8]> {
    let (head, rest) = bytes.split_first_chunk::<N>()?;
    (head == lit).then_some(rest)
}

/// One or more spaces, then a number ([`leading_u64`]): a column as the
/// kernel pads it (`" %llu"`, `"%7llu"`).
#[inline(always)]
pub fn spaced_u64(bytes: &[u8]) -> Option<(u64, &[u8])> {
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
pub fn line_end(bytes: &[u8]) -> Option<&[u8]> {
    match bytes {
        [] => Some(bytes),
        [b'\n', rest @ ..] => Some(rest),
        _ => None,
    }
}

/// Length of the line a fast path consumed: `consumed` bytes of input,
/// possibly ending with the `\n`, which is not part of the line.
#[inline(always)]
pub fn line_len(input: &[u8], consumed: usize) -> usize {
    match input.get(..consumed) {
        Some([.., b'\n']) => consumed.saturating_sub(1),
        _ => consumed,
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
        assert_eq!(leading_u64(b"12345678 tail"), Some((12_345_678, &b" tail"[..])));
        assert_eq!(leading_u64(b"123456789012 x"), Some((123_456_789_012, &b" x"[..])));
        assert_eq!(leading_u64(b"1234567890123456 x"), Some((1_234_567_890_123_456, &b" x"[..])));
        assert_eq!(leading_u64(b"9999999999999999999 x"), Some((9_999_999_999_999_999_999, &b" x"[..])));
        assert_eq!(leading_u64(b"99999999999999999999 x"), None);
        assert_eq!(leading_u64(b"12345678901"), Some((12_345_678_901, &b""[..])));
        assert_eq!(leading_u64(b""), None);
        assert_eq!(spaced_u64(b"   7\n"), Some((7, &b"\n"[..])));
        assert_eq!(spaced_u64(b"7"), None);
        assert_eq!(spaced_u64(b" \t7"), None);
        assert_eq!(spaced_u64(b"  "), None);
        assert_eq!(line_end(b"\nnext"), Some(&b"next"[..]));
        assert_eq!(line_end(b""), Some(&b""[..]));
        assert_eq!(line_end(b" \n"), None);
        assert_eq!((line_len(b"ab\ncd", 3), line_len(b"ab", 2), line_len(b"", 0)), (2, 2, 0));
    }

    /// Where it reads a value, `Hundredths::parse` of the same token (up to
    /// the next space) gives that value; on every cut of the text.
    #[test]
    fn hundredths_agree_with_the_general_parser() {
        let text = b"0.00 9.99 12.50 100.00 1234567890123456.78 12345678901234567.89 1.234 1.2 .50 7. x";
        crate::testing::for_each_substring(text, |input| {
            if let Some((value, rest)) = leading_hundredths(input) {
                let token = &input[..input.len() - rest.len()];
                assert!(matches!(rest.first(), None | Some(b' ')), "{input:?}");
                assert_eq!(crate::number::Hundredths::parse(token), Ok(value), "{input:?}");
            }
        });
        assert_eq!(
            leading_hundredths(b"1234567890123456.78"),
            Some((crate::number::Hundredths(123_456_789_012_345_678), &b""[..]))
        );
        assert_eq!(leading_hundredths(b"12345678901234567.89"), None, "17 integer digits go to the general parser");
    }

    /// The window read and the slice loop near the end agree with
    /// `leading_u64` wherever the input's end cuts the window.
    #[test]
    fn terminated_agrees_with_leading() {
        let text = b"1234567890123456789 9999999999999999999x 12345678901234567890 0\n7";
        crate::testing::for_each_substring(text, |input| {
            let expected = leading_u64(input).map(|(value, rest)| match rest {
                [b, after @ ..] => (value, Some(*b), after),
                [] => (value, None, rest),
            });
            assert_eq!(terminated_u64(input), expected, "{input:?}");
        });
    }
}
