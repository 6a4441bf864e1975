//! Number parsing shared by every parser: plain ASCII decimal, no sign, no
//! grouping, overflow is an error (see the "Numbers" rule in
//! <https://docs.kernel.org/admin-guide/cgroup-v2.html#conventions>).

use crate::error::ErrorKind;

/// Parses an unsigned ASCII decimal `u64`. Leading zeros are accepted; an
/// empty token, a sign, a blank or any other byte is [`ErrorKind::InvalidNumber`];
/// a value above `u64::MAX` is [`ErrorKind::Overflow`].
///
/// ```
/// use stepmon_cgroupfs_parse::number::parse_u64;
/// assert_eq!(parse_u64(b"18446744073709551615"), Ok(u64::MAX));
/// assert!(parse_u64(b"18446744073709551616").is_err());
/// assert!(parse_u64(b"-1").is_err());
/// ```
#[inline]
pub fn parse_u64(token: &[u8]) -> Result<u64, ErrorKind> {
    if token.is_empty() {
        return Err(ErrorKind::InvalidNumber);
    }
    // 19 digits are at most 10^19 - 1 < u64::MAX, so the first 19 need no
    // overflow check (nearly every kernel counter is shorter); checking each
    // of them cost more than the digit loop itself.
    let (short, long) = token.split_at_checked(MAX_SAFE_DIGITS).unwrap_or((token, &[]));
    let mut value: u64 = 0;
    for &b in short {
        value = value.wrapping_mul(10).wrapping_add(u64::from(digit(b)?));
    }
    for &b in long {
        let digit = digit(b)?;
        value = value.checked_mul(10).and_then(|v| v.checked_add(u64::from(digit))).ok_or(ErrorKind::Overflow)?;
    }
    Ok(value)
}

/// The most decimal digits that always fit a `u64` (`u64::MAX` has 20).
const MAX_SAFE_DIGITS: usize = 19;

/// Parses an unsigned decimal that must fit a `u32` (PIDs, device numbers).
#[inline]
pub fn parse_u32(token: &[u8]) -> Result<u32, ErrorKind> {
    u32::try_from(parse_u64(token)?).map_err(|_| ErrorKind::Overflow)
}

/// Parses a counter the kernel prints with `%d` from a C `int` (e.g.
/// `cpu.stat` `nr_periods`): a negative value means the 32-bit counter
/// wrapped, so `-1` is read back as `u32::MAX` (4294967295). Values outside
/// the `int`/`unsigned int` range are [`ErrorKind::Overflow`].
///
/// ```
/// use stepmon_cgroupfs_parse::number::parse_c_int_counter;
/// assert_eq!(parse_c_int_counter(b"42"), Ok(42));
/// assert_eq!(parse_c_int_counter(b"-1"), Ok(u64::from(u32::MAX)));
/// ```
#[inline]
pub fn parse_c_int_counter(token: &[u8]) -> Result<u64, ErrorKind> {
    match token.split_first() {
        Some((b'-', magnitude)) => {
            let magnitude = parse_u64(magnitude)?;
            if magnitude == 0 || magnitude > 1 << 31 {
                // "-0" is never printed; below i32::MIN is not an int.
                return Err(if magnitude == 0 { ErrorKind::InvalidNumber } else { ErrorKind::Overflow });
            }
            Ok((1u64 << 32).saturating_sub(magnitude))
        }
        _ => {
            let value = parse_u64(token)?;
            if value > u64::from(u32::MAX) { Err(ErrorKind::Overflow) } else { Ok(value) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u64_edges() {
        assert_eq!(parse_u64(b"0"), Ok(0));
        assert_eq!(parse_u64(b"007"), Ok(7));
        assert_eq!(parse_u64(b"18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), Err(ErrorKind::Overflow));
        assert_eq!(parse_u64(b"99999999999999999999999"), Err(ErrorKind::Overflow));
        for bad in [&b""[..], b"-1", b"+1", b" 1", b"1 ", b"1\r", b"0x10", b"1.0", b"\xff"] {
            assert_eq!(parse_u64(bad), Err(ErrorKind::InvalidNumber), "{bad:?}");
        }
    }

    #[test]
    fn u32_and_c_int() {
        assert_eq!(parse_u32(b"4294967295"), Ok(u32::MAX));
        assert_eq!(parse_u32(b"4294967296"), Err(ErrorKind::Overflow));
        assert_eq!(parse_c_int_counter(b"2147483647"), Ok(2_147_483_647));
        assert_eq!(parse_c_int_counter(b"-2147483648"), Ok(2_147_483_648));
        assert_eq!(parse_c_int_counter(b"-2147483649"), Err(ErrorKind::Overflow));
        assert_eq!(parse_c_int_counter(b"4294967296"), Err(ErrorKind::Overflow));
        assert_eq!(parse_c_int_counter(b"-0"), Err(ErrorKind::InvalidNumber));
        assert_eq!(parse_c_int_counter(b"-"), Err(ErrorKind::InvalidNumber));
    }
}

/// An exact fixed-point decimal with two fractional digits, as the kernel
/// prints percentages (PSI `avg10=3.77`, iocost `cost.vrate=100.00`): the
/// value ×100 as an integer, so `3.77` is `Hundredths(377)`. Comparing and
/// subtracting stays exact; [`Hundredths::as_f64`] converts for display.
///
/// ```
/// use stepmon_cgroupfs_parse::number::Hundredths;
/// let h = Hundredths::parse(b"3.77").unwrap();
/// assert_eq!(h, Hundredths(377));
/// assert_eq!(h.as_f64(), 3.77);
/// assert_eq!(h.to_string(), "3.77");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Hundredths(pub u64);

impl Hundredths {
    /// Parses `INT.DD` (the kernel always prints two decimals; `INT` and
    /// `INT.D` are accepted too). More than two decimals would not be exact
    /// and is [`ErrorKind::InvalidNumber`].
    #[inline]
    pub fn parse(token: &[u8]) -> Result<Hundredths, ErrorKind> {
        // Fast path for the kernel's `%lu.%02lu`. When the part before the
        // last three bytes is a plain number it holds no `.`, so this is the
        // same split as the general path below makes; anything else goes
        // there, which decides the error.
        if let [int @ .., b'.', d1, d2] = token
            && let (Ok(d1), Ok(d2)) = (digit(*d1), digit(*d2))
            && let Ok(int) = parse_u64(int)
        {
            let frac = d1.wrapping_mul(10).wrapping_add(d2);
            return int
                .checked_mul(100)
                .and_then(|v| v.checked_add(u64::from(frac)))
                .map(Hundredths)
                .ok_or(ErrorKind::Overflow);
        }
        Hundredths::parse_general(token)
    }

    /// `INT`, `INT.D` or `INT.DD`: splits at the first `.`, checks the
    /// decimals, then the integer part.
    fn parse_general(token: &[u8]) -> Result<Hundredths, ErrorKind> {
        let (int, frac) = match crate::lines::find_byte(b'.', token) {
            Some(dot) => (token.get(..dot).unwrap_or_default(), token.get(dot.saturating_add(1)..).unwrap_or_default()),
            None => (token, &b""[..]),
        };
        let frac_value = match frac {
            [] if token.len() == int.len() => 0,
            [d] => u64::from(digit(*d)?).saturating_mul(10),
            [d1, d2] => u64::from(digit(*d1)?).saturating_mul(10).saturating_add(u64::from(digit(*d2)?)),
            _ => return Err(ErrorKind::InvalidNumber),
        };
        parse_u64(int)?
            .checked_mul(100)
            .and_then(|v| v.checked_add(frac_value))
            .map(Hundredths)
            .ok_or(ErrorKind::Overflow)
    }

    /// The value as a floating point number (`377` → `3.77`).
    #[must_use]
    #[allow(clippy::cast_precision_loss)] // only above 2^53/100, far past any percentage
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / 100.0
    }
}

impl core::fmt::Display for Hundredths {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}.{:02}", self.0 / 100, self.0 % 100)
    }
}

#[inline]
fn digit(b: u8) -> Result<u8, ErrorKind> {
    let d = b.wrapping_sub(b'0');
    if d > 9 { Err(ErrorKind::InvalidNumber) } else { Ok(d) }
}

/// Parses a signed ASCII decimal `i64` (a leading `-` allowed), for the few
/// values the kernel prints with `%d`/`%lld` that can really be negative.
#[inline]
pub fn parse_i64(token: &[u8]) -> Result<i64, ErrorKind> {
    match token.split_first() {
        Some((b'-', magnitude)) => {
            let magnitude = parse_u64(magnitude)?;
            0i64.checked_sub_unsigned(magnitude).ok_or(ErrorKind::Overflow)
        }
        _ => i64::try_from(parse_u64(token)?).map_err(|_| ErrorKind::Overflow),
    }
}

#[cfg(test)]
mod hundredths_tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn hundredths_edges() {
        assert_eq!(Hundredths::parse(b"0.00"), Ok(Hundredths(0)));
        assert_eq!(Hundredths::parse(b"100.00"), Ok(Hundredths(10_000)));
        assert_eq!(Hundredths::parse(b"101.5"), Ok(Hundredths(10_150)));
        assert_eq!(Hundredths::parse(b"7"), Ok(Hundredths(700)));
        for bad in [&b""[..], b".", b"1.", b".5", b"1.234", b"1,00", b"-1.00", b"1.0a", b"1..0"] {
            assert!(Hundredths::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(Hundredths::parse(b"184467440737095516.15"), Ok(Hundredths(u64::MAX)));
        assert_eq!(Hundredths::parse(b"184467440737095516.16"), Err(ErrorKind::Overflow));
        assert_eq!(Hundredths(5).to_string(), "0.05");
        assert_eq!(parse_i64(b"-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(parse_i64(b"-9223372036854775809"), Err(ErrorKind::Overflow));
        assert_eq!(parse_i64(b"9223372036854775808"), Err(ErrorKind::Overflow));
    }
}
