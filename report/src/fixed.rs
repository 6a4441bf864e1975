//! Numbers with a fixed number of decimals, written as `format!("{x:.1}")`
//! writes them, without its cost: the standard library prints a float with
//! a precision by its exact-mode Grisu, falling back to Dragon4 (bignum
//! arithmetic) for many values — most of the time of a job's charts, whose
//! every vertex is two such numbers, and of the units in its tables.
//!
//! The value of a finite `f64` is `m · 2^e` exactly (IEEE 754 binary64:
//! 53-bit significand `m`); scaled by `10^d` it is `m · 10^d · 2^e`, an
//! integer over a power of two, rounded here to the nearest integer with
//! ties to even — the exact decimal value rounded as `{:.d}` rounds it.
//! Values too large for that arithmetic fall back to `format!`.

use std::fmt;

/// A number written with `DECIMALS` decimals (at most 4), as
/// `format!("{:.DECIMALS$}")` writes it.
///
/// ```
/// use stepmon_report::fixed::Fixed;
/// assert_eq!(Fixed::<1>(2.25).to_string(), format!("{:.1}", 2.25));
/// assert_eq!(Fixed::<2>(-0.001).to_string(), "-0.00");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Fixed<const DECIMALS: u32>(pub f64);

/// `|x| · 10^decimals` rounded to the nearest integer, ties to even; `None`
/// for non-finite `x` or a result beyond `u64`.
fn scaled(x: f64, decimals: u32) -> Option<u64> {
    if !x.is_finite() || decimals > 4 {
        return None;
    }
    let bits = x.abs().to_bits();
    let biased = i32::try_from((bits >> 52) & 0x7ff).ok()?;
    let fraction = bits & ((1 << 52) - 1);
    // Subnormals have no implicit bit and the smallest exponent.
    let (m, e) = if biased == 0 { (fraction, -1074) } else { (fraction | (1 << 52), biased - 1075) };
    // m < 2^53 and 10^decimals ≤ 10^4 < 2^14: the product fits in 67 bits.
    let product = u128::from(m) * u128::from(10u64.pow(decimals));
    if e >= 0 {
        let shift = u32::try_from(e).ok()?;
        // Beyond 2^64 the caller writes it the standard way.
        return if shift > 60 { None } else { u64::try_from(product << shift).ok() };
    }
    let shift = e.unsigned_abs();
    if shift >= 100 {
        // product < 2^67 ≤ 2^(shift - 1): less than a half.
        return Some(0);
    }
    let (quotient, remainder, half) = (product >> shift, product & ((1 << shift) - 1), 1u128 << (shift - 1));
    let up = remainder > half || (remainder == half && quotient & 1 == 1);
    u64::try_from(quotient + u128::from(up)).ok()
}

/// Writes `x` with `decimals` decimals, as `format!("{x:.decimals$}")` does.
///
/// # Errors
/// As `f`'s.
pub fn write(f: &mut impl fmt::Write, x: f64, decimals: u32) -> fmt::Result {
    let Some(n) = scaled(x, decimals) else {
        return write!(f, "{x:.*}", decimals as usize);
    };
    // The sign of negative values, also of those that round to zero (and
    // of -0.0), as the standard library writes it.
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if decimals == 0 {
        return write!(f, "{sign}{n}");
    }
    let unit = 10u64.pow(decimals);
    write!(f, "{sign}{}.{:0width$}", n / unit, n % unit, width = decimals as usize)
}

/// `x` with `decimals` decimals, as `format!("{x:.decimals$}")` writes it.
#[must_use]
pub fn string(x: f64, decimals: u32) -> String {
    let mut out = String::new();
    let _ = write(&mut out, x, decimals);
    out
}

impl<const DECIMALS: u32> fmt::Display for Fixed<DECIMALS> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write(f, self.0, DECIMALS)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{Fixed, string};

    fn same(x: f64) {
        assert_eq!(Fixed::<1>(x).to_string(), format!("{x:.1}"), "{x:e}");
        assert_eq!(Fixed::<2>(x).to_string(), format!("{x:.2}"), "{x:e}");
        for decimals in 0..=4 {
            assert_eq!(string(x, decimals), format!("{x:.*}", decimals as usize), "{x:e} {decimals}");
        }
    }

    #[test]
    fn ties_round_as_the_standard_library_does() {
        for x in [0.25, 0.35, 0.05, 0.15, 1.25, 2.5, 0.125, 0.375, -0.25, -0.05, 0.0, -0.0, 1e-300, 5e-324, -5e-324] {
            same(x);
        }
        for k in -4000..4000 {
            // Every multiple of 1/8 and 1/40: exact ties and near-ties.
            same(f64::from(k) / 8.0);
            same(f64::from(k) / 40.0);
            same(f64::from(k) * 0.05);
        }
    }

    #[test]
    fn large_and_odd_values_fall_back() {
        for x in [1e19, 1.8e19, 1e300, f64::MAX, f64::MIN, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 123_456_789.05] {
            same(x);
        }
    }

    proptest! {
        #[test]
        fn any_value_is_written_as_format_writes_it(bits in any::<u64>()) {
            same(f64::from_bits(bits));
        }

        #[test]
        fn chart_coordinates_are_written_as_format_writes_them(x in -1e6f64..1e6) {
            same(x);
        }
    }
}
