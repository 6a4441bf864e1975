//! Property tests: files rendered the way kernels print them parse back to
//! what was rendered; arbitrary bytes never panic; samples never decrease.

mod common;

use proptest::prelude::*;
use stepmon_model::network::NetworkSample;
use stepmon_netns_stats::{
    DevCounters, InterfaceCounters, NetDev, NetDevLines, NetworkSampler, Snapshot, StatFile, SysfsStatistics,
    TotalsOptions,
};

const HEADER: &str = "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n";

/// Field widths of `dev_seq_printf_stats()` (after the `%6s:`).
const WIDTHS: [usize; 16] = [7, 7, 4, 4, 4, 5, 10, 9, 8, 7, 4, 4, 4, 5, 7, 10];

/// How a line is laid out.
#[derive(Debug, Clone)]
enum Layout {
    /// Current kernels: `"%6s: %7llu %7llu ..."`.
    Kernel,
    /// Very old kernels: `"%6s:%8lu %7lu ..."` (no blank after the colon).
    Old,
    /// Any runs of blanks (tabs too) and any extra trailing columns.
    Loose(Vec<String>, Vec<u64>),
}

/// Bytes a kernel allows in a name (`dev_valid_name()`), incl. non-ASCII.
fn name_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        8 => (0x21u8..0x7f).prop_filter("no : or /", |b| *b != b':' && *b != b'/'),
        1 => (0x80u8..=0xff).prop_filter("0xa0 is kernel space", |b| *b != 0xa0),
        1 => prop_oneof![Just(0x01u8), Just(0x1f)],
    ]
}

fn name() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(name_byte(), 1..=15).prop_filter("not . or ..", |n| n != b"." && n != b"..")
}

fn counter() -> impl Strategy<Value = u64> {
    prop_oneof![0..100u64, 0..100_000_000u64, any::<u64>()]
}

fn counters() -> impl Strategy<Value = [u64; 16]> {
    proptest::array::uniform16(counter())
}

fn layout() -> impl Strategy<Value = Layout> {
    let blank_run = proptest::collection::vec(prop_oneof![Just(' '), Just('\t')], 1..4)
        .prop_map(|v| v.into_iter().collect::<String>());
    prop_oneof![
        Just(Layout::Kernel),
        Just(Layout::Old),
        (proptest::collection::vec(blank_run, 18), proptest::collection::vec(any::<u64>(), 0..3))
            .prop_map(|(b, extra)| Layout::Loose(b, extra)),
    ]
}

fn render_line(name: &[u8], cols: &[u64; 16], layout: &Layout) -> Vec<u8> {
    let pad = 6usize.saturating_sub(name.len());
    let mut out = vec![b' '; pad];
    out.extend_from_slice(name);
    out.push(b':');
    match layout {
        Layout::Kernel => {
            for (c, w) in cols.iter().zip(WIDTHS) {
                out.extend_from_slice(format!(" {c:>w$}").as_bytes());
            }
        }
        Layout::Old => {
            out.extend_from_slice(format!("{:>8}", cols[0]).as_bytes());
            for (c, w) in cols.iter().zip(WIDTHS).skip(1) {
                out.extend_from_slice(format!(" {c:>w$}").as_bytes());
            }
        }
        Layout::Loose(blanks, extra) => {
            out.extend_from_slice(blanks[0].as_bytes());
            for (i, c) in cols.iter().chain(extra).enumerate() {
                if i > 0 {
                    out.extend_from_slice(blanks[i.min(17)].as_bytes());
                }
                out.extend_from_slice(c.to_string().as_bytes());
            }
        }
    }
    out
}

fn render(ifaces: &[(Vec<u8>, [u64; 16], Layout)], final_newline: bool) -> Vec<u8> {
    let mut out = HEADER.as_bytes().to_vec();
    for (i, (name, cols, layout)) in ifaces.iter().enumerate() {
        out.extend(render_line(name, cols, layout));
        if final_newline || i + 1 < ifaces.len() {
            out.push(b'\n');
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn rendered_files_round_trip(
        ifaces in proptest::collection::vec((name(), counters(), layout()), 0..12),
        final_newline in any::<bool>(),
    ) {
        let input = render(&ifaces, final_newline);
        let dev = NetDev::parse(&input).unwrap();
        prop_assert_eq!(dev.len(), ifaces.len());
        for (got, (name, cols, _)) in dev.interfaces().zip(&ifaces) {
            prop_assert_eq!(got.name, name.as_slice());
            prop_assert_eq!(got.counters, DevCounters::from_array(*cols));
        }
        // The lazy iterator agrees with the validated view.
        let lazy: Vec<_> = NetDevLines::new(&input).unwrap().map(Result::unwrap).collect();
        prop_assert_eq!(lazy, dev.interfaces().collect::<Vec<_>>());
    }

    #[test]
    fn arbitrary_bytes_never_panic(input in proptest::collection::vec(any::<u8>(), 0..600)) {
        check_no_panic(&input)?;
    }

    #[test]
    fn mutated_real_capture_never_panics(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut input = common::PROC_NET_DEV.to_vec();
        for (at, byte) in edits {
            let i = at.index(input.len());
            input[i] = byte;
        }
        input.truncate(cut.index(input.len() + 1));
        check_no_panic(&input)?;
    }

    #[test]
    fn sysfs_values_round_trip(v in any::<u64>(), newline in any::<bool>()) {
        let mut s = SysfsStatistics::default();
        let text = if newline { format!("{v}\n") } else { v.to_string() };
        for &f in StatFile::ALL {
            s.set(f, text.as_bytes()).unwrap();
            prop_assert_eq!(s.get(f), Some(v));
        }
    }

    #[test]
    fn sample_json_round_trips_and_omits_zeros(vals in proptest::array::uniform8(prop_oneof![Just(0i64), 0..i64::MAX])) {
        let s = NetworkSample {
            rx_bytes: vals[0], rx_packets: vals[1], rx_errors: vals[2], rx_dropped: vals[3],
            tx_bytes: vals[4], tx_packets: vals[5], tx_errors: vals[6], tx_dropped: vals[7],
        };
        let json = serde_json::to_string(&s).unwrap();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(value.as_object().unwrap().len(), vals.iter().filter(|v| **v != 0).count());
        prop_assert_eq!(serde_json::from_str::<NetworkSample>(&json).unwrap(), s);
    }

    /// Without resets or churn a sample is exactly last − first; with random
    /// resets and churn, samples never decrease.
    #[test]
    fn sampler_is_exact_without_churn_and_monotonic_with_it(
        start in proptest::array::uniform2(0..1u64 << 40),
        steps in proptest::collection::vec((0..1u64 << 20, 0..1u64 << 20, any::<bool>(), any::<bool>()), 1..20),
    ) {
        let snap = |ifaces: &[(&str, u64)]| Snapshot {
            interfaces: ifaces
                .iter()
                .map(|&(name, rx)| InterfaceCounters {
                    name: name.into(),
                    counters: DevCounters { rx_bytes: rx, tx_bytes: rx / 2, ..Default::default() },
                })
                .collect(),
        };
        // Exact.
        let mut exact = NetworkSampler::new(TotalsOptions::default());
        exact.observe(&snap(&[("eth0", start[0]), ("eth1", start[1])]));
        let (mut a, mut b) = (start[0], start[1]);
        for &(da, db, _, _) in &steps {
            a += da;
            b += db;
            let out = exact.observe(&snap(&[("eth0", a), ("eth1", b)]));
            prop_assert_eq!(out.delta.rx_bytes, (a - start[0]) + (b - start[1]));
            prop_assert!(!out.counters_went_backwards && !out.interfaces_vanished);
        }
        // Monotonic with resets (eth0 recreated) and churn (eth1 comes and goes).
        let mut churn = NetworkSampler::new(TotalsOptions::default());
        let mut previous = churn.observe(&snap(&[("eth0", start[0])])).delta;
        let mut a = start[0];
        for &(da, db, reset, eth1) in &steps {
            a = if reset { da } else { a + da };
            let ifaces: Vec<(&str, u64)> =
                if eth1 { vec![("eth0", a), ("eth1", db)] } else { vec![("eth0", a)] };
            let out = churn.observe(&snap(&ifaces));
            prop_assert!(!out.delta.any_below(&previous), "{:?} < {:?}", out.delta, previous);
            previous = out.delta;
        }
    }
}

fn check_no_panic(input: &[u8]) -> Result<(), TestCaseError> {
    let lines = input.split(|&b| b == b'\n').count() as u32;
    match NetDev::parse(input) {
        Ok(dev) => {
            prop_assert_eq!(dev.interfaces().count(), dev.len());
            for i in dev.interfaces() {
                prop_assert!(!i.name.is_empty() && i.name.len() <= 15);
            }
        }
        Err(e) => {
            prop_assert!(e.offset as usize <= input.len(), "{e} beyond {}", input.len());
            prop_assert!(e.line >= 1 && e.line <= lines.max(1) + 1, "{e} with {lines} lines");
        }
    }
    if let Ok(lines) = NetDevLines::new(input) {
        for item in lines {
            let _ = item;
        }
    }
    let mut s = SysfsStatistics::default();
    let _ = s.set(StatFile::RxBytes, input);
    Ok(())
}
