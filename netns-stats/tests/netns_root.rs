//! Real network namespaces (root and iproute2 only; otherwise each test
//! prints `SKIPPED <test>: <why>` and returns).
//!
//! Everything happens inside namespaces these tests create
//! (`stepmon-test-<pid>-<x>`), on a veth pair between them with TEST-NET-1
//! addresses (192.0.2.0/24, RFC 5737); no host interface or other address is
//! touched. The namespaces are deleted by a drop guard, also on failure.

mod common;

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{Namespaces, in_netns, ip, skip_unless_root};
use stepmon_netns_stats::{NetDev, NetnsCounters, NetworkSampler, SysfsInterface, TotalsOptions};

const MIB: u64 = 1 << 20;
const TIMEOUT: Duration = Duration::from_secs(20);

/// Sends `bytes` from a thread in namespace `from` to a listener on a thread
/// in namespace `to`, bound to `addr`; returns the bytes the receiver read.
fn transfer(to: &std::path::Path, from: &std::path::Path, addr: Ipv4Addr, bytes: u64) -> u64 {
    let (port_tx, port_rx) = mpsc::channel();
    let receiver = in_netns(to, move || {
        let listener = TcpListener::bind((addr, 0)).expect("bind");
        port_tx.send(listener.local_addr().unwrap().port()).unwrap();
        let (mut conn, _) = listener.accept().expect("accept");
        conn.set_read_timeout(Some(TIMEOUT)).unwrap();
        let mut total = 0u64;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = conn.read(&mut buf).expect("read");
            if n == 0 {
                return total;
            }
            total += n as u64;
        }
    });
    let port = port_rx.recv_timeout(TIMEOUT).expect("receiver did not start");
    let sender = in_netns(from, move || {
        let mut conn = TcpStream::connect_timeout(&SocketAddr::from((addr, port)), TIMEOUT).expect("connect");
        conn.set_write_timeout(Some(TIMEOUT)).unwrap();
        let chunk = vec![0x5au8; 64 * 1024];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            conn.write_all(&chunk[..n]).expect("write");
            left -= n as u64;
        }
        conn.shutdown(std::net::Shutdown::Write).unwrap();
    });
    sender.join().expect("sender thread");
    receiver.join().expect("receiver thread")
}

/// Turns IPv6 off for the calling thread's namespace (sysctl files under
/// /proc/sys/net belong to the opener's namespace), if the kernel has IPv6.
fn disable_ipv6() {
    for conf in ["all", "default"] {
        let path = format!("/proc/sys/net/ipv6/conf/{conf}/disable_ipv6");
        if std::path::Path::new(&path).exists() {
            std::fs::write(&path, "1").unwrap();
        }
    }
}

/// Two namespaces A and B joined by a veth pair; 1 MiB sent from B to A.
#[test]
fn one_mib_over_a_veth_pair_is_counted_in_the_step_namespace() {
    if skip_unless_root("one_mib_over_a_veth_pair_is_counted_in_the_step_namespace") {
        return;
    }
    let ns = Namespaces::create(&["a", "b"]);
    let (a, b) = (ns.name(0).to_string(), ns.name(1).to_string());
    // No IPv6 in A and B: its autonomous packets (DAD, MLD, router
    // solicitations) would otherwise land between our readings.
    for i in 0..2 {
        in_netns(&ns.path(i), disable_ipv6).join().unwrap();
    }
    // Created directly inside A with its peer inside B: never in the host.
    ip(&["-n", &a, "link", "add", "veth-a", "type", "veth", "peer", "name", "veth-b", "netns", &b]);
    ip(&["-n", &a, "addr", "add", "192.0.2.1/24", "dev", "veth-a"]);
    ip(&["-n", &b, "addr", "add", "192.0.2.2/24", "dev", "veth-b"]);
    ip(&["-n", &a, "link", "set", "veth-a", "up"]);
    ip(&["-n", &b, "link", "set", "veth-b", "up"]);

    let mut host = NetnsCounters::current().unwrap();
    let mut in_a = NetnsCounters::open(ns.path(0)).unwrap();
    let mut in_b = NetnsCounters::open(ns.path(1)).unwrap();
    assert_eq!(in_a.namespace_id(), Some(std::fs::metadata(ns.path(0)).unwrap().ino()));
    assert_ne!(in_a.namespace_id(), host.namespace_id());

    // Each fd shows its own namespace, whichever thread reads it.
    let host_before = host.read().unwrap();
    let a_before = in_a.read().unwrap();
    let names = |s: &stepmon_netns_stats::Snapshot| s.interfaces.iter().map(|i| i.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a_before), ["lo", "veth-a"]);
    assert_eq!(names(&in_b.read().unwrap()), ["lo", "veth-b"]);
    assert!(!names(&host_before).iter().any(|n| n.starts_with("veth-")), "{:?}", names(&host_before));

    let mut sample_a = NetworkSampler::new(TotalsOptions::default());
    let mut sample_b = NetworkSampler::new(TotalsOptions::default());
    sample_a.observe(&a_before);
    sample_b.observe(&in_b.read().unwrap());
    let host_lo_before = *host_before.get("lo").unwrap();
    let sysfs_lo_before = SysfsInterface::open("lo").unwrap().read_all().unwrap().dev_counters().unwrap();

    let received = transfer(&ns.path(0), &ns.path(1), Ipv4Addr::new(192, 0, 2, 1), MIB);
    assert_eq!(received, MIB);

    let out_a = sample_a.observe(&in_a.read().unwrap());
    let out_b = sample_b.observe(&in_b.read().unwrap());
    let host_lo = host.read().unwrap().get("lo").copied().unwrap();
    let sysfs_lo = SysfsInterface::open("lo").unwrap().read_all().unwrap().dev_counters().unwrap();
    let lo_growth = host_lo.rx_bytes - host_lo_before.rx_bytes;
    let sysfs_lo_growth = sysfs_lo.rx_bytes - sysfs_lo_before.rx_bytes;
    println!("A (receiver) sample: {}", serde_json::to_string(&out_a.sample).unwrap());
    println!("B (sender)   sample: {}", serde_json::to_string(&out_b.sample).unwrap());
    println!("host lo rx growth meanwhile: {lo_growth} B (/proc/net/dev), {sysfs_lo_growth} B (sysfs)");

    // The step's point of view: A received the MiB, B sent it.
    assert!(out_a.sample.rx_bytes >= MIB as i64, "{:?}", out_a.sample);
    assert!(out_b.sample.tx_bytes >= MIB as i64, "{:?}", out_b.sample);
    // The other direction carried only ACKs (and the handshake).
    assert!(out_a.sample.tx_bytes < (MIB / 4) as i64, "{:?}", out_a.sample);
    assert!(out_b.sample.rx_bytes < (MIB / 4) as i64, "{:?}", out_b.sample);
    // A veth pair: what B sent is what A received.
    assert_eq!(out_a.sample.rx_bytes, out_b.sample.tx_bytes);
    assert_eq!(out_a.sample.tx_packets, out_b.sample.rx_packets);
    assert!(out_a.sample.rx_packets > 0 && out_a.sample.rx_errors == 0 && out_a.sample.rx_dropped == 0);
    assert!(!out_a.counters_went_backwards && !out_a.interfaces_vanished);
    // None of it went over the host's loopback.
    assert!(lo_growth < MIB / 2, "host lo grew by {lo_growth}");
    assert!(sysfs_lo_growth < MIB / 2, "host lo (sysfs) grew by {sysfs_lo_growth}");

    // /proc/<pid>/net/dev of a process inside A (the unprivileged path), and
    // its ns file: the same view, still readable after the process is gone.
    let mut child = Command::new("ip")
        .args(["netns", "exec", &a, "sleep", "30"])
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn sleep in A");
    let a_ino = in_a.namespace_id().unwrap();
    let pid = child.id();
    let deadline = Instant::now() + TIMEOUT;
    // `ip netns exec` enters A, then execs sleep: wait until it has.
    while std::fs::metadata(format!("/proc/{pid}/ns/net")).map(|m| m.ino()).ok() != Some(a_ino) {
        assert!(Instant::now() < deadline, "child never entered A");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut by_pid = NetnsCounters::from_pid(pid).unwrap();
    let mut by_ns_path = NetnsCounters::open(format!("/proc/{pid}/ns/net")).unwrap();
    assert_eq!(by_pid.namespace_id(), Some(a_ino));
    child.kill().unwrap();
    child.wait().unwrap();
    for reader in [&mut by_pid, &mut by_ns_path] {
        let snap = reader.read().unwrap();
        assert_eq!(names(&snap), ["lo", "veth-a"], "{}", reader.source().display());
        assert!(snap.get("veth-a").unwrap().rx_bytes >= MIB);
    }
}

fn names_in(dev: &[u8]) -> Vec<String> {
    NetDev::parse(dev).unwrap().interfaces().map(|i| String::from_utf8_lossy(i.name).into_owned()).collect()
}

/// The held fd keeps the namespace alive after its name is deleted (so the
/// final sample works), and sysfs shows the mount's namespace, not the
/// thread's.
#[test]
fn held_fd_outlives_the_namespace_name_and_sysfs_ignores_setns() {
    if skip_unless_root("held_fd_outlives_the_namespace_name_and_sysfs_ignores_setns") {
        return;
    }
    let mut ns = Namespaces::create(&["c"]);
    let c = ns.name(0).to_string();
    ip(&["-n", &c, "link", "set", "lo", "up"]);
    let mut in_c = NetnsCounters::open(ns.path(0)).unwrap();
    let mut with_lo = NetworkSampler::new(TotalsOptions { include_loopback: true });
    let mut without_lo = NetworkSampler::new(TotalsOptions::default());
    let first = in_c.read().unwrap();
    with_lo.observe(&first);
    without_lo.observe(&first);

    // Traffic over C's own loopback only.
    let path = ns.path(0);
    let received = transfer(&path, &path, Ipv4Addr::LOCALHOST, MIB / 4);
    assert_eq!(received, MIB / 4);

    // What a thread inside C sees: its own /proc/thread-self/net/dev has only
    // `lo`; /proc/self/net/dev follows the thread-group leader (still in the
    // host namespace); /sys/class/net still lists the host's interfaces.
    let host_sysfs = SysfsInterface::list().unwrap();
    let host_proc = names_in(&std::fs::read("/proc/thread-self/net/dev").unwrap());
    let (inside_thread, inside_self, inside_sysfs) = in_netns(&path, || {
        (
            names_in(&std::fs::read("/proc/thread-self/net/dev").unwrap()),
            names_in(&std::fs::read("/proc/self/net/dev").unwrap()),
            SysfsInterface::list().unwrap(),
        )
    })
    .join()
    .unwrap();
    println!(
        "inside C: /proc/thread-self/net/dev {inside_thread:?}, /proc/self/net/dev {inside_self:?}, /sys/class/net {inside_sysfs:?}"
    );
    assert_eq!(inside_thread, ["lo"]);
    assert_eq!(inside_self, host_proc, "/proc/self follows the main thread");
    assert_eq!(inside_sysfs, host_sysfs, "sysfs follows the mount, not the thread");
    assert_ne!(inside_sysfs, ["lo"]);

    // A bare fd of C's net/dev, opened inside C, without the ns fd.
    let bare = in_netns(&path, || std::fs::File::open("/proc/thread-self/net/dev").unwrap()).join().unwrap();

    // Delete the name: nothing else holds C, only our fds.
    ns.delete(0);
    assert!(!path.exists());
    let last = in_c.read().unwrap();
    let out = with_lo.observe(&last);
    println!("C after `ip netns del`: with lo {:?}", out.sample);
    assert!(out.sample.rx_bytes >= (MIB / 4) as i64 && out.sample.tx_bytes >= (MIB / 4) as i64);
    assert_eq!(without_lo.observe(&last).sample, Default::default(), "loopback is excluded by default");

    // Close the namespace fd too: the net/dev fd alone still pins C
    // (seq_open_net() holds a reference), read with pread from offset 0.
    drop(in_c);
    let mut buf = vec![0u8; 4096];
    let n = std::os::unix::fs::FileExt::read_at(&bare, &mut buf, 0).unwrap();
    let dev = NetDev::parse(&buf[..n]).unwrap();
    let lo = dev.get(b"lo").unwrap();
    println!("C through the bare net/dev fd after both were gone: lo {lo:?}");
    assert!(lo.rx_bytes >= last.get("lo").unwrap().rx_bytes);
}

/// The guard deletes the namespaces when the test body panics.
#[test]
fn namespaces_are_deleted_when_a_test_panics() {
    if skip_unless_root("namespaces_are_deleted_when_a_test_panics") {
        return;
    }
    let (paths_tx, paths_rx) = mpsc::channel();
    let result = std::panic::catch_unwind(move || {
        let ns = Namespaces::create(&["panic-1", "panic-2"]);
        paths_tx.send([ns.path(0), ns.path(1)]).unwrap();
        assert!(ns.path(0).exists() && ns.path(1).exists());
        panic!("deliberate failure inside a namespace test");
    });
    assert!(result.is_err());
    for path in paths_rx.recv().unwrap() {
        assert!(!path.exists(), "{} left behind", path.display());
    }
}
