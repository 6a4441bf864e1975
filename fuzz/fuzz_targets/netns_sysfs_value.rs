//! `/sys/class/net/<if>/statistics/*` (crate `stepmon-netns-stats`):
//! `SysfsStatistics::{set, get, dev_counters}` for every `StatFile`, and
//! `StatFile::{ALL, SAMPLE, name, from_name}`, checked against a
//! hand-written table of the 24 files and their fields, an independent
//! model of the single-value grammar (one decimal `u64`, optional `\n`),
//! and the `/proc/net/dev` sums of `dev_seq_printf_stats()` (u64 wrapping).
//!
//! Input: file contents separated by NUL bytes, given to the files in
//! `StatFile::ALL` order, starting over when they run out (without a NUL,
//! every file gets the whole input).
#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use stepmon_fuzz::{check_error, model_single_u64};
use stepmon_netns_stats::{DevCounters, StatFile, SysfsStatistics};

type Field = fn(&SysfsStatistics) -> Option<u64>;

/// Every statistics file, its name and its field, in `ls` order.
const TABLE: [(StatFile, &str, Field); 24] = [
    (StatFile::Collisions, "collisions", |s| s.collisions),
    (StatFile::Multicast, "multicast", |s| s.multicast),
    (StatFile::RxBytes, "rx_bytes", |s| s.rx_bytes),
    (StatFile::RxCompressed, "rx_compressed", |s| s.rx_compressed),
    (StatFile::RxCrcErrors, "rx_crc_errors", |s| s.rx_crc_errors),
    (StatFile::RxDropped, "rx_dropped", |s| s.rx_dropped),
    (StatFile::RxErrors, "rx_errors", |s| s.rx_errors),
    (StatFile::RxFifoErrors, "rx_fifo_errors", |s| s.rx_fifo_errors),
    (StatFile::RxFrameErrors, "rx_frame_errors", |s| s.rx_frame_errors),
    (StatFile::RxLengthErrors, "rx_length_errors", |s| s.rx_length_errors),
    (StatFile::RxMissedErrors, "rx_missed_errors", |s| s.rx_missed_errors),
    (StatFile::RxNohandler, "rx_nohandler", |s| s.rx_nohandler),
    (StatFile::RxOverErrors, "rx_over_errors", |s| s.rx_over_errors),
    (StatFile::RxPackets, "rx_packets", |s| s.rx_packets),
    (StatFile::TxAbortedErrors, "tx_aborted_errors", |s| s.tx_aborted_errors),
    (StatFile::TxBytes, "tx_bytes", |s| s.tx_bytes),
    (StatFile::TxCarrierErrors, "tx_carrier_errors", |s| s.tx_carrier_errors),
    (StatFile::TxCompressed, "tx_compressed", |s| s.tx_compressed),
    (StatFile::TxDropped, "tx_dropped", |s| s.tx_dropped),
    (StatFile::TxErrors, "tx_errors", |s| s.tx_errors),
    (StatFile::TxFifoErrors, "tx_fifo_errors", |s| s.tx_fifo_errors),
    (StatFile::TxHeartbeatErrors, "tx_heartbeat_errors", |s| s.tx_heartbeat_errors),
    (StatFile::TxPackets, "tx_packets", |s| s.tx_packets),
    (StatFile::TxWindowErrors, "tx_window_errors", |s| s.tx_window_errors),
];

/// `dev_seq_printf_stats()` (`net/core/net-procfs.c`): each `/proc/net/dev`
/// column as the sysfs files it adds up.
const COLUMNS: [&[&str]; 16] = [
    &["rx_bytes"],
    &["rx_packets"],
    &["rx_errors"],
    &["rx_dropped", "rx_missed_errors"],
    &["rx_fifo_errors"],
    &["rx_length_errors", "rx_over_errors", "rx_crc_errors", "rx_frame_errors"],
    &["rx_compressed"],
    &["multicast"],
    &["tx_bytes"],
    &["tx_packets"],
    &["tx_errors"],
    &["tx_dropped"],
    &["tx_fifo_errors"],
    &["collisions"],
    &["tx_carrier_errors", "tx_aborted_errors", "tx_window_errors", "tx_heartbeat_errors"],
    &["tx_compressed"],
];

fn fields_of(s: &SysfsStatistics) -> Vec<Option<u64>> {
    TABLE.iter().map(|(_, _, field)| field(s)).collect()
}

fn check_static_tables() {
    assert_eq!(StatFile::ALL.len(), TABLE.len());
    for (&file, &(expected, name, _)) in StatFile::ALL.iter().zip(&TABLE) {
        assert_eq!((file, file.name()), (expected, name));
        assert_eq!(StatFile::from_name(name.as_bytes()), Some(file));
    }
    assert!(StatFile::ALL.windows(2).all(|w| w[0].name() < w[1].name()), "ALL is in ls order");
    let sample: Vec<_> = StatFile::SAMPLE.iter().map(|f| f.name()).collect();
    assert_eq!(
        sample,
        ["rx_bytes", "rx_packets", "rx_errors", "rx_dropped", "tx_bytes", "tx_packets", "tx_errors", "tx_dropped"]
    );
    let used: Vec<&str> = COLUMNS.iter().flat_map(|c| c.iter().copied()).collect();
    assert_eq!(used.len(), 23, "every file but rx_nohandler feeds /proc/net/dev");
    assert!(!used.contains(&"rx_nohandler"));
}

fuzz_target!(|data: &[u8]| {
    static TABLES: std::sync::Once = std::sync::Once::new();
    TABLES.call_once(check_static_tables);

    let pieces: Vec<&[u8]> = data.split(|&b| b == 0).collect();
    let mut stats = SysfsStatistics::default();
    assert!(fields_of(&stats).iter().all(Option::is_none));
    let mut model: BTreeMap<&str, u64> = BTreeMap::new();
    for (i, &(file, name, field)) in TABLE.iter().enumerate() {
        let content = pieces[i % pieces.len()];
        let known = StatFile::from_name(content);
        assert_eq!(known.map(StatFile::name), TABLE.iter().map(|t| t.1).find(|n| n.as_bytes() == content));

        let before = fields_of(&stats);
        let result = stats.set(file, content);
        let after = fields_of(&stats);
        match (result, model_single_u64(content)) {
            (Ok(()), Ok(value)) => {
                model.insert(name, value);
                assert_eq!(field(&stats), Some(value));
                assert_eq!(stats.get(file), Some(value));
                // Only this file's field changed.
                for (j, (b, a)) in before.iter().zip(&after).enumerate() {
                    if j != i {
                        assert_eq!(b, a, "set({name}) changed {}", TABLE[j].1);
                    }
                }
            }
            (Err(err), Err(expected)) => {
                assert_eq!(err, expected, "error differs from the model for {content:?}");
                check_error(content, &err);
                assert_eq!(before, after, "a failed set({name}) changed a value");
            }
            (got, expected) => panic!("set({name}, {content:?}) gave {got:?}, model {expected:?}"),
        }
    }
    for &(file, name, field) in &TABLE {
        assert_eq!(stats.get(file), model.get(name).copied(), "get({name})");
        assert_eq!(field(&stats), stats.get(file));
    }

    // dev_counters: every involved file read, else None; sums wrap like C.
    let columns: Option<Vec<u64>> = COLUMNS
        .iter()
        .map(|parts| parts.iter().try_fold(0u64, |acc, p| model.get(p).map(|v| acc.wrapping_add(*v))))
        .collect();
    let got = stats.dev_counters();
    assert_eq!(got.map(|c| c.to_array().to_vec()), columns, "dev_counters() from {model:?}");
    if let Some(c) = got {
        assert_eq!(DevCounters::from_array(c.to_array()), c);
    }
});
