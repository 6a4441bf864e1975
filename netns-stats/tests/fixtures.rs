//! Real captures (hybrid-6.18) and live reads of this machine's own
//! namespace, which need no privilege.

mod common;

use std::os::unix::fs::MetadataExt;

use common::{PROC_NET_DEV, SYSFS_ETH0, SYSFS_LO, sysfs_capture};
use stepmon_netns_stats::{
    DevCounters, Error, NetDev, NetnsCounters, NetworkSampler, Snapshot, StatFile, SysfsInterface, SysfsStatistics,
    TotalsOptions,
};

fn stats_from_capture(text: &str) -> SysfsStatistics {
    let mut stats = SysfsStatistics::default();
    for (name, value) in sysfs_capture(text) {
        let file = StatFile::from_name(name.as_bytes()).unwrap_or_else(|| panic!("unknown sysfs file {name}"));
        stats.set(file, value.as_bytes()).unwrap();
    }
    stats
}

#[test]
fn proc_net_dev_capture() {
    let dev = NetDev::parse(PROC_NET_DEV).unwrap();
    let names: Vec<_> = dev.interfaces().map(|i| i.name_str().unwrap()).collect();
    assert_eq!(names, ["lo", "ifb0", "ifb1", "eth0"]);
    assert_eq!(
        dev.get(b"eth0").unwrap(),
        DevCounters::from_array([47_463_650, 2772, 0, 0, 0, 0, 0, 0, 324_676, 3317, 0, 0, 0, 0, 0, 0])
    );
    assert_eq!(
        dev.get(b"lo").unwrap(),
        DevCounters::from_array([3193, 29, 0, 0, 0, 0, 0, 0, 3193, 29, 0, 0, 0, 0, 0, 0])
    );
    assert_eq!(dev.get(b"ifb0").unwrap(), DevCounters::default());
    let snap = Snapshot::from_net_dev(&dev);
    let t = snap.totals(TotalsOptions::default());
    assert_eq!((t.interfaces, t.counters.rx_bytes, t.counters.tx_packets), (3, 47_463_650, 3317));
    let t = snap.totals(TotalsOptions { include_loopback: true });
    assert_eq!((t.interfaces, t.counters.rx_bytes, t.counters.tx_packets), (4, 47_463_650 + 3193, 3317 + 29));
}

#[test]
fn sysfs_captures_have_all_24_files_and_lo_matches_proc_net_dev() {
    for capture in [SYSFS_ETH0, SYSFS_LO] {
        let names: Vec<_> = sysfs_capture(capture).into_iter().map(|(n, _)| n).collect();
        let all: Vec<_> = StatFile::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(names, all, "the capture lists exactly the 24 known files, in ls order");
    }
    let eth0 = stats_from_capture(SYSFS_ETH0);
    assert_eq!(
        (eth0.rx_bytes, eth0.rx_packets, eth0.tx_bytes, eth0.tx_packets),
        (Some(65_475_347), Some(3137), Some(343_521), Some(3511))
    );
    // lo was idle between the two captures, so sysfs and /proc/net/dev agree
    // column for column once the composite columns are summed.
    let lo = stats_from_capture(SYSFS_LO).dev_counters().unwrap();
    assert_eq!(lo, NetDev::parse(PROC_NET_DEV).unwrap().get(b"lo").unwrap());
}

/// Lays the capture out as a sysfs tree and reads it with the real reader.
#[test]
fn sysfs_reader_on_a_copy_of_the_capture() {
    // Removed on drop, also when an assertion fails.
    let scratch = tempfile::Builder::new().prefix("stepmon-netns-sysfs-").tempdir().unwrap();
    let root = scratch.path();
    let stats_dir = root.join("eth0").join("statistics");
    std::fs::create_dir_all(&stats_dir).unwrap();
    for (name, value) in sysfs_capture(SYSFS_ETH0) {
        if name != "rx_nohandler" {
            std::fs::write(stats_dir.join(name), value).unwrap();
        }
    }
    let iface = SysfsInterface::open_in(root, "eth0").unwrap();
    let read = iface.read_all().unwrap();
    let mut expected = stats_from_capture(SYSFS_ETH0);
    expected.rx_nohandler = None; // absent file (kernel < 4.6) is None, not 0
    assert_eq!(read, expected);
    assert_eq!(SysfsInterface::list_in(root).unwrap(), ["eth0"]);
    // Any other missing file is an error: the device is gone.
    std::fs::remove_file(stats_dir.join("tx_bytes")).unwrap();
    assert!(matches!(iface.read(StatFile::SAMPLE), Err(Error::Read { .. })));
    std::fs::write(stats_dir.join("tx_bytes"), "12 13\n").unwrap();
    assert!(matches!(iface.read(StatFile::SAMPLE), Err(Error::Parse { .. })));
    assert!(matches!(SysfsInterface::open_in(root, ".."), Err(Error::InvalidName { .. })));
    assert!(matches!(SysfsInterface::open_in(root, "a/b"), Err(Error::InvalidName { .. })));
    assert!(matches!(SysfsInterface::open_in(root, "nope0"), Err(Error::Open { .. })));
}

/// Our own namespace through every entry point: same namespace, same
/// interfaces as a plain read of /proc/net/dev.
#[test]
fn own_namespace_through_every_entry_point() {
    let own_ino = std::fs::metadata("/proc/self/ns/net").unwrap().ino();
    let plain = std::fs::read("/proc/net/dev").unwrap();
    let plain_names: Vec<String> =
        NetDev::parse(&plain).unwrap().interfaces().map(|i| String::from_utf8_lossy(i.name).into_owned()).collect();
    for mut ns in [
        NetnsCounters::current().unwrap(),
        NetnsCounters::open("/proc/self/ns/net").unwrap(),
        NetnsCounters::open(format!("/proc/{}/ns/net", std::process::id())).unwrap(),
        NetnsCounters::from_pid(std::process::id()).unwrap(),
    ] {
        assert_eq!(ns.namespace_id(), Some(own_ino), "{}", ns.source().display());
        let snap = ns.read().unwrap();
        let names: Vec<_> = snap.interfaces.iter().map(|i| i.name.clone()).collect();
        assert_eq!(names, plain_names, "{}", ns.source().display());
        // Counters only grow between the plain read and ours.
        let before = NetDev::parse(&plain).unwrap();
        for i in before.interfaces() {
            let now = snap.get(i.name_str().unwrap()).unwrap();
            assert!(!now.any_below(&i.counters), "{:?} went backwards", i.name_str());
        }
        // Re-reading the same fd works and does not go backwards either.
        let again = ns.read().unwrap();
        for i in &snap.interfaces {
            assert!(!again.get(&i.name).unwrap().any_below(&i.counters));
        }
    }
}

/// sysfs and /proc/net/dev expose the same source counters: read /proc first,
/// sysfs second, and every column of the host's `lo` can only have grown.
#[test]
fn host_sysfs_and_proc_net_dev_agree_on_lo() {
    let mut ns = NetnsCounters::current().unwrap();
    let proc_lo = *ns.read().unwrap().get("lo").unwrap();
    let sys_lo = SysfsInterface::open("lo").unwrap().read_all().unwrap().dev_counters().unwrap();
    assert!(!sys_lo.any_below(&proc_lo), "sysfs {sys_lo:?} < proc {proc_lo:?}");
    assert!(SysfsInterface::list().unwrap().iter().any(|n| n == "lo"));
    let sample_only = SysfsInterface::open("lo").unwrap().read(StatFile::SAMPLE).unwrap();
    assert!(sample_only.rx_bytes.is_some() && sample_only.multicast.is_none());
}

#[test]
fn open_errors_are_typed() {
    assert!(matches!(NetnsCounters::open("/nonexistent/ns"), Err(Error::Open { .. })));
    // A namespace file of another type: setns(CLONE_NEWNET) refuses it
    // (EINVAL as root, EPERM otherwise).
    let err = NetnsCounters::open("/proc/self/ns/uts").unwrap_err();
    assert!(matches!(err, Error::Setns { .. }), "{err}");
    assert!(matches!(NetnsCounters::from_pid(u32::MAX), Err(Error::Open { .. })));
}

#[test]
fn sampler_on_live_readings_starts_at_zero() {
    let mut ns = NetnsCounters::current().unwrap();
    let mut sampler = NetworkSampler::new(TotalsOptions::default());
    let first = sampler.observe(&ns.read().unwrap());
    assert_eq!(first.delta, DevCounters::default());
    assert_eq!(serde_json::to_string(&first.sample).unwrap(), "{}");
}

#[test]
fn readers_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<NetnsCounters>();
    check::<SysfsInterface>();
}
