//! Hand-made edge cases of `/proc/net/dev` and sysfs files: typed errors,
//! never panics.

mod common;

use common::PROC_NET_DEV;
use stepmon_netns_stats::{ErrorKind, NetDev, NetDevLines, StatFile, SysfsStatistics};

const HEADER: &str = "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n";

fn kind(input: &[u8]) -> ErrorKind {
    NetDev::parse(input).unwrap_err().kind
}

#[test]
fn fifteen_byte_name_pushes_the_line() {
    // "%6s:" with a 15-byte name: no leading blank at all.
    let input = format!(
        "{HEADER}veth0123456789a: 1052000     740    0    0    0     0          0         0    48000     730    0    0    0     0       0          0\n"
    );
    let dev = NetDev::parse(input.as_bytes()).unwrap();
    let i = dev.interfaces().next().unwrap();
    assert_eq!((i.name, i.counters.rx_bytes, i.counters.tx_packets), (&b"veth0123456789a"[..], 1_052_000, 730));
    // 16 bytes cannot come from a kernel (IFNAMSIZ).
    let input = format!("{HEADER}veth0123456789ab: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n");
    let e = NetDev::parse(input.as_bytes()).unwrap_err();
    assert_eq!((e.kind, e.line, e.offset as usize), (ErrorKind::InvalidKey, 3, HEADER.len()));
}

#[test]
fn no_blank_after_the_colon() {
    // 2.4/2.6-era format "%6s:%8lu": a big rx_bytes touches the colon.
    let input = format!(
        "{HEADER}    lo:   10920     120    0    0    0     0          0         0    10920     120    0    0    0     0       0          0\n  ppp0:15475140   20721  410    0    0   410          0         0  2551942   19994    0    0    0     0       0          0\n"
    );
    let dev = NetDev::parse(input.as_bytes()).unwrap();
    let ppp0 = dev.get(b"ppp0").unwrap();
    assert_eq!(ppp0.to_array(), [15_475_140, 20721, 410, 0, 0, 410, 0, 0, 2_551_942, 19994, 0, 0, 0, 0, 0, 0]);
    // Even every column glued to the name's colon is fine.
    let dev = NetDev::parse(b"h\nh\nx:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16").unwrap();
    assert_eq!(dev.get(b"x").unwrap().tx_compressed, 16);
}

#[test]
fn empty_and_header_only_files() {
    assert_eq!(kind(b""), ErrorKind::Empty);
    assert_eq!(kind(b"\n"), ErrorKind::MissingHeader);
    assert_eq!(kind(HEADER.split('\n').next().unwrap().as_bytes()), ErrorKind::MissingHeader);
    // Both headers and no device: valid (the parser does not require `lo`).
    assert!(NetDev::parse(HEADER.as_bytes()).unwrap().is_empty());
    assert!(NetDevLines::new(b"").is_err());
}

/// Cutting the real capture at every byte: either a typed error, or a valid
/// prefix of the full result. A cut can only go unnoticed at a line end or
/// inside the last column of the last line (the kernel's final `\n` is not
/// required, matching the other parsers of this workspace).
#[test]
fn truncated_at_every_byte() {
    let full: Vec<_> = NetDev::parse(PROC_NET_DEV).unwrap().interfaces().collect();
    let mut errors = 0;
    for cut in 0..PROC_NET_DEV.len() {
        let prefix = &PROC_NET_DEV[..cut];
        match NetDev::parse(prefix) {
            Err(e) => {
                errors += 1;
                assert!(
                    matches!(
                        e.kind,
                        ErrorKind::Empty
                            | ErrorKind::MissingHeader
                            | ErrorKind::MissingSeparator
                            | ErrorKind::MissingField
                    ),
                    "cut {cut}: {e}"
                );
                assert!(e.offset as usize <= cut, "cut {cut}: error offset {} beyond input", e.offset);
            }
            Ok(dev) => {
                let got: Vec<_> = dev.interfaces().collect();
                assert!(got.len() <= full.len());
                for (i, (g, f)) in got.iter().zip(&full).enumerate() {
                    assert_eq!(g.name, f.name, "cut {cut}");
                    if i + 1 < got.len() || prefix.ends_with(b"\n") {
                        assert_eq!(g.counters, f.counters, "cut {cut}");
                    } else {
                        // Only the last column can be a digit prefix.
                        let (g, f) = (g.counters.to_array(), f.counters.to_array());
                        assert_eq!(g[..15], f[..15], "cut {cut}");
                        assert!(f[15].to_string().starts_with(&g[15].to_string()), "cut {cut}");
                    }
                }
            }
        }
    }
    // Which cuts must be detected: anywhere up to the end of the first header
    // line, inside the second one while it is still blank (" face |..."), and
    // inside a device line up to where its 16th column starts. (Any later cut
    // inside the second header line cannot be: its text is deliberately not
    // interpreted.)
    let mut must_fail = 0;
    let mut start = 0;
    for (n, line) in PROC_NET_DEV.split_inclusive(|&b| b == b'\n').enumerate() {
        let (from, to) = match n {
            0 => (0, line.len()),
            1 => (1, line.iter().take_while(|&&b| b == b' ').count()),
            _ => {
                let text = std::str::from_utf8(line).unwrap();
                let (head, cols) = text.split_once(':').unwrap();
                (1, head.len() + 1 + cols.trim_end().rfind(' ').unwrap() + 1)
            }
        };
        for cut in (start + from)..=(start + to) {
            assert!(NetDev::parse(&PROC_NET_DEV[..cut]).is_err(), "cut {cut} (line {}) went unnoticed", n + 1);
            must_fail += 1;
        }
        start += line.len();
    }
    assert_eq!(errors, must_fail, "exactly the detectable cuts fail");
}

#[test]
fn malformed_lines() {
    let line = |s: &str| format!("{HEADER}{s}\n");
    let cols = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16";
    assert_eq!(kind(line("  eth0 1 2 3").as_bytes()), ErrorKind::MissingSeparator);
    assert_eq!(kind(line(&format!("  eth0: {cols}\n")).as_bytes()), ErrorKind::EmptyLine);
    assert_eq!(kind(line(&format!("  et h0: {cols}")).as_bytes()), ErrorKind::InvalidKey);
    assert_eq!(kind(line(&format!("  ..: {cols}")).as_bytes()), ErrorKind::InvalidKey);
    assert_eq!(kind(line(&format!("    : {cols}")).as_bytes()), ErrorKind::InvalidKey);
    assert_eq!(kind(line(&format!("  a:b: {cols}")).as_bytes()), ErrorKind::InvalidNumber);
    assert_eq!(kind(line("  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 +15 16").as_bytes()), ErrorKind::InvalidNumber);
    assert_eq!(kind(line("  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 0x15 16").as_bytes()), ErrorKind::InvalidNumber);
    assert_eq!(
        kind(line("  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 99999999999999999999").as_bytes()),
        ErrorKind::Overflow
    );
    assert_eq!(kind(line(&format!("  eth0: {cols}\r")).as_bytes()), ErrorKind::InvalidNumber);
    assert_eq!(kind(line(&format!("\0eth0: {cols}")).as_bytes()), ErrorKind::InvalidKey);
    // Tabs are blanks too; u64::MAX fits; extra columns are ignored.
    let input = line("\teth0:\t18446744073709551615 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18");
    let dev = NetDev::parse(input.as_bytes()).unwrap();
    assert_eq!(dev.get(b"eth0").unwrap().rx_bytes, u64::MAX);
    // UTF-8 and non-UTF-8 names are kept as bytes (the kernel allows them).
    let input = line(&format!("  wg\u{fc}: {cols}"));
    let dev = NetDev::parse(input.as_bytes()).unwrap();
    assert_eq!(dev.interfaces().next().unwrap().name_str(), Some("wg\u{fc}"));
    let mut raw = format!("{HEADER}  x").into_bytes();
    raw.extend_from_slice(b"\xff: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n");
    let dev = NetDev::parse(&raw).unwrap();
    assert_eq!(dev.interfaces().next().unwrap().name_str(), None);
}

#[test]
fn error_positions_point_at_the_token() {
    let input = format!("{HEADER}  eth0: 1 2 3 4 5 6 7 x 9 10 11 12 13 14 15 16\n");
    let e = NetDev::parse(input.as_bytes()).unwrap_err();
    assert_eq!((e.line, e.offset as usize), (3, input.find('x').unwrap()));
    assert_eq!(e.to_string(), format!("not a decimal number at line 3, byte {}", input.find('x').unwrap()));
}

#[test]
fn duplicate_names_first_wins_for_get_but_all_are_listed() {
    let dev =
        NetDev::parse(b"h\nh\n a: 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n a: 2 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n").unwrap();
    assert_eq!(dev.len(), 2);
    assert_eq!(dev.get(b"a").unwrap().rx_bytes, 1);
    assert_eq!(dev.get(b"b"), None);
}

#[test]
fn sysfs_single_values() {
    let mut s = SysfsStatistics::default();
    s.set(StatFile::RxBytes, b"18446744073709551615\n").unwrap();
    assert_eq!(s.rx_bytes, Some(u64::MAX));
    for (bad, want) in [
        (&b""[..], ErrorKind::Empty),
        (b"\n", ErrorKind::Empty),
        (b"-1\n", ErrorKind::InvalidNumber),
        (b"18446744073709551616\n", ErrorKind::Overflow),
        (b"1\n2\n", ErrorKind::TrailingData),
        (b" 1\n", ErrorKind::InvalidNumber),
    ] {
        assert_eq!(s.set(StatFile::TxBytes, bad).unwrap_err().kind, want, "{bad:?}");
    }
    assert_eq!(s.tx_bytes, None, "a failed set leaves the field absent");
    assert_eq!(s.set(StatFile::TxBytes, b"7"), Ok(()), "missing final newline is tolerated");
    assert_eq!(SysfsStatistics::default().dev_counters(), None, "no made-up zeros");
}
