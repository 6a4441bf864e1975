//! Properties of the human units around every unit boundary: the printed
//! mantissa never reaches the next unit's base (no `1024.0 KiB`, no `60.0s`
//! in the seconds field, no `1000.0 ms`, no `60.00 s`), and reading the
//! printed text back gives the input within the printed precision.

use proptest::prelude::*;
use stepmon_report::units;

/// The value `text` (printed by [`units::bytes`]) stands for, and half its
/// last digit (the rounding the text allows).
fn read_bytes(text: &str) -> (f64, f64) {
    let (number, unit) = text.split_once(' ').unwrap_or_else(|| panic!("no unit: {text:?}"));
    let value: f64 = number.parse().unwrap_or_else(|_| panic!("not a number: {text:?}"));
    let power = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"].iter().position(|u| *u == unit).expect("known unit");
    let base = 1024f64.powi(i32::try_from(power).unwrap());
    if power == 0 {
        assert!(!number.contains('.') && value < 1024.0, "{text:?}");
        return (value, 0.0);
    }
    assert!(value < 1024.0 || power == 5, "mantissa reaches the next unit: {text:?}");
    assert_eq!(number.split_once('.').map(|(_, d)| d.len()), Some(1), "{text:?}");
    (value * base, 0.05 * base)
}

/// The same for [`units::seconds`].
fn read_seconds(text: &str) -> (f64, f64) {
    if let Some(ms) = text.strip_suffix(" ms") {
        let value: f64 = ms.parse().unwrap();
        assert!(value.abs() < 1000.0, "{text:?}");
        return (value / 1000.0, 0.05 / 1000.0);
    }
    if let Some(s) = text.strip_suffix(" s") {
        let value: f64 = s.parse().unwrap();
        assert!((1.0..60.0).contains(&value), "{text:?}");
        return (value, 0.005);
    }
    let (minutes, rest) = text.strip_suffix('s').and_then(|t| t.split_once('m')).expect("NmS.Ss");
    let (minutes, rest): (f64, f64) = (minutes.parse().unwrap(), rest.parse().unwrap());
    assert!(minutes >= 1.0 && minutes.fract() == 0.0, "{text:?}");
    assert!((0.0..60.0).contains(&rest), "seconds field reaches a minute: {text:?}");
    (minutes * 60.0 + rest, 0.05)
}

/// Byte counts within a few thousand of a power of 1024 (both sides), and
/// everything else.
fn near_byte_boundaries() -> impl Strategy<Value = u64> {
    prop_oneof![(1u32..=6, -5000i64..5000).prop_map(|(k, d)| (1u64 << (10 * k)).saturating_add_signed(d)), any::<u64>()]
}

/// Seconds close to 1 s and to whole minutes, and anything up to a day.
fn near_second_boundaries() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-1e-3f64..1e-3).prop_map(|d| 1.0 + d),
        (1u32..120, -0.1f64..0.1).prop_map(|(m, d)| f64::from(m) * 60.0 + d),
        0.0f64..86_400.0,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn bytes_read_back_within_their_precision(n in near_byte_boundaries()) {
        let text = units::bytes(n);
        let (value, precision) = read_bytes(&text);
        #[allow(clippy::cast_precision_loss)]
        let n = n as f64;
        // A relative slack of 1e-12 for f64's own rounding of large counts.
        prop_assert!((value - n).abs() <= precision + n * 1e-12, "{n} printed as {text}");
    }

    #[test]
    fn seconds_read_back_within_their_precision(s in near_second_boundaries()) {
        let text = units::seconds(s);
        let (value, precision) = read_seconds(&text);
        prop_assert!((value - s).abs() <= precision * (1.0 + 1e-9), "{s} printed as {text}");
    }
}

#[test]
fn the_reported_boundary_cases() {
    // Each of these printed the next unit's base before.
    assert_eq!(units::bytes(1_048_575), "1.0 MiB");
    assert_eq!(units::seconds(119.97), "2m0.0s");
    assert_eq!(units::seconds(59.999), "1m0.0s");
    assert_eq!(units::seconds(0.99996), "1.00 s");
    read_bytes(&units::bytes(1_048_575));
    for text in [units::seconds(119.97), units::seconds(59.999), units::seconds(0.99996)] {
        read_seconds(&text);
    }
}
