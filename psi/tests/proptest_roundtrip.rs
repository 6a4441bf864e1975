//! Property tests for `Pressure`: random readings rendered exactly as
//! `psi_show()` prints them parse back unchanged, whatever the order of lines
//! and pairs and whatever unknown pairs are mixed in; arbitrary bytes never
//! panic; `StallDelta` is the exact difference of totals.

use std::time::Duration;

use proptest::prelude::*;
use stepmon_psi::{ErrorKind, Hundredths, Pressure, PressureLine, StallDelta};

/// `(avg10, avg60, avg300, total)`.
type Raw = (u64, u64, u64, u64);

fn avg() -> impl Strategy<Value = u64> {
    // Realistic percentages (a little over 100.00 happens), and any u64.
    prop_oneof![0..=10_100u64, any::<u64>()]
}

fn raw_line() -> impl Strategy<Value = Raw> {
    (avg(), avg(), avg(), any::<u64>())
}

fn raw_reading() -> impl Strategy<Value = (Option<Raw>, Option<Raw>)> {
    (prop::option::weighted(0.9, raw_line()), prop::option::weighted(0.9, raw_line()))
}

fn to_line(raw: Option<Raw>) -> Option<PressureLine> {
    raw.map(|(a, b, c, t)| PressureLine::new(Hundredths(a), Hundredths(b), Hundredths(c), t))
}

/// `"%s avg10=%lu.%02lu avg60=%lu.%02lu avg300=%lu.%02lu total=%llu\n"`.
fn render(name: &str, (a, b, c, t): Raw) -> String {
    let h = |v: u64| format!("{}.{:02}", v / 100, v % 100);
    format!("{name} avg10={} avg60={} avg300={} total={t}\n", h(a), h(b), h(c))
}

fn render_reading(some: Option<Raw>, full: Option<Raw>) -> String {
    some.map(|r| render("some", r)).unwrap_or_default() + &full.map(|r| render("full", r)).unwrap_or_default()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn kernel_format_roundtrips((some, full) in raw_reading(), newline in any::<bool>()) {
        let mut input = render_reading(some, full);
        if !newline {
            input.pop();
        }
        prop_assert_eq!(Pressure::parse(input.as_bytes()).unwrap(), Pressure::new(to_line(some), to_line(full)));
    }

    #[test]
    fn order_and_unknown_pairs_do_not_matter(
        (some, full) in raw_reading(),
        swap_lines in any::<bool>(),
        pair_order in Just((0..4usize).collect::<Vec<_>>()).prop_shuffle(),
        unknown in prop::collection::vec(("[a-z_][a-z0-9_]{0,12}", "[!-~]{0,12}"), 0..4),
        unknown_line in prop::option::of("[a-z]{1,8}( [!-~]{1,10}){0,3}"),
    ) {
        let unknown: Vec<String> = unknown
            .into_iter()
            .filter(|(k, _)| !["avg10", "avg60", "avg300", "total"].contains(&k.as_str()))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let render = |name: &str, (a, b, c, t): Raw| {
            let h = |v: u64| format!("{}.{:02}", v / 100, v % 100);
            let pairs = [format!("avg10={}", h(a)), format!("avg60={}", h(b)), format!("avg300={}", h(c)), format!("total={t}")];
            let mut tokens: Vec<String> = pair_order.iter().map(|&i| pairs[i].clone()).collect();
            tokens.extend(unknown.iter().cloned());
            format!("{name} {}\n", tokens.join(" "))
        };
        let mut lines: Vec<String> = [some.map(|r| render("some", r)), full.map(|r| render("full", r))].into_iter().flatten().collect();
        if let Some(other) = unknown_line.filter(|l| !l.starts_with("some") && !l.starts_with("full")) {
            lines.insert(lines.len() / 2, format!("{other}\n"));
        }
        if swap_lines {
            lines.reverse();
        }
        let parsed = Pressure::parse(lines.concat().as_bytes()).unwrap();
        prop_assert_eq!(parsed, Pressure::new(to_line(some), to_line(full)));
    }

    #[test]
    fn fewer_decimals_mean_the_same_value(tenths in 0..100_000u64, total in any::<u64>()) {
        // `3.5` and `3` are read as 3.50 and 3.00.
        let one = format!("some avg10={}.{} total={total}\n", tenths / 10, tenths % 10);
        prop_assert_eq!(Pressure::parse(one.as_bytes()).unwrap().some.unwrap().avg10, Some(Hundredths(tenths * 10)));
        let int = format!("some avg10={} total={total}\n", tenths);
        prop_assert_eq!(Pressure::parse(int.as_bytes()).unwrap().some.unwrap().avg10, Some(Hundredths(tenths * 100)));
    }

    #[test]
    fn a_bad_value_is_located_exactly(
        (some, full) in raw_reading(),
        key in prop::sample::select(&["avg10", "avg60", "avg300", "total"][..]),
        bad in prop::sample::select(&["x", "1.234", "-1", "+1", "1e3", ".5", "1.", "18446744073709551616", "1\r", ""][..]),
    ) {
        let input = format!("{}full {key}={bad}\n", render_reading(some, None));
        let offset = input.len() - bad.len() - 1;
        let e = Pressure::parse(input.as_bytes()).unwrap_err();
        let line = if some.is_some() { 2 } else { 1 };
        prop_assert_eq!((e.line, e.offset as usize), (line, offset));
        prop_assert!(matches!(e.kind, ErrorKind::InvalidNumber | ErrorKind::Overflow), "{:?}", e.kind);
        let _ = full;
    }

    #[test]
    fn stall_delta_is_the_exact_difference(
        earlier in prop::option::of(any::<u64>()),
        later in prop::option::of(any::<u64>()),
        wall_usec in 0..10_000_000_000u64,
    ) {
        let reading = |t: Option<u64>| Pressure::new(t.map(|t| PressureLine::new(Hundredths(0), Hundredths(0), Hundredths(0), t)), None);
        let d = StallDelta::between(&reading(earlier), &reading(later), Duration::from_micros(wall_usec));
        let expected = match (earlier, later) {
            (Some(e), Some(l)) if l >= e => Some(l - e),
            _ => None,
        };
        prop_assert_eq!(d.some_usec, expected);
        prop_assert_eq!(d.full_usec, None);
        prop_assert_eq!(d.wall_usec, wall_usec);
        prop_assert_eq!(d.some(), expected.map(Duration::from_micros));
        let share = d.some_share_of_wall();
        if wall_usec == 0 || expected.is_none() {
            prop_assert_eq!(share, None);
        } else {
            #[allow(clippy::cast_precision_loss)]
            let want = expected.unwrap() as f64 / wall_usec as f64;
            prop_assert_eq!(share, Some(want));
            prop_assert_eq!(d.some_percent_of_wall(), Some(want * 100.0));
        }
    }
}

fn near_valid_bytes() -> impl Strategy<Value = Vec<u8>> {
    const PIECES: &[&[u8]] = &[
        b"some",
        b"full",
        b"avg10",
        b"avg60",
        b"avg300",
        b"total",
        b"=",
        b" ",
        b"  ",
        b"\n",
        b"\r",
        b"\t",
        b"0",
        b"1",
        b".",
        b"0.00",
        b"3.77",
        b"100.00",
        b"1.234",
        b"-1",
        b"+1",
        b"18446744073709551615",
        b"18446744073709551616",
        b"\x00",
        b"\xff",
        b"\xc3\xa4",
        b"184467440737095516.16",
    ];
    prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn arbitrary_bytes_never_panic(input in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = Pressure::parse(&input);
    }

    #[test]
    fn near_valid_bytes_never_panic(input in near_valid_bytes()) {
        if let Ok(p) = Pressure::parse(&input) {
            // Whatever was accepted can be used.
            let _ = StallDelta::between(&p, &p, Duration::from_secs(1)).some_percent_of_wall();
            for line in [p.some, p.full].into_iter().flatten() {
                let _ = line.avg10.map(|h| (h.to_string(), h.as_f64()));
            }
        }
    }
}
