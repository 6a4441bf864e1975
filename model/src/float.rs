//! Float output that matches Go's `encoding/json`, and BuildKit's rounding.

use serde::Serializer;

/// 2^53: every integer below it is exact in an `f64`.
const EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// Rounds to 3 decimals (millisecond resolution) the way BuildKit's
/// `SysCPUStat.MarshalJSON` does: `math.Round(v*1000)/1000`, halves away from zero.
///
/// ```
/// use stepmon_model::round_millis;
/// assert_eq!(round_millis(12.3456), 12.346);
/// assert_eq!(round_millis(0.0005), 0.001);
/// assert_eq!(round_millis(-0.0005), -0.001);
/// ```
#[must_use]
pub fn round_millis(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// Writes `value` as Go would: integral values as integers (`0`, `12`),
/// anything else as the shortest round-tripping decimal.
pub(crate) fn go_f64<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    let v = *value;
    if v.is_finite() && v.fract() == 0.0 && v.abs() < EXACT_INT {
        // Exact: |v| < 2^53 and integral, so the cast loses nothing (and maps -0 to 0).
        #[allow(clippy::cast_possible_truncation)]
        return serializer.serialize_i64(v as i64);
    }
    serializer.serialize_f64(v)
}

/// [`go_f64`] for an optional value (`null` when `None`).
#[allow(clippy::ref_option)] // the signature serde's `serialize_with` requires
pub(crate) fn go_opt_f64<S: Serializer>(value: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => go_f64(v, serializer),
        None => serializer.serialize_none(),
    }
}

/// [`round_millis`], then [`go_f64`]: BuildKit's SysCPUStat field encoding.
pub(crate) fn millis<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    go_f64(&round_millis(*value), serializer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(v: f64) -> String {
        let mut out = Vec::new();
        go_f64(&v, &mut serde_json::Serializer::new(&mut out)).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn go_number_spelling() {
        assert_eq!(json(0.0), "0");
        assert_eq!(json(-0.0), "0");
        assert_eq!(json(384.6), "384.6");
        assert_eq!(json(123_456.0), "123456");
        assert_eq!(json(3.77), "3.77");
        assert_eq!(json(0.6), "0.6");
        assert_eq!(json(9.0e15), "9000000000000000");
        assert_eq!(json(f64::NAN), "null");
        assert_eq!(round_millis(9.91), 9.91);
        assert_eq!(round_millis(0.0014999), 0.001);
        assert_eq!(round_millis(2.5e-4), 0.0);
    }
}
