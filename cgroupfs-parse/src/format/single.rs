//! Single-value files (format class "single value"):
//! <https://docs.kernel.org/admin-guide/cgroup-v2.html#format>.
//!
//! One value followed by `\n` (tolerated when missing). Limits use the token
//! `max` for "no limit", modelled as [`Limit::Max`] — never as `-1` or
//! `u64::MAX`.

use crate::error::{ErrorKind, ParseError, Result};
use crate::lines::{Line, Lines};

/// The value of a single-value file for the fast paths below: the input
/// without its one trailing `\n`. `parse(sole_token(input))` succeeding
/// means the token holds no `\n` (no parser here accepts one), so the input
/// was one non-empty line and the general path would give the same value;
/// when it fails, the general path runs and locates the error.
#[inline]
fn sole_token(input: &[u8]) -> &[u8] {
    input.strip_suffix(b"\n").unwrap_or(input)
}

/// The one line of a single-value file, or the error for an empty file or
/// one with more lines.
pub(crate) fn only_line(input: &[u8]) -> Result<Line<'_>> {
    let mut lines = Lines::new(input);
    let line = lines.next().ok_or(ParseError::new(ErrorKind::Empty, 1, 0))?;
    if let Some(extra) = lines.next() {
        return Err(extra.error(ErrorKind::TrailingData));
    }
    if line.bytes.is_empty() {
        return Err(line.error(ErrorKind::Empty));
    }
    Ok(line)
}

/// Parses a single `u64` (e.g. `memory.current`, `memory.peak`,
/// `memory.swap.current`, `pids.current`, `pids.peak`).
///
/// ```
/// use stepmon_cgroupfs_parse::format::single::parse_u64;
/// assert_eq!(parse_u64(b"123904000\n"), Ok(123_904_000));
/// assert!(parse_u64(b"").is_err());
/// assert!(parse_u64(b"max\n").is_err());
/// ```
#[inline]
pub fn parse_u64(input: &[u8]) -> Result<u64> {
    if let Ok(value) = crate::number::parse_u64(sole_token(input)) {
        return Ok(value);
    }
    let line = only_line(input)?;
    crate::number::parse_u64(line.bytes).map_err(|kind| line.error(kind))
}

/// Parses a `0`/`1` flag (e.g. `cgroup.freeze`, `cgroup.pressure`).
///
/// ```
/// use stepmon_cgroupfs_parse::format::single::parse_flag;
/// assert_eq!(parse_flag(b"1\n"), Ok(true));
/// assert!(parse_flag(b"2\n").is_err());
/// ```
pub fn parse_flag(input: &[u8]) -> Result<bool> {
    let line = only_line(input)?;
    flag(line.bytes).map_err(|kind| line.error(kind))
}

/// `0` → false, `1` → true, anything else is [`ErrorKind::InvalidFlag`].
#[inline]
pub(crate) fn flag(token: &[u8]) -> core::result::Result<bool, ErrorKind> {
    match token {
        b"0" => Ok(false),
        b"1" => Ok(true),
        _ => Err(ErrorKind::InvalidFlag),
    }
}

/// Parses a one-line text value of printable ASCII, single spaces allowed
/// (e.g. `cgroup.type`'s `domain threaded`).
pub fn parse_text(input: &[u8]) -> Result<&str> {
    let line = only_line(input)?;
    super::ascii_text(line.bytes).map_err(|kind| line.error(kind))
}

/// A value that may be the token `max` ("no limit"), as in `memory.max`,
/// `memory.high`, `memory.swap.max`, `pids.max`, `cgroup.max.depth`.
///
/// Spec: <https://docs.kernel.org/admin-guide/cgroup-v2.html#conventions>.
///
/// ```
/// use stepmon_cgroupfs_parse::format::single::Limit;
/// assert_eq!(Limit::parse(b"max\n"), Ok(Limit::Max));
/// assert_eq!(Limit::parse(b"16777216\n"), Ok(Limit::Value(16 << 20)));
/// assert_eq!(Limit::Max.value(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Limit {
    /// The literal `max`: no limit.
    Max,
    /// A finite limit.
    Value(u64),
}

impl Limit {
    /// Parses a whole single-value file holding a number or `max`.
    #[inline]
    pub fn parse(input: &[u8]) -> Result<Limit> {
        if let Ok(limit) = Limit::parse_token(sole_token(input)) {
            return Ok(limit);
        }
        let line = only_line(input)?;
        Limit::parse_token(line.bytes).map_err(|kind| line.error(kind))
    }

    /// Parses one token (`max` or a number), e.g. the first half of `cpu.max`.
    #[inline]
    pub fn parse_token(token: &[u8]) -> core::result::Result<Limit, ErrorKind> {
        if token == b"max" { Ok(Limit::Max) } else { crate::number::parse_u64(token).map(Limit::Value) }
    }

    /// The finite value, or `None` for `max`.
    #[must_use]
    pub fn value(self) -> Option<u64> {
        match self {
            Limit::Max => None,
            Limit::Value(v) => Some(v),
        }
    }

    /// Whether this is `max`.
    #[must_use]
    pub fn is_max(self) -> bool {
        matches!(self, Limit::Max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_value_edges() {
        assert_eq!(parse_u64(b"0\n"), Ok(0));
        assert_eq!(parse_u64(b"42"), Ok(42), "missing newline is fine");
        assert_eq!(parse_u64(b"18446744073709551615\n"), Ok(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616\n").map_err(|e| e.kind), Err(ErrorKind::Overflow));
        assert_eq!(parse_u64(b"").map_err(|e| e.kind), Err(ErrorKind::Empty));
        assert_eq!(parse_u64(b"\n").map_err(|e| e.kind), Err(ErrorKind::Empty));
        assert_eq!(parse_u64(b"1\n2\n").map_err(|e| (e.kind, e.line, e.offset)), Err((ErrorKind::TrailingData, 2, 2)));
        assert_eq!(parse_u64(b"1\r\n").map_err(|e| e.kind), Err(ErrorKind::InvalidNumber));
        assert_eq!(parse_u64(b"1\n\n").map_err(|e| e.kind), Err(ErrorKind::TrailingData));
    }

    #[test]
    fn fast_paths_agree_with_the_general_path() {
        let general_limit = |input| only_line(input).and_then(|l| Limit::parse_token(l.bytes).map_err(|k| l.error(k)));
        let general_u64 =
            |input| only_line(input).and_then(|l| crate::number::parse_u64(l.bytes).map_err(|k| l.error(k)));
        let inputs: [&[u8]; 13] = [
            b"max\n", b"max", b"42\n", b"42", b"", b"\n", b"\n\n", b"max\n\n", b"1\n2", b"1\n2\n", b"max\r\n", b" 1\n",
            b"1 \n",
        ];
        for input in inputs {
            assert_eq!(Limit::parse(input), general_limit(input), "{input:?}");
            assert_eq!(parse_u64(input), general_u64(input), "{input:?}");
        }
    }

    #[test]
    fn limits() {
        assert_eq!(Limit::parse(b"max"), Ok(Limit::Max));
        assert_eq!(Limit::parse(b"0\n"), Ok(Limit::Value(0)));
        assert_eq!(Limit::parse(b"9223372036854771712\n"), Ok(Limit::Value(9_223_372_036_854_771_712)));
        assert!(Limit::parse(b"MAX\n").is_err());
        assert!(Limit::parse(b"max 100000\n").is_err());
        assert!(Limit::parse(b"-1\n").is_err());
        assert!(Limit::Max.is_max() && !Limit::Value(1).is_max());
    }

    #[test]
    fn flags_and_text() {
        assert_eq!(parse_flag(b"0\n"), Ok(false));
        assert!(parse_flag(b"01\n").is_err());
        assert_eq!(parse_text(b"domain threaded\n"), Ok("domain threaded"));
        assert!(parse_text(b"domain\r\n").is_err());
        assert!(parse_text(b"").is_err());
    }
}
