//! Property tests: random values rendered exactly as the kernel prints them
//! parse back to the same values, whatever the key order and whatever
//! unknown keys are mixed in; arbitrary bytes never make a parser panic.
//!
//! Case counts are kept small enough for the whole suite to run in a few
//! seconds in debug builds.

mod common;

use std::collections::BTreeMap;

use common::ALL_PARSERS;
use proptest::prelude::*;
use stepmon_cgroupfs_parse::format::single::{self, Limit};
use stepmon_cgroupfs_parse::number::Hundredths;
use stepmon_cgroupfs_parse::{
    CpuMax, CpuStat, CpuStatLocal, DeviceId, ErrorKind, IoStat, MemoryEvents, MemoryStat, PidsEvents, Result,
};

/// Keys of `cpu.stat` printed with `%d` from a C `int`.
const C_INT_KEYS: [&str; 3] = ["nr_periods", "nr_throttled", "nr_bursts"];

fn is_c_int(key: &str) -> bool {
    C_INT_KEYS.contains(&key)
}

/// A value for `key`, as the parser will return it.
fn value_for(key: &'static str) -> BoxedStrategy<u64> {
    if is_c_int(key) {
        // Any 32-bit counter state, including the wrapped (negative) ones.
        any::<u32>().prop_map(u64::from).boxed()
    } else {
        prop_oneof![any::<u64>(), 0..1_000_000u64, Just(0), Just(u64::MAX)].boxed()
    }
}

/// The value as the kernel prints it (`%d` for C ints, `%llu` otherwise).
fn render_value(key: &str, value: u64) -> String {
    if is_c_int(key) {
        // `%d` of the wrapped counter: the bit pattern read as a signed int.
        let bits = u32::try_from(value).unwrap();
        i32::from_ne_bytes(bits.to_ne_bytes()).to_string()
    } else {
        value.to_string()
    }
}

/// A key unknown to the type, as a future kernel might add.
fn unknown_key(known: &'static [&'static str]) -> impl Strategy<Value = String> {
    "[a-z_]{1,20}".prop_filter("must not be a known key", move |k| !known.contains(&k.as_str()))
}

/// A value of an unknown key: a number, a signed number or printable text.
fn unknown_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<u64>().prop_map(|v| v.to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
        "[!-~][ -~]{0,30}",
        Just("18446744073709551616".to_owned()),
    ]
}

/// One flat keyed file: the expected value of every known key (absent ones
/// `None`) and the rendered lines, shuffled, with unknown keys mixed in.
#[derive(Debug, Clone)]
struct FlatCase {
    expected: Vec<(&'static str, Option<u64>)>,
    lines: Vec<String>,
    trailing_newline: bool,
}

impl FlatCase {
    fn input(&self) -> String {
        let mut s = self.lines.join("\n");
        if self.trailing_newline && !s.is_empty() {
            s.push('\n');
        }
        s
    }
}

fn flat_case(keys: &'static [&'static str], with_unknown: bool) -> impl Strategy<Value = FlatCase> {
    let values: Vec<_> = keys.iter().map(|&k| prop::option::weighted(0.85, value_for(k))).collect();
    let unknown = prop::collection::vec((unknown_key(keys), unknown_value()), if with_unknown { 0..6 } else { 0..1 });
    (values, unknown, any::<bool>()).prop_flat_map(move |(values, unknown, trailing_newline)| {
        let expected: Vec<_> = keys.iter().copied().zip(values).collect();
        let mut lines: Vec<String> =
            expected.iter().filter_map(|&(k, v)| v.map(|v| format!("{k} {}", render_value(k, v)))).collect();
        if with_unknown {
            lines.extend(unknown.into_iter().map(|(k, v)| format!("{k} {v}")));
        }
        (Just(expected), Just(lines).prop_shuffle(), Just(trailing_newline))
            .prop_map(|(expected, lines, trailing_newline)| FlatCase { expected, lines, trailing_newline })
    })
}

/// The kernel's own rendering: every key present, print order, trailing newline.
fn render_in_order(keys: &[&str], values: &[u64]) -> String {
    keys.iter().zip(values).map(|(k, &v)| format!("{k} {}\n", render_value(k, v))).collect()
}

fn in_order_values(keys: &'static [&'static str]) -> impl Strategy<Value = Vec<u64>> {
    keys.iter().map(|&k| value_for(k)).collect::<Vec<_>>()
}

macro_rules! flat_roundtrip {
    ($name:ident, $ty:ty) => {
        mod $name {
            use super::*;

            fn parse(input: &str) -> Result<Vec<(&'static str, Option<u64>)>> {
                <$ty>::parse(input.as_bytes()).map(|s| s.iter().collect())
            }

            proptest! {
                #![proptest_config(ProptestConfig::with_cases(96))]

                #[test]
                fn kernel_order_roundtrips(values in in_order_values(<$ty>::KEYS)) {
                    let input = render_in_order(<$ty>::KEYS, &values);
                    let parsed = <$ty>::parse(input.as_bytes()).unwrap();
                    let expected: Vec<_> = <$ty>::KEYS.iter().copied().zip(values.iter().copied().map(Some)).collect();
                    prop_assert_eq!(parsed.iter().collect::<Vec<_>>(), expected);
                    for (key, value) in <$ty>::KEYS.iter().zip(&values) {
                        prop_assert_eq!(parsed.get(key), Some(*value));
                    }
                }

                #[test]
                fn shuffled_with_missing_keys_roundtrips(case in flat_case(<$ty>::KEYS, false)) {
                    prop_assert_eq!(parse(&case.input()).unwrap(), case.expected);
                }

                #[test]
                fn unknown_keys_are_ignored(case in flat_case(<$ty>::KEYS, true)) {
                    prop_assert_eq!(parse(&case.input()).unwrap(), case.expected);
                }

                #[test]
                fn last_duplicate_wins(
                    key in prop::sample::select(<$ty>::KEYS),
                    first in any::<u32>(),
                    second in any::<u32>(),
                ) {
                    let (first, second) = (u64::from(first), u64::from(second));
                    let input = format!(
                        "{key} {}\n{key} {}\n",
                        render_value(key, first),
                        render_value(key, second)
                    );
                    prop_assert_eq!(<$ty>::parse(input.as_bytes()).unwrap().get(key), Some(second));
                }

                #[test]
                fn a_bad_value_is_located_exactly(
                    case in flat_case(<$ty>::KEYS, true),
                    key in prop::sample::select(<$ty>::KEYS),
                    bad in prop_oneof![
                        Just("x"), Just("1x"), Just("+1"), Just("1 "), Just(" 1"), Just("1\r"),
                        Just("0x1f"), Just("1.0"), Just("18446744073709551616"), Just("--1"), Just("-"),
                    ],
                    at in any::<prop::sample::Index>(),
                ) {
                    // Insert `key bad` at a random line; the error must point at `bad`.
                    let mut lines = case.lines.clone();
                    let at = at.index(lines.len() + 1);
                    lines.insert(at, format!("{key} {bad}"));
                    let input = lines.join("\n");
                    // Lines before `at` are valid, so the first error is ours.
                    let offset: usize = lines[..at].iter().map(|l| l.len() + 1).sum::<usize>() + key.len() + 1;
                    let e = <$ty>::parse(input.as_bytes()).unwrap_err();
                    prop_assert_eq!((e.line as usize, e.offset as usize), (at + 1, offset), "{}", input);
                    prop_assert!(matches!(e.kind, ErrorKind::InvalidNumber | ErrorKind::Overflow), "{:?}", e.kind);
                }
            }
        }
    };
}

flat_roundtrip!(cpu_stat, CpuStat);
flat_roundtrip!(cpu_stat_local, CpuStatLocal);
flat_roundtrip!(memory_stat, MemoryStat);
flat_roundtrip!(memory_events, MemoryEvents);
flat_roundtrip!(pids_events, PidsEvents);

// ------------------------------------------------------------------ io.stat

/// Every field of an `io.stat` device line the kernel can print.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Device {
    id: DeviceId,
    /// rbytes, wbytes, rios, wios, dbytes, dios: printed together or not at all.
    standard: Option<[u64; 6]>,
    /// use_delay, delay_nsec (blkcg_debug_stats).
    delay: Option<(i64, u64)>,
    /// cost.vrate (root only), cost.usage, and the debug triple wait/indebt/indelay.
    cost: Option<(Option<Hundredths>, u64, Option<[u64; 3]>)>,
    /// depth, then avg_lat+win (rotational) or missed+total.
    iolat: Option<(Limit, bool, u64, u64)>,
}

/// Values small enough that 8 devices cannot overflow a sum.
fn io_value() -> impl Strategy<Value = u64> {
    prop_oneof![0..10_000u64, 0..(u64::MAX >> 4)]
}

fn device(id: DeviceId) -> impl Strategy<Value = Device> {
    (
        prop::option::of(prop::array::uniform6(io_value())),
        prop::option::of((any::<i32>().prop_map(i64::from), any::<u64>())),
        prop::option::of((
            prop::option::of((0..1_000_000u64).prop_map(Hundredths)),
            any::<u64>(),
            prop::option::of(prop::array::uniform3(any::<u64>())),
        )),
        prop::option::of((
            prop_oneof![Just(Limit::Max), any::<u64>().prop_map(Limit::Value)],
            any::<bool>(),
            any::<u64>(),
            any::<u64>(),
        )),
    )
        .prop_map(move |(standard, delay, cost, iolat)| Device { id, standard, delay, cost, iolat })
}

fn devices() -> impl Strategy<Value = Vec<Device>> {
    prop::collection::btree_set((any::<u32>(), any::<u32>()), 0..8).prop_flat_map(|ids| {
        ids.into_iter().map(|(major, minor)| device(DeviceId { major, minor })).collect::<Vec<_>>()
    })
}

/// The tokens after `MAJ:MIN`, each with its leading space, as
/// `blkcg_print_one_stat` and the policies' `pd_stat_fn` print them.
fn tokens(d: &Device) -> Vec<String> {
    let mut t = Vec::new();
    if let Some([rb, wb, ri, wi, db, di]) = d.standard {
        // The standard block follows the device's own space directly.
        t.push(format!("rbytes={rb} wbytes={wb} rios={ri} wios={wi} dbytes={db} dios={di}"));
    } else {
        t.push(String::new());
    }
    if let Some((use_delay, delay_nsec)) = d.delay {
        t.push(format!("use_delay={use_delay} delay_nsec={delay_nsec}"));
    }
    if let Some((vrate, usage, debug)) = d.cost {
        if let Some(vrate) = vrate {
            t.push(format!("cost.vrate={vrate}"));
        }
        t.push(format!("cost.usage={usage}"));
        if let Some([wait, indebt, indelay]) = debug {
            t.push(format!("cost.wait={wait} cost.indebt={indebt} cost.indelay={indelay}"));
        }
    }
    if let Some((depth, rotational, a, b)) = d.iolat {
        let depth = match depth {
            Limit::Max => "max".to_owned(),
            Limit::Value(v) => v.to_string(),
        };
        t.push(format!("depth={depth}"));
        t.push(if rotational { format!("avg_lat={a} win={b}") } else { format!("missed={a} total={b}") });
    }
    t
}

fn render_io(devices: &[Device]) -> String {
    devices.iter().map(|d| format!("{} {}\n", d.id, tokens(d).join(" "))).collect()
}

type DeviceView = (
    DeviceId,
    [Option<u64>; 6],
    (Option<i64>, Option<u64>),
    (Option<Hundredths>, Option<u64>, [Option<u64>; 3]),
    (Option<Limit>, [Option<u64>; 4]),
);

fn expected_view(d: &Device) -> DeviceView {
    let standard = d.standard.map_or([None; 6], |s| s.map(Some));
    let delay = d.delay.map_or((None, None), |(u, n)| (Some(u), Some(n)));
    let cost = match d.cost {
        None => (None, None, [None; 3]),
        Some((vrate, usage, debug)) => (vrate, Some(usage), debug.map_or([None; 3], |x| x.map(Some))),
    };
    let iolat = match d.iolat {
        None => (None, [None; 4]),
        Some((depth, true, a, b)) => (Some(depth), [Some(a), Some(b), None, None]),
        Some((depth, false, a, b)) => (Some(depth), [None, None, Some(a), Some(b)]),
    };
    (d.id, standard, delay, cost, iolat)
}

fn parsed_view(d: &stepmon_cgroupfs_parse::IoDeviceStat) -> DeviceView {
    (
        d.device,
        [d.rbytes, d.wbytes, d.rios, d.wios, d.dbytes, d.dios],
        (d.use_delay, d.delay_nsec),
        (d.cost_vrate, d.cost_usage_usec, [d.cost_wait_usec, d.cost_indebt_usec, d.cost_indelay_usec]),
        (d.iolat_depth, [d.iolat_avg_lat_usec, d.iolat_win_msec, d.iolat_missed, d.iolat_total]),
    )
}

fn expected_totals(devices: &[Device]) -> [Option<u64>; 6] {
    let mut totals = [None; 6];
    for d in devices {
        if let Some(s) = d.standard {
            for (t, v) in totals.iter_mut().zip(s) {
                *t = Some(t.unwrap_or(0) + v);
            }
        }
    }
    totals
}

fn totals_of(io: &IoStat<'_>) -> [Option<u64>; 6] {
    let t = io.totals();
    [t.rbytes, t.wbytes, t.rios, t.wios, t.dbytes, t.dios]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn io_stat_roundtrips(devices in devices()) {
        let input = render_io(&devices);
        let io = IoStat::parse(input.as_bytes()).unwrap();
        prop_assert_eq!(io.device_count(), devices.len());
        prop_assert_eq!(totals_of(&io), expected_totals(&devices));
        let parsed: Vec<_> = io.devices().map(|d| parsed_view(&d)).collect();
        let expected: Vec<_> = devices.iter().map(expected_view).collect();
        prop_assert_eq!(parsed, expected);
        for d in &devices {
            prop_assert_eq!(io.device(d.id).map(|p| parsed_view(&p)), Some(expected_view(d)));
        }
    }

    #[test]
    fn io_stat_token_and_line_order_and_unknown_tokens_do_not_matter(
        devices in devices(),
        seed in any::<u64>(),
        unknown in prop::collection::vec(("[a-z_]{1,20}", "[!-~]{0,20}"), 0..4),
    ) {
        const KNOWN: [&str; 11] =
            ["rbytes", "wbytes", "rios", "wios", "dbytes", "dios", "use_delay", "delay_nsec", "depth", "avg_lat", "win"];
        const KNOWN2: [&str; 2] = ["missed", "total"];
        let unknown: Vec<String> = unknown
            .into_iter()
            .filter(|(k, _)| !KNOWN.contains(&k.as_str()) && !KNOWN2.contains(&k.as_str()))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        // Deterministic shuffles from `seed` (a simple LCG is enough here).
        let mut state = seed | 1;
        let mut next = |n: usize| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            usize::try_from(state >> 33).unwrap() % n.max(1)
        };
        let mut lines: Vec<String> = devices
            .iter()
            .map(|d| {
                let mut t: Vec<String> = tokens(d)
                    .iter()
                    .flat_map(|group| group.split(' ').map(str::to_owned).collect::<Vec<_>>())
                    .filter(|t| !t.is_empty())
                    .collect();
                t.extend(unknown.iter().cloned());
                for i in (1..t.len()).rev() {
                    t.swap(i, next(i + 1));
                }
                // Runs of spaces are tolerated too.
                format!("{}  {}", d.id, t.join(if next(2) == 0 { " " } else { "  " }))
            })
            .collect();
        for i in (1..lines.len()).rev() {
            lines.swap(i, next(i + 1));
        }
        let input = lines.join("\n");
        let io = IoStat::parse(input.as_bytes()).unwrap();
        prop_assert_eq!(totals_of(&io), expected_totals(&devices));
        let mut parsed: Vec<_> = io.devices().map(|d| parsed_view(&d)).collect();
        parsed.sort_by_key(|v| v.0);
        let expected: Vec<_> = devices.iter().map(expected_view).collect();
        prop_assert_eq!(parsed, expected);
    }

    #[test]
    fn io_stat_totals_overflow_exactly_when_the_sum_does(values in prop::collection::vec(any::<u64>(), 1..4)) {
        let input: String = values.iter().enumerate().map(|(i, v)| format!("8:{i} rbytes={v}\n")).collect();
        let sum: u128 = values.iter().map(|&v| u128::from(v)).sum();
        match IoStat::parse(input.as_bytes()) {
            Ok(io) => prop_assert_eq!(io.totals().rbytes.map(u128::from), Some(sum)),
            Err(e) => {
                prop_assert!(sum > u128::from(u64::MAX));
                prop_assert_eq!(e.kind, ErrorKind::Overflow);
                // Reported on the first line at which the running sum overflows.
                let mut running = 0u128;
                let line = values.iter().position(|&v| { running += u128::from(v); running > u128::from(u64::MAX) });
                prop_assert_eq!(Some(e.line as usize), line.map(|l| l + 1));
            }
        }
    }

    #[test]
    fn single_values_and_limits_roundtrip(v in any::<u64>(), newline in any::<bool>()) {
        let nl = if newline { "\n" } else { "" };
        prop_assert_eq!(single::parse_u64(format!("{v}{nl}").as_bytes()), Ok(v));
        prop_assert_eq!(Limit::parse(format!("{v}{nl}").as_bytes()), Ok(Limit::Value(v)));
        prop_assert_eq!(
            CpuMax::parse(format!("{v} {v}{nl}").as_bytes()),
            Ok(CpuMax { quota_usec: Limit::Value(v), period_usec: v })
        );
    }

    #[test]
    fn hundredths_display_roundtrips(v in any::<u64>()) {
        let h = Hundredths(v);
        prop_assert_eq!(Hundredths::parse(h.to_string().as_bytes()), Ok(h));
    }
}

// --------------------------------------------------------- never panics

/// Bytes that are close to valid input: fragments of real files glued
/// together, so parsers get past their first checks.
fn near_valid_bytes() -> impl Strategy<Value = Vec<u8>> {
    const PIECES: &[&[u8]] = &[
        b"0",
        b"1",
        b"42",
        b"4294967296",
        b"18446744073709551615",
        b"18446744073709551616",
        b"-1",
        b"-",
        b"max",
        b" ",
        b"  ",
        b"\n",
        b"\r",
        b"\t",
        b"=",
        b":",
        b".",
        b"/",
        b"\\",
        b"\\040",
        b"\\134",
        b"\\9",
        b"\x00",
        b"\xff",
        b"\xc3\xa4",
        b"8:0",
        b"259:1",
        b"rbytes",
        b"cost.vrate",
        b"100.00",
        b"1.234",
        b"depth",
        b"use_delay",
        b"usage_usec",
        b"nr_periods",
        b"anon",
        b"oom_kill",
        b"populated",
        b"frozen",
        b"nr_subsys_cpu",
        b"nr_dying_subsys_",
        b"nr_descendants",
        b"domain",
        b"threaded",
        b"cgroup2",
        b"shared:1",
        b"0::",
        b"1:cpu:",
        b" (deleted)",
        b"/sys/fs/cgroup",
        b"some",
        b"full",
        b"avg10",
        b"total",
    ];
    prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|pieces| pieces.concat())
}

fn run_all(input: &[u8]) {
    for (_, parse) in ALL_PARSERS {
        // The result does not matter, only that there is one.
        let _ = parse(input);
    }
    // Lookups with arbitrary keys and paths as well.
    if let Ok(s) = CpuStat::parse(input) {
        let _ = s.get(std::str::from_utf8(input).unwrap_or(""));
    }
    let _ = stepmon_cgroupfs_parse::mountinfo::find_cgroup2_mount(input, input);
}

const MUTATED_FILES: &[&[u8]] = &[
    include_bytes!("data/pure-v2-handmade/io.stat"),
    include_bytes!("data/pure-v2-handmade/memory.stat"),
    include_bytes!("data/pure-v2-handmade/cgroup.stat"),
    include_bytes!("data/pure-v2-handmade/proc_self_mountinfo.txt"),
    include_bytes!("data/hybrid-6.18/proc_self_cgroup.txt"),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(input in prop::collection::vec(any::<u8>(), 0..300)) {
        run_all(&input);
    }

    #[test]
    fn near_valid_bytes_never_panic(input in near_valid_bytes()) {
        run_all(&input);
    }

    #[test]
    fn valid_file_with_one_byte_changed_never_panics(
        file in prop::sample::select(MUTATED_FILES),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let mut input = file.to_vec();
        let at = at.index(input.len());
        input[at] = byte;
        run_all(&input);
    }
}

#[test]
fn the_near_valid_generator_reaches_valid_inputs() {
    // Guard against a generator that only ever produces errors: a fixed
    // sample of it must contain inputs that some typed parser accepts with a
    // non-trivial result.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = near_valid_bytes();
    let mut accepted = BTreeMap::new();
    for _ in 0..2000 {
        let input = strategy.new_tree(&mut runner).unwrap().current();
        for (name, parse) in ALL_PARSERS {
            if !input.is_empty() && parse(&input).is_ok() {
                *accepted.entry(*name).or_insert(0usize) += 1;
            }
        }
    }
    for name in ["CpuStat", "IoStat", "single::parse_u64", "Limit", "ProcCgroup", "ControllerList"] {
        assert!(accepted.get(name).copied().unwrap_or(0) > 0, "{name} never accepted: {accepted:?}");
    }
}
