//! The v1 parsers on the files `scripts/capture-v1` captured on the hybrid
//! 6.18 host (`tests/data/hybrid-6.18-v1/`, workload in its README), with
//! the values checked against what that workload must produce, plus the
//! edge cases of each entry point: empty input, a missing final newline,
//! duplicate keys, overflow, garbage, every cut and byte substitution.

use proptest::prelude::*;
use stepmon_cgroupfs_parse::format::flat::FlatKeyed;
use stepmon_cgroupfs_parse::format::single::{self, Limit};
use stepmon_cgroupfs_parse::testing::for_each_damaged;
use stepmon_cgroupfs_parse::v1::{
    BlkioStat, CpuStatLocalV1, CpuStatV1, CpuacctStat, MemoryStatV1, OomControl, UNLIMITED_BYTES_MIN, cfs_quota_us,
    limit_in_bytes,
};
use stepmon_cgroupfs_parse::{DeviceId, ErrorKind, ParseError, PidList, PidsEvents};

macro_rules! capture {
    ($name:literal) => {
        include_bytes!(concat!("data/hybrid-6.18-v1/", $name)).as_slice()
    };
}

const MIB: u64 = 1 << 20;

fn loc(e: ParseError) -> (ErrorKind, u32, u32) {
    (e.kind, e.line, e.offset)
}

// ------------------------------------------------------------------ memory

#[test]
fn memory_stat_of_the_workload() {
    let m = MemoryStatV1::parse(capture!("memory/memory.stat")).unwrap();
    // dd wrote 32 MiB through the page cache, still charged (no pressure).
    assert!(m.cache.unwrap() >= 32 * MIB, "{m:?}");
    assert!(m.inactive_file.unwrap() + m.active_file.unwrap() >= 32 * MIB);
    // python3 touched 64 MiB, one page at a time: at least 16384 faults.
    assert!(m.pgfault.unwrap() >= 16_384, "{m:?}");
    // A leaf cgroup: the hierarchical values are its own.
    for (local, total) in [
        (m.cache, m.total_cache),
        (m.rss, m.total_rss),
        (m.shmem, m.total_shmem),
        (m.mapped_file, m.total_mapped_file),
        (m.dirty, m.total_dirty),
        (m.pgfault, m.total_pgfault),
        (m.inactive_file, m.total_inactive_file),
    ] {
        assert_eq!(local, total);
    }
    assert_eq!(m.hierarchical_memory_limit(), Some(Limit::Max));
    assert_eq!(m.hierarchical_memsw_limit(), Some(Limit::Max));
    assert_eq!(m.hierarchical_memory_limit, Some(9_223_372_036_854_771_712));
    // Every line of the capture is read: the known keys by name, the rest
    // (total_swapcached, total_pgpgin, ...) skipped.
    let lines = FlatKeyed::new(capture!("memory/memory.stat")).count();
    let known = m.iter().filter(|(_, v)| v.is_some()).count();
    assert_eq!((lines, known), (42, MemoryStatV1::KEYS.len()));
}

#[test]
fn memory_single_values_of_the_workload() {
    let peak = single::parse_u64(capture!("memory/memory.max_usage_in_bytes")).unwrap();
    let usage = single::parse_u64(capture!("memory/memory.usage_in_bytes")).unwrap();
    assert!(peak >= 64 * MIB, "the 64 MiB python3 touched: {peak}");
    assert!(usage <= peak && usage >= 32 * MIB, "the dd page cache is still charged: {usage}");
    assert_eq!(single::parse_u64(capture!("memory/memory.failcnt")), Ok(0));
    assert_eq!(single::parse_u64(capture!("memory/memory.memsw.max_usage_in_bytes")), Ok(peak), "no swap");
    for unlimited in [
        capture!("memory/memory.limit_in_bytes"),
        capture!("memory/memory.memsw.limit_in_bytes"),
        capture!("memory/memory.soft_limit_in_bytes"),
    ] {
        assert_eq!(limit_in_bytes(unlimited), Ok(Limit::Max));
        assert!(single::parse_u64(unlimited).unwrap() >= UNLIMITED_BYTES_MIN);
    }
    assert_eq!(OomControl::parse(capture!("memory/memory.oom_control")).unwrap().oom_kill, Some(0));
}

#[test]
fn the_oom_killed_cgroup() {
    let o = OomControl::parse(capture!("memory-oom/memory.oom_control")).unwrap();
    assert_eq!((o.oom_kill_disabled(), o.is_under_oom(), o.oom_kill), (Some(false), Some(false), Some(1)));
    assert_eq!(limit_in_bytes(capture!("memory-oom/memory.limit_in_bytes")), Ok(Limit::Value(32 * MIB)));
    assert_eq!(single::parse_u64(capture!("memory-oom/memory.max_usage_in_bytes")), Ok(32 * MIB), "up to the limit");
    assert!(single::parse_u64(capture!("memory-oom/memory.failcnt")).unwrap() > 0);
    let m = MemoryStatV1::parse(capture!("memory-oom/memory.stat")).unwrap();
    assert_eq!((m.rss, m.cache), (Some(0), Some(0)), "the killed process's memory was freed");
    assert_eq!(m.hierarchical_memory_limit(), Some(Limit::Value(32 * MIB)));
    assert!(m.pgfault.unwrap() >= 32 * MIB / 4096);
}

// --------------------------------------------------------------------- cpu

#[test]
fn cpu_of_the_workload() {
    // 1.5 s of a CPU loop at 50 ms per 100 ms: about 15 periods, most throttled.
    let s = CpuStatV1::parse(capture!("cpu/cpu.stat")).unwrap();
    let (periods, throttled) = (s.nr_periods.unwrap(), s.nr_throttled.unwrap());
    assert!(periods >= 10 && throttled >= 5 && throttled <= periods, "{s:?}");
    assert!(s.throttled_time.unwrap() > 100_000_000, "ns, not µs: {s:?}");
    assert_eq!((s.nr_bursts, s.burst_time, s.wait_sum), (Some(0), Some(0), None), "schedstats off");
    let local = CpuStatLocalV1::parse(capture!("cpu/cpu.stat.local")).unwrap();
    assert_eq!(local.throttled_time, s.throttled_time, "no ancestor quota");
    assert_eq!(cfs_quota_us(capture!("cpu/cpu.cfs_quota_us")), Ok(Limit::Value(50_000)));
    assert_eq!(single::parse_u64(capture!("cpu/cpu.cfs_period_us")), Ok(100_000));

    let stat = CpuacctStat::parse(capture!("cpuacct/cpuacct.stat")).unwrap();
    let ticks = stat.user.unwrap() + stat.system.unwrap();
    let usage_ns = single::parse_u64(capture!("cpuacct/cpuacct.usage")).unwrap();
    // 0.75 s of the loop plus python3 start-ups, dd: 0.5–3 s.
    assert!((500_000_000..3_000_000_000).contains(&usage_ns), "{usage_ns}");
    // Ticks are USER_HZ (100/s) and sampled, so within 20 % of the ns total.
    let ticks_ns = ticks * 10_000_000;
    assert!(ticks_ns.abs_diff(usage_ns) * 5 < usage_ns, "{ticks} ticks vs {usage_ns} ns");
    let user = single::parse_u64(capture!("cpuacct/cpuacct.usage_user")).unwrap();
    let sys = single::parse_u64(capture!("cpuacct/cpuacct.usage_sys")).unwrap();
    // Also split from the tick-based cpustat (sys 344000000 is whole ms),
    // not from the scheduler's runtime: close to, not equal to, the total.
    assert!((user + sys).abs_diff(usage_ns) * 5 < usage_ns, "{user} + {sys} vs {usage_ns}");
}

#[test]
fn root_style_cpu_quota() {
    assert_eq!(cfs_quota_us(b"-1\n"), Ok(Limit::Max));
    assert_eq!(cfs_quota_us(b"-1"), Ok(Limit::Max));
    assert_eq!(cfs_quota_us(b"-2\n").map_err(loc), Err((ErrorKind::InvalidField, 1, 0)));
    assert_eq!(cfs_quota_us(b" -1\n").map_err(loc), Err((ErrorKind::InvalidNumber, 1, 0)));
}

// ------------------------------------------------------------------- blkio

#[test]
fn blkio_of_the_workload() {
    let disk = DeviceId { major: 254, minor: 0 };
    let bytes = BlkioStat::parse(capture!("blkio/blkio.throttle.io_service_bytes_recursive")).unwrap();
    assert_eq!(bytes.device_count(), 1);
    let t = bytes.totals();
    // dd read back exactly its 32 MiB with O_DIRECT, and fsync wrote them
    // (plus a few metadata blocks).
    assert_eq!(t.read, Some(32 * MIB));
    assert!(t.write.unwrap() >= 32 * MIB && t.write.unwrap() < 33 * MIB, "{t:?}");
    assert_eq!(t.discard, Some(0));
    assert_eq!(t.total, Some(t.read.unwrap() + t.write.unwrap() + t.discard.unwrap()));
    assert_eq!(t.sync.unwrap() + t.async_.unwrap(), t.total.unwrap());
    assert_eq!(bytes.total_line(), t.total);
    assert_eq!(bytes.device(disk).map(|d| d.read), Some(t.read));
    // The non-recursive file of a leaf is the same.
    let own = BlkioStat::parse(capture!("blkio/blkio.throttle.io_service_bytes")).unwrap();
    assert_eq!(own.totals(), t);

    let ios = BlkioStat::parse(capture!("blkio/blkio.throttle.io_serviced_recursive")).unwrap();
    let t = ios.totals();
    assert!(t.read.unwrap() >= 32 && t.write.unwrap() >= 1, "1 MiB reads: at least 32 of them: {t:?}");
    assert_eq!(ios.total_line(), t.total);
    // BFQ is not this device's scheduler: only the final Total line.
    let bfq = BlkioStat::parse(capture!("blkio/blkio.bfq.io_service_bytes_recursive")).unwrap();
    assert_eq!((bfq.device_count(), bfq.totals().read, bfq.total_line()), (0, None, Some(0)));
}

// -------------------------------------------------------------------- pids

#[test]
fn pids_of_the_workload() {
    // The workload's shell and its 8 sleep children.
    assert_eq!(single::parse_u64(capture!("pids/pids.current")), Ok(9));
    assert!(single::parse_u64(capture!("pids/pids.peak")).unwrap() >= 9);
    assert_eq!(Limit::parse(capture!("pids/pids.max")), Ok(Limit::Value(64)));
    assert_eq!(PidsEvents::parse(capture!("pids/pids.events")).unwrap().max, Some(0));
    assert_eq!(PidList::parse(capture!("pids/cgroup.procs")).unwrap().len(), 9);
    assert_eq!(Limit::parse(b"max\n"), Ok(Limit::Max), "an unlimited v1 pids.max");
}

// -------------------------------------------------------------- edge cases

/// Every entry point, as one signature, with the capture it is tested on.
type Entry = (&'static str, fn(&[u8]) -> Result<String, ParseError>, &'static [u8]);

const ENTRIES: &[Entry] = &[
    ("MemoryStatV1", |i| MemoryStatV1::parse(i).map(|v| format!("{v:?}")), capture!("memory/memory.stat")),
    ("OomControl", |i| OomControl::parse(i).map(|v| format!("{v:?}")), capture!("memory-oom/memory.oom_control")),
    ("limit_in_bytes", |i| limit_in_bytes(i).map(|v| format!("{v:?}")), capture!("memory/memory.limit_in_bytes")),
    ("CpuacctStat", |i| CpuacctStat::parse(i).map(|v| format!("{v:?}")), capture!("cpuacct/cpuacct.stat")),
    ("CpuStatV1", |i| CpuStatV1::parse(i).map(|v| format!("{v:?}")), capture!("cpu/cpu.stat")),
    ("CpuStatLocalV1", |i| CpuStatLocalV1::parse(i).map(|v| format!("{v:?}")), capture!("cpu/cpu.stat.local")),
    ("cfs_quota_us", |i| cfs_quota_us(i).map(|v| format!("{v:?}")), capture!("cpu/cpu.cfs_quota_us")),
    (
        "BlkioStat",
        |i| {
            BlkioStat::parse(i)
                .map(|v| format!("{:?} {:?} {:?}", v.totals(), v.total_line(), v.devices().collect::<Vec<_>>()))
        },
        capture!("blkio/blkio.throttle.io_service_bytes_recursive"),
    ),
];

/// The flat keyed ones: empty input is a value with every key `None`.
const FLAT: [&str; 4] = ["MemoryStatV1", "OomControl", "CpuacctStat", "CpuStatV1"];

#[test]
fn empty_input() {
    for (name, parse, _) in ENTRIES {
        match *name {
            "limit_in_bytes" | "cfs_quota_us" => assert_eq!(parse(b"").map_err(loc), Err((ErrorKind::Empty, 1, 0))),
            _ => assert!(parse(b"").is_ok(), "{name}"),
        }
        assert!(parse(b"\n").is_err(), "{name}: a blank line");
    }
    assert_eq!(MemoryStatV1::parse(b""), Ok(MemoryStatV1::default()));
    assert_eq!(BlkioStat::parse(b"").unwrap().totals().read, None);
    assert!(FLAT.iter().all(|f| ENTRIES.iter().any(|(n, _, _)| n == f)));
}

#[test]
fn missing_trailing_newline_and_crlf() {
    for (name, parse, capture) in ENTRIES {
        let stripped = capture.strip_suffix(b"\n").unwrap();
        assert_eq!(parse(stripped), parse(capture), "{name}");
        let crlf: Vec<u8> =
            capture.iter().flat_map(|&b| if b == b'\n' { vec![b'\r', b'\n'] } else { vec![b] }).collect();
        assert_eq!(parse(&crlf).map_err(|e| e.line), Err(1), "{name}: the \\r is reported on line 1");
    }
}

#[test]
fn duplicate_keys_last_wins() {
    let m = MemoryStatV1::parse(b"total_rss 1\ncache 2\ntotal_rss 3\n").unwrap();
    assert_eq!((m.total_rss, m.cache), (Some(3), Some(2)));
    let o = OomControl::parse(b"oom_kill 1\noom_kill 2\n").unwrap();
    assert_eq!(o.oom_kill, Some(2));
    let b = BlkioStat::parse(b"8:0 Write 1\n8:0 Write 9\nTotal 9\n").unwrap();
    assert_eq!((b.totals().write, b.device_count()), (Some(9), 1));
}

#[test]
fn overflow_and_garbage() {
    let e = MemoryStatV1::parse(b"cache 1\nrss 18446744073709551616\n").unwrap_err();
    assert_eq!(loc(e), (ErrorKind::Overflow, 2, 12));
    assert_eq!(limit_in_bytes(b"18446744073709551615\n"), Ok(Limit::Max));
    assert_eq!(limit_in_bytes(b"18446744073709551616\n").map_err(loc), Err((ErrorKind::Overflow, 1, 0)));
    assert_eq!(limit_in_bytes(b"-1\n").map_err(loc), Err((ErrorKind::InvalidNumber, 1, 0)));
    // nr_* are C ints: -1 is the wrapped counter, past u32 an overflow.
    assert_eq!(CpuStatV1::parse(b"nr_throttled -1\n").unwrap().nr_throttled, Some(u64::from(u32::MAX)));
    assert_eq!(CpuStatV1::parse(b"nr_periods 4294967296\n").map_err(loc), Err((ErrorKind::Overflow, 1, 11)));
    assert_eq!(CpuStatV1::parse(b"throttled_time -1\n").map_err(loc), Err((ErrorKind::InvalidNumber, 1, 15)));
    assert_eq!(OomControl::parse(b"under_oom yes\n").map_err(loc), Err((ErrorKind::InvalidNumber, 1, 10)));
    assert_eq!(CpuacctStat::parse(b"user\n").map_err(loc), Err((ErrorKind::MissingSeparator, 1, 0)));
    assert_eq!(CpuacctStat::parse(b"us\xc3\xa9r 1\n").map_err(loc), Err((ErrorKind::InvalidKey, 1, 0)));
    // Unknown keys are skipped, their values not even read.
    assert_eq!(CpuacctStat::parse(b"guest x\nuser 1\n").unwrap().user, Some(1));
    for garbage in [&b"\x00\xff\n"[..], b"cache=1\n", b" cache 1\n"] {
        for (name, parse, _) in ENTRIES {
            assert!(parse(garbage).is_err(), "{name}: {garbage:?}");
        }
    }
}

/// Every prefix of each capture and each byte replaced in turn: no panic,
/// every error names a line of the input and an offset inside it, and a
/// cut at a line end gives the value of those lines.
#[test]
fn every_cut_and_substitution() {
    for (name, parse, capture) in ENTRIES {
        let mut bytes = capture.to_vec();
        for_each_damaged(&mut bytes, b"09 \n\t-x:", |input| {
            if let Err(e) = parse(input) {
                let lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
                let line = usize::try_from(e.line).unwrap();
                assert!(line >= 1 && line <= lines.len().max(1), "{name} {input:?}: {e}");
                let start: usize = lines[..line - 1].iter().map(|l| l.len() + 1).sum();
                let offset = usize::try_from(e.offset).unwrap();
                assert!((start..=start + lines.get(line - 1).map_or(0, |l| l.len())).contains(&offset), "{name}: {e}");
            }
        });
        for (end, _) in capture.iter().enumerate().filter(|&(_, &b)| b == b'\n') {
            let cut = &capture[..=end];
            let result = parse(cut);
            if FLAT.contains(name) || *name == "BlkioStat" {
                assert!(result.is_ok(), "{name}: a file cut at a line end is valid: {result:?}");
            }
        }
    }
}

// ------------------------------------------------------- property tests

fn flat_file(pairs: &[(&str, u64)]) -> String {
    pairs.iter().map(|(k, v)| format!("{k} {v}\n")).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random values for every key, in a random order, with unknown keys
    /// mixed in, parse back to the same values.
    #[test]
    fn memory_stat_round_trip(values in proptest::collection::vec(any::<u64>(), MemoryStatV1::KEYS.len()),
                              order in Just((0..MemoryStatV1::KEYS.len()).collect::<Vec<_>>()).prop_shuffle(),
                              unknown in "[a-z_]{1,12}") {
        prop_assume!(!MemoryStatV1::KEYS.contains(&unknown.as_str()));
        let mut pairs: Vec<(&str, u64)> = order.iter().map(|&i| (MemoryStatV1::KEYS[i], values[i])).collect();
        pairs.insert(pairs.len() / 2, (unknown.as_str(), 7));
        let m = MemoryStatV1::parse(flat_file(&pairs).as_bytes()).unwrap();
        for (i, key) in MemoryStatV1::KEYS.iter().enumerate() {
            prop_assert_eq!(m.get(key), Some(values[i]));
        }
    }

    /// `cpu.stat` as the kernel prints it: `%d` for the C ints.
    #[test]
    fn cpu_stat_round_trip(periods in any::<u32>(), throttled in any::<u32>(), time in any::<u64>(),
                           wait in proptest::option::of(any::<u64>()), bursts in any::<u32>(), burst in any::<u64>()) {
        let as_int = |v: u32| i32::from_ne_bytes(v.to_ne_bytes());
        let wait_line = wait.map(|w| format!("wait_sum {w}\n")).unwrap_or_default();
        let text = format!("nr_periods {}\nnr_throttled {}\nthrottled_time {time}\n{wait_line}nr_bursts {}\nburst_time {burst}\n",
                           as_int(periods), as_int(throttled), as_int(bursts));
        let s = CpuStatV1::parse(text.as_bytes()).unwrap();
        prop_assert_eq!((s.nr_periods, s.nr_throttled, s.throttled_time), (Some(u64::from(periods)), Some(u64::from(throttled)), Some(time)));
        prop_assert_eq!((s.wait_sum, s.nr_bursts, s.burst_time), (wait, Some(u64::from(bursts)), Some(burst)));
    }

    /// Any quota the kernel can print reads back; limits follow the threshold.
    #[test]
    fn single_values_round_trip(quota in -1i64..=i64::MAX, bytes in any::<u64>()) {
        let expected = if quota == -1 { Limit::Max } else { Limit::Value(u64::try_from(quota).unwrap()) };
        prop_assert_eq!(cfs_quota_us(format!("{quota}\n").as_bytes()), Ok(expected));
        let limit = limit_in_bytes(format!("{bytes}\n").as_bytes()).unwrap();
        prop_assert_eq!(limit.is_max(), bytes >= UNLIMITED_BYTES_MIN);
        prop_assert_eq!(limit.value().unwrap_or(bytes), bytes);
    }

    /// Devices rendered as `__blkg_prfill_rwstat()` does parse back: each
    /// device's counters, their sums, and the final Total line.
    #[test]
    fn blkio_round_trip(devices in proptest::collection::vec((0u32..3, 0u32..3, proptest::array::uniform5(0..u64::MAX / 64)), 0..6)) {
        let mut text = String::new();
        let mut total = 0u64;
        for (major, minor, [r, w, s, a, d]) in &devices {
            let t = r + w + d;
            total += t;
            for (op, v) in [("Read", r), ("Write", w), ("Sync", s), ("Async", a), ("Discard", d), ("Total", &t)] {
                text.push_str(&format!("{major}:{minor} {op} {v}\n"));
            }
        }
        text.push_str(&format!("Total {total}\n"));
        let io = BlkioStat::parse(text.as_bytes()).unwrap();
        prop_assert_eq!(io.total_line(), Some(total));
        // Adjacent equal device numbers merge into one entry (last wins).
        let parsed: Vec<_> = io.devices().collect();
        prop_assert_eq!(parsed.len(), io.device_count());
        let mut expected: Vec<(DeviceId, [u64; 5])> = Vec::new();
        for (major, minor, values) in &devices {
            let id = DeviceId { major: *major, minor: *minor };
            match expected.last_mut() {
                Some((last, v)) if *last == id => *v = *values,
                _ => expected.push((id, *values)),
            }
        }
        prop_assert_eq!(parsed.len(), expected.len());
        for (p, (id, [r, w, s, a, d])) in parsed.iter().zip(&expected) {
            prop_assert_eq!(p.device, *id);
            prop_assert_eq!((p.read, p.write, p.sync, p.async_, p.discard), (Some(*r), Some(*w), Some(*s), Some(*a), Some(*d)));
        }
        let sum = |f: fn(&[u64; 5]) -> u64| expected.iter().map(|(_, v)| f(v)).sum::<u64>();
        if !expected.is_empty() {
            prop_assert_eq!(io.totals().read, Some(sum(|v| v[0])));
            prop_assert_eq!(io.totals().discard, Some(sum(|v| v[4])));
        }
    }

    /// Arbitrary bytes never make an entry point panic.
    #[test]
    fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        for (_, parse, _) in ENTRIES {
            let _ = parse(&bytes);
        }
    }
}
