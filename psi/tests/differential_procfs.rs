//! Differential tests against procfs-core 0.18's PSI parser
//! (`CpuPressure`/`MemoryPressure`/`IoPressure::from_buf_read` and
//! `parse_pressure_record`): on the same bytes, wherever procfs-core
//! succeeds, totals must be equal and averages equal up to `f32` precision
//! (checked both as "same text with two decimals" and numerically).
//!
//! Inputs on which exactly one side fails are listed in
//! `known_divergences` with the reason; anything else that diverges fails.

use std::panic::{AssertUnwindSafe, catch_unwind};

use procfs_core::{CpuPressure, FromBufRead, IoPressure, MemoryPressure, PressureRecord, parse_pressure_record};
use proptest::prelude::*;
use stepmon_psi::{Hundredths, Pressure, PressureLine};

const CAPTURES: &[(&str, &[u8])] = &[
    ("proc_pressure_cpu", include_bytes!("data/hybrid-6.18/proc_pressure_cpu.txt")),
    ("proc_pressure_io", include_bytes!("data/hybrid-6.18/proc_pressure_io.txt")),
    ("proc_pressure_memory", include_bytes!("data/hybrid-6.18/proc_pressure_memory.txt")),
    ("root_cpu", include_bytes!("data/hybrid-6.18/cgroup2_root_cpu.pressure.txt")),
    ("root_io", include_bytes!("data/hybrid-6.18/cgroup2_root_io.pressure.txt")),
    ("root_memory", include_bytes!("data/hybrid-6.18/cgroup2_root_memory.pressure.txt")),
    ("child_cpu", include_bytes!("data/hybrid-6.18/cgroup2_child_cpu.pressure.txt")),
    ("child_io", include_bytes!("data/hybrid-6.18/cgroup2_child_io.pressure.txt")),
    ("child_memory", include_bytes!("data/hybrid-6.18/cgroup2_child_memory.pressure.txt")),
    ("handmade_cpu", include_bytes!("data/pure-v2-handmade/cpu.pressure")),
    ("handmade_memory", include_bytes!("data/pure-v2-handmade/memory.pressure")),
];

/// Whether procfs-core's `f32` and our exact hundredths denote the same
/// two-decimal value.
fn avg_agrees(ours: Option<Hundredths>, theirs: f32) -> bool {
    let Some(ours) = ours else { return false };
    // The nearest f32 to X.YZ is within half an f32 ulp, i.e. within
    // f32::EPSILON relative; printing it with two decimals gives X.YZ back
    // for every value below 2^17 (checked below for realistic ranges).
    let close = (f64::from(theirs) - ours.as_f64()).abs() <= f64::from(f32::EPSILON) * ours.as_f64().max(1.0);
    close && format!("{theirs:.2}") == ours.to_string()
}

fn record_agrees(ours: Option<PressureLine>, theirs: &PressureRecord) -> Result<(), String> {
    let ours = ours.ok_or("procfs-core has a record where we have no line")?;
    let ok = ours.total_usec == Some(theirs.total)
        && avg_agrees(ours.avg10, theirs.avg10)
        && avg_agrees(ours.avg60, theirs.avg60)
        && avg_agrees(ours.avg300, theirs.avg300);
    if ok { Ok(()) } else { Err(format!("ours {ours:?} vs procfs-core {theirs:?}")) }
}

/// procfs-core's whole-file parse: `(some, full)` taken from the first two
/// lines. `Err` for an error *or a panic* (reported separately by callers).
fn theirs_file(input: &[u8]) -> Result<(PressureRecord, PressureRecord), String> {
    // All three types share one implementation; exercising each keeps that honest.
    let cpu = catch_unwind(AssertUnwindSafe(|| CpuPressure::from_buf_read(input)));
    let mem = catch_unwind(AssertUnwindSafe(|| MemoryPressure::from_buf_read(input)));
    let io = catch_unwind(AssertUnwindSafe(|| IoPressure::from_buf_read(input)));
    match (cpu, mem, io) {
        (Ok(Ok(c)), Ok(Ok(m)), Ok(Ok(i))) => {
            assert_eq!((c.some.total, c.full.total), (m.some.total, m.full.total));
            assert_eq!((c.some.total, c.full.total), (i.some.total, i.full.total));
            Ok((c.some, c.full))
        }
        (Ok(Err(e)), Ok(Err(_)), Ok(Err(_))) => Err(format!("error: {e}")),
        (Err(_), Err(_), Err(_)) => Err("panic".to_owned()),
        _ => panic!("procfs-core's three pressure types disagree on {input:?}"),
    }
}

fn compare_file(input: &[u8]) -> Result<(), String> {
    let ours = Pressure::parse(input).map_err(|e| format!("we fail ({e}), procfs-core succeeds"))?;
    let (some, full) = theirs_file(input).map_err(|e| format!("procfs-core fails ({e}), we succeed"))?;
    record_agrees(ours.some, &some)?;
    record_agrees(ours.full, &full)
}

#[test]
fn every_capture_agrees_file_and_line_wise() {
    for (name, input) in CAPTURES {
        compare_file(input).unwrap_or_else(|e| panic!("{name}: {e}"));
        let ours = Pressure::parse(input).unwrap();
        let text = std::str::from_utf8(input).unwrap();
        for line in text.lines() {
            let theirs = parse_pressure_record(line).unwrap();
            let ours_line = if line.starts_with("some") { ours.some } else { ours.full };
            record_agrees(ours_line, &theirs).unwrap_or_else(|e| panic!("{name}: {line}: {e}"));
            // With the newline `get_pressure` passes along, too.
            let theirs_nl = parse_pressure_record(&format!("{line}\n")).unwrap();
            assert_eq!(theirs_nl.total, theirs.total);
        }
    }
}

#[test]
fn real_capture_values_through_both() {
    // A concrete look at one capture, so the comparison above is not vacuous.
    let (some, full) = theirs_file(CAPTURES[0].1).unwrap();
    assert_eq!((some.total, full.total), (3_220_079, 0));
    assert_eq!(format!("{:.2} {:.2} {:.2}", some.avg10, some.avg60, some.avg300), "3.00 1.16 0.60");
    let ours = Pressure::parse(CAPTURES[0].1).unwrap().some.unwrap();
    assert_eq!((ours.avg60, ours.total_usec), (Some(Hundredths(116)), Some(3_220_079)));
    assert!(!avg_agrees(Some(Hundredths(116)), 1.17), "the comparison can fail");
    assert!(!avg_agrees(None, 0.0));
}

/// How the two parsers relate on an input.
#[derive(Debug, PartialEq, Eq)]
enum Relation {
    /// Both succeed with equal values, or both fail.
    Agree,
    /// Only we accept it.
    OursOnly,
    /// Only procfs-core accepts it.
    TheirsOnly,
    /// procfs-core panics (we must not).
    TheirsPanics,
    /// Both succeed but assign lines differently (procfs-core goes by position).
    BothOkDifferent,
}

fn relation(input: &[u8]) -> Relation {
    let ours = Pressure::parse(input);
    match (ours, theirs_file(input)) {
        (_, Err(e)) if e == "panic" => Relation::TheirsPanics,
        (Ok(o), Ok((s, f))) => {
            if record_agrees(o.some, &s).is_ok() && record_agrees(o.full, &f).is_ok() {
                Relation::Agree
            } else {
                Relation::BothOkDifferent
            }
        }
        (Err(_), Err(_)) => Relation::Agree,
        (Ok(_), Err(_)) => Relation::OursOnly,
        (Err(_), Ok(_)) => Relation::TheirsOnly,
    }
}

const GOOD: &str =
    "some avg10=3.77 avg60=1.14 avg300=0.59 total=3154261\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";

#[test]
fn known_divergences() {
    use Relation::*;
    let (crlf, tabs) = (GOOD.replace('\n', "\r\n"), GOOD.replace(' ', "\t"));
    let cases: &[(&str, &[u8], Relation)] = &[
        ("well-formed", GOOD.as_bytes(), Agree),
        ("no trailing newline", GOOD.trim_end().as_bytes(), Agree),
        ("double spaces", b"some  avg10=1.00  avg60=1.00 avg300=1.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", Agree),
        ("unknown pair", b"some avg10=1.00 avg60=1.00 avg300=1.00 total=1 x=y\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", Agree),
        ("total overflows u64", b"some avg10=1.00 avg60=1.00 avg300=1.00 total=18446744073709551616\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", Agree),
        ("negative total", b"some avg10=1.00 avg60=1.00 avg300=1.00 total=-1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", Agree),
        // We accept files procfs-core cannot represent (it requires both
        // lines, each with all four keys).
        ("empty file", b"", OursOnly),
        ("cpu before 5.13: no full line", b"some avg10=1.00 avg60=1.00 avg300=1.00 total=1\n", OursOnly),
        ("irq: only full", b"full avg10=1.00 avg60=1.00 avg300=1.00 total=1\n", OursOnly),
        ("a missing average", b"some avg10=1.00 avg300=1.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", OursOnly),
        // procfs-core is laxer: Rust's f32/u64 `parse` and `split_whitespace`.
        ("CRLF", crlf.as_bytes(), TheirsOnly),
        ("tabs", tabs.as_bytes(), TheirsOnly),
        ("three decimals", b"some avg10=1.234 avg60=1.00 avg300=1.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", TheirsOnly),
        ("exponent", b"some avg10=1e0 avg60=1.00 avg300=1.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", TheirsOnly),
        ("plus sign", b"some avg10=1.00 avg60=1.00 avg300=1.00 total=+1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", TheirsOnly),
        ("token without =", b"some avg10=1.00 avg60=1.00 avg300=1.00 total=1 junk\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", TheirsOnly),
        ("inf", b"some avg10=inf avg60=1.00 avg300=1.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", TheirsOnly),
        ("empty line after some", b"some avg10=1.00 avg60=1.00 avg300=1.00 total=1\n\n", Agree),
        // procfs-core assigns by position, we by the line's key.
        ("full before some", b"full avg10=2.00 avg60=2.00 avg300=2.00 total=2\nsome avg10=1.00 avg60=1.00 avg300=1.00 total=1\n", BothOkDifferent),
        ("a third line", b"some avg10=1.00 avg60=1.00 avg300=1.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\nsome avg10=9.00 avg60=9.00 avg300=9.00 total=9\n", BothOkDifferent),
        // procfs-core slices `&line[5..]` after checking only the prefix: a
        // line that is exactly `some` or `full` (4 bytes) panics.
        ("bare `some`", b"some", TheirsPanics),
        ("bare `full` as second line", b"some avg10=1.00 avg60=1.00 avg300=1.00 total=1\nfull", TheirsPanics),
    ];
    for (name, input, expected) in cases {
        assert_eq!(relation(input), *expected, "{name}: {:?}", String::from_utf8_lossy(input));
    }
    // And we never panic on any of them (Pressure::parse above returned).
}

/// A well-formed two-line reading: `(avg10, avg60, avg300, total)` per line.
fn reading() -> impl Strategy<Value = [(u64, u64, u64, u64); 2]> {
    // Averages up to 1000.00: far above real values and well inside the
    // range where f32 keeps two exact decimals.
    let line = (0..=100_000u64, 0..=100_000u64, 0..=100_000u64, any::<u64>());
    [line.clone(), line]
}

fn render(r: &[(u64, u64, u64, u64); 2]) -> String {
    let h = |v: u64| Hundredths(v).to_string();
    ["some", "full"]
        .iter()
        .zip(r)
        .map(|(name, (a, b, c, t))| format!("{name} avg10={} avg60={} avg300={} total={t}\n", h(*a), h(*b), h(*c)))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn generated_readings_agree(r in reading()) {
        let input = render(&r);
        prop_assert_eq!(compare_file(input.as_bytes()), Ok(()), "{}", input);
        for line in input.lines() {
            let theirs = parse_pressure_record(line).unwrap();
            let ours = Pressure::parse(line.as_bytes()).unwrap();
            let ours = if line.starts_with("some") { ours.some } else { ours.full };
            prop_assert_eq!(record_agrees(ours, &theirs), Ok(()));
        }
    }

    #[test]
    fn mutated_readings_diverge_only_in_known_ways(
        r in reading(),
        mutation in 0..9usize,
        pos in any::<prop::sample::Index>(),
    ) {
        let good = render(&r);
        let (input, allowed): (String, &[Relation]) = match mutation {
            0 => (good.replace('\n', "\r\n"), &[Relation::TheirsOnly]),
            1 => (good.replacen(' ', "\t", 1), &[Relation::TheirsOnly]),
            2 => (good.replace("total=", "total=+"), &[Relation::TheirsOnly]),
            3 => (good.replace("  ", " ").replacen(" ", "  ", 2), &[Relation::Agree]),
            4 => (good.lines().next().unwrap().to_owned(), &[Relation::OursOnly]),
            5 => {
                // Drop one of the six averages (they never carry the `\n`).
                let mut tokens: Vec<&str> = good.split(' ').collect();
                let candidates: Vec<usize> = (0..tokens.len()).filter(|&i| tokens[i].starts_with("avg")).collect();
                prop_assert_eq!(candidates.len(), 6);
                tokens.remove(candidates[pos.index(candidates.len())]);
                (tokens.join(" "), &[Relation::OursOnly])
            }
            6 => (good.replace("some", "SOME"), &[Relation::OursOnly]),
            7 => {
                let lines: Vec<&str> = good.lines().collect();
                (format!("{}\n{}\n", lines[1], lines[0]), &[Relation::BothOkDifferent, Relation::Agree])
            }
            _ => (good.replace("total=", "future=x total="), &[Relation::Agree]),
        };
        let rel = relation(input.as_bytes());
        prop_assert!(allowed.contains(&rel), "mutation {}: {:?} on {:?}", mutation, rel, input);
    }
}
