//! The parse path never touches the heap (counted per thread by
//! `allocation-counter`, which replaces the global allocator in this test
//! binary).

mod common;

use common::{PROC_NET_DEV, SYSFS_LO};
use stepmon_netns_stats::{NetDev, NetDevLines, NetnsCounters, StatFile, SysfsStatistics};

#[test]
fn proc_net_dev_parse_and_iterate_allocate_nothing() {
    // Sanity check that the counter counts on this thread.
    let boxed = allocation_counter::measure(|| {
        std::hint::black_box(Box::new(1u64));
    });
    assert_eq!(boxed.count_total, 1);

    let mut total = 0u64;
    let info = allocation_counter::measure(|| {
        let dev = NetDev::parse(PROC_NET_DEV).unwrap();
        for i in dev.interfaces() {
            total = total.wrapping_add(i.counters.rx_bytes).wrapping_add(i.name.len() as u64);
        }
        total = total.wrapping_add(dev.get(b"eth0").unwrap().tx_bytes);
        for i in NetDevLines::new(PROC_NET_DEV).unwrap() {
            total = total.wrapping_add(i.unwrap().counters.tx_packets);
        }
        // Error paths do not allocate either.
        assert!(NetDev::parse(b"").is_err());
        assert!(NetDev::parse(&PROC_NET_DEV[..PROC_NET_DEV.len() - 20]).is_err());
    });
    assert_eq!(info.count_total, 0, "{info:?}");
    assert_eq!(total, 47_463_650 + 3193 + 4 + 4 + 4 + 2 + 324_676 + 3317 + 29);
}

#[test]
fn sysfs_set_and_composites_allocate_nothing() {
    let values: Vec<(StatFile, String)> = common::sysfs_capture(SYSFS_LO)
        .into_iter()
        .map(|(n, v)| (StatFile::from_name(n.as_bytes()).unwrap(), v))
        .collect();
    let info = allocation_counter::measure(|| {
        let mut s = SysfsStatistics::default();
        for (file, value) in &values {
            s.set(*file, value.as_bytes()).unwrap();
        }
        assert_eq!(s.dev_counters().unwrap().rx_bytes, 3193);
    });
    assert_eq!(info.count_total, 0, "{info:?}");
}

/// Once its buffer has grown, re-reading a namespace's counters through the
/// held fd and parsing them in place does not allocate.
#[test]
fn warm_reader_with_net_dev_allocates_nothing() {
    let mut ns = NetnsCounters::current().unwrap();
    ns.with_net_dev(|_| ()).unwrap();
    let info = allocation_counter::measure(|| {
        let lo = ns.with_net_dev(|dev| dev.get(b"lo")).unwrap();
        assert!(lo.is_some());
    });
    assert_eq!(info.count_total, 0, "{info:?}");
}
