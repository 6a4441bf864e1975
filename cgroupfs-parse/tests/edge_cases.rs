//! Edge cases of every parser: empty files, missing trailing newline, `max`,
//! `u64::MAX` and overflow (with exact error line/offset), unknown, reordered
//! and duplicate keys, CRLF, garbage. Behaviour the kernel never triggers
//! (duplicates, CRLF) is pinned down here so that a change is noticed.

mod common;

use common::{ALL_PARSERS, data_files, loc, parser_for};
use stepmon_cgroupfs_parse::ErrorKind::{
    self, Empty, EmptyLine, InvalidField, InvalidFlag, InvalidKey, InvalidNumber, MissingField, MissingSeparator,
    Overflow, TrailingData,
};
use stepmon_cgroupfs_parse::format::flat::FlatKeyed;
use stepmon_cgroupfs_parse::format::list::{NewlineList, SpaceList};
use stepmon_cgroupfs_parse::format::nested::NestedKeyed;
use stepmon_cgroupfs_parse::format::single::{self, Limit};
use stepmon_cgroupfs_parse::mountinfo::{Escaped, MountInfo, find_cgroup2_mount};
use stepmon_cgroupfs_parse::number::Hundredths;
use stepmon_cgroupfs_parse::proc_cgroup::{ProcCgroup, unified_entry};
use stepmon_cgroupfs_parse::{
    CgroupEvents, CgroupStat, CgroupType, ControllerList, CpuMax, CpuStat, CpuStatLocal, DeviceId, IoStat, IoTotals,
    MemoryEvents, MemoryStat, PidList, PidsEvents,
};

const U64_MAX: &str = "18446744073709551615";
const U64_MAX_PLUS_1: &str = "18446744073709551616";
/// Keys of `cpu.stat` the kernel prints with `%d` from a C `int`.
const C_INT_KEYS: [&str; 3] = ["nr_periods", "nr_throttled", "nr_bursts"];

// ---------------------------------------------------------------- empty input

#[test]
fn empty_input_is_an_empty_list_or_all_none() {
    assert_eq!(CpuStat::parse(b"").unwrap(), CpuStat::default());
    assert!(CpuStat::default().iter().all(|(_, v)| v.is_none()));
    assert_eq!(CpuStatLocal::parse(b"").unwrap(), CpuStatLocal::default());
    assert_eq!(MemoryStat::parse(b"").unwrap(), MemoryStat::default());
    assert!(MemoryStat::default().iter().all(|(_, v)| v.is_none()));
    assert_eq!(MemoryEvents::parse(b"").unwrap(), MemoryEvents::default());
    assert_eq!(PidsEvents::parse(b"").unwrap().max, None);
    assert_eq!(CgroupEvents::parse(b"").unwrap(), CgroupEvents::default());
    let s = CgroupStat::parse(b"").unwrap();
    assert_eq!((s.nr_descendants, s.nr_dying_descendants, s.subsystems().count()), (None, None, 0));
    let io = IoStat::parse(b"").unwrap();
    assert_eq!((io.totals(), io.device_count(), io.devices().count()), (IoTotals::default(), 0, 0));
    assert!(ControllerList::parse(b"").unwrap().is_empty());
    assert!(PidList::parse(b"").unwrap().is_empty());
    assert_eq!(MountInfo::new(b"").count(), 0);
    assert_eq!(find_cgroup2_mount(b"", b"/"), Ok(None));
    assert_eq!(ProcCgroup::new(b"").count(), 0);
    assert_eq!(unified_entry(b""), Ok(None));
    assert_eq!(FlatKeyed::new(b"").count(), 0);
    assert_eq!(NestedKeyed::new(b"").count(), 0);
    assert_eq!(SpaceList::new(b"").count(), 0);
    assert_eq!(NewlineList::new(b"").count(), 0);
}

#[test]
fn empty_input_is_an_error_for_single_values() {
    let empty = (Empty, 1, 0);
    assert_eq!(single::parse_u64(b"").map_err(loc), Err(empty));
    assert_eq!(Limit::parse(b"").map_err(loc), Err(empty));
    assert_eq!(single::parse_flag(b"").map_err(loc), Err(empty));
    assert_eq!(single::parse_text(b"").map_err(loc), Err(empty));
    assert_eq!(CgroupType::parse(b"").map_err(loc), Err(empty));
    assert_eq!(CpuMax::parse(b"").map_err(loc), Err(empty));
    // A lone newline is an empty value too...
    assert_eq!(single::parse_u64(b"\n").map_err(loc), Err(empty));
    assert_eq!(Limit::parse(b"\n").map_err(loc), Err(empty));
    assert_eq!(CgroupType::parse(b"\n").map_err(loc), Err(empty));
    // ...for cpu.max as well.
    assert_eq!(CpuMax::parse(b"\n").map_err(loc), Err((Empty, 1, 0)), "consistent with the other single-value files");
}

#[test]
fn lone_newline_in_line_based_files() {
    // No kernel file is a lone `\n`; flat and nested files reject the empty line,
    // a space separated list reads it as the empty list.
    assert_eq!(CpuStat::parse(b"\n").map_err(loc), Err((EmptyLine, 1, 0)));
    assert_eq!(IoStat::parse(b"\n").map_err(loc), Err((EmptyLine, 1, 0)));
    assert_eq!(PidList::parse(b"\n").map_err(loc), Err((EmptyLine, 1, 0)));
    assert!(ControllerList::parse(b"\n").unwrap().is_empty());
}

// ----------------------------------------------------- every file of the data

#[test]
fn every_data_file_has_a_parser_and_parses() {
    let mut n = 0;
    for dir in ["hybrid-6.18", "pure-v2-handmade"] {
        for (name, bytes) in data_files(dir) {
            let parse = parser_for(&name).unwrap_or_else(|| panic!("no parser for {dir}/{name}"));
            parse(&bytes).unwrap_or_else(|e| panic!("{dir}/{name}: {e}"));
            n += 1;
        }
    }
    assert_eq!(n, 26 + 29);
}

#[test]
fn missing_trailing_newline_gives_the_same_result() {
    for dir in ["hybrid-6.18", "pure-v2-handmade"] {
        for (name, bytes) in data_files(dir) {
            let Some(stripped) = bytes.strip_suffix(b"\n") else {
                assert!(bytes.is_empty(), "{name}: every non-empty kernel file ends in a newline");
                continue;
            };
            let parse = parser_for(&name).unwrap();
            assert_eq!(parse(stripped), parse(&bytes), "{dir}/{name}");
        }
    }
}

#[test]
fn crlf_line_ends_are_rejected_in_every_file() {
    for dir in ["hybrid-6.18", "pure-v2-handmade"] {
        for (name, bytes) in data_files(dir) {
            if bytes.is_empty() {
                continue;
            }
            let crlf: Vec<u8> =
                bytes.iter().flat_map(|&b| if b == b'\n' { vec![b'\r', b'\n'] } else { vec![b] }).collect();
            let e = parser_for(&name).unwrap()(&crlf).expect_err(&name);
            // The `\r` is reported on the first line.
            assert_eq!(e.line, 1, "{dir}/{name}: {e}");
        }
    }
}

#[test]
fn every_prefix_of_every_data_file_is_handled_without_panic() {
    // Truncated reads (a short read() treated as EOF) must give a value or an
    // error, never a panic; cut points inside a number simply give another number.
    for dir in ["hybrid-6.18", "pure-v2-handmade"] {
        for (_, bytes) in data_files(dir) {
            for end in 0..bytes.len() {
                for (_, parse) in ALL_PARSERS {
                    let _ = parse(&bytes[..end]);
                }
            }
        }
    }
}

// ------------------------------------------------------------- max and limits

#[test]
fn max_tokens() {
    assert_eq!(Limit::parse(b"max"), Ok(Limit::Max));
    assert_eq!(Limit::parse(b"max\n"), Ok(Limit::Max));
    for bad in [&b"MAX\n"[..], b"Max\n", b" max\n", b"max \n", b"maxx\n", b"ma\n", b"max\n\n", b"inf\n", b"-1\n"] {
        assert!(Limit::parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
    }
    assert_eq!(Limit::parse(b"max \n").map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(Limit::parse(b"max\n\n").map_err(loc), Err((TrailingData, 2, 4)));
    assert_eq!(Limit::parse_token(b"max"), Ok(Limit::Max));
    assert_eq!(Limit::parse_token(b"0"), Ok(Limit::Value(0)));
    assert!(Limit::Max.is_max() && Limit::Max.value().is_none());
    assert_eq!(Limit::Value(7).value(), Some(7));

    assert_eq!(CpuMax::parse(b"max 100000\n").unwrap(), CpuMax { quota_usec: Limit::Max, period_usec: 100_000 });
    // The period is never `max`.
    assert_eq!(CpuMax::parse(b"max max\n").map_err(loc), Err((InvalidNumber, 1, 4)));

    let io = IoStat::parse(b"8:0 depth=max\n8:16 depth=64\n").unwrap();
    let depths: Vec<_> = io.devices().map(|d| d.iolat_depth).collect();
    assert_eq!(depths, [Some(Limit::Max), Some(Limit::Value(64))]);

    // In pids.events, `max` is a key, not the limit token.
    assert_eq!(PidsEvents::parse(b"max 0\n").unwrap().max, Some(0));
    assert_eq!(PidsEvents::parse(b"max max\n").map_err(loc), Err((InvalidNumber, 1, 4)));
}

// ---------------------------------------------------------- u64::MAX, overflow

#[test]
fn u64_max_is_accepted_everywhere_a_u64_is() {
    assert_eq!(single::parse_u64(format!("{U64_MAX}\n").as_bytes()), Ok(u64::MAX));
    assert_eq!(Limit::parse(format!("{U64_MAX}\n").as_bytes()), Ok(Limit::Value(u64::MAX)));
    let m = MemoryStat::parse(render(MemoryStat::KEYS, U64_MAX).as_bytes()).unwrap();
    assert!(m.iter().all(|(_, v)| v == Some(u64::MAX)));
    let e = MemoryEvents::parse(render(MemoryEvents::KEYS, U64_MAX).as_bytes()).unwrap();
    assert!(e.iter().all(|(_, v)| v == Some(u64::MAX)));
    let c = CpuStat::parse(render(CpuStat::KEYS, U64_MAX).as_bytes());
    // C int counters cannot hold u64::MAX...
    assert_eq!(c.map_err(|e| e.kind), Err(Overflow));
    // ...the others can.
    let u64_keys: Vec<_> = CpuStat::KEYS.iter().copied().filter(|k| !C_INT_KEYS.contains(k)).collect();
    let c = CpuStat::parse(render(&u64_keys, U64_MAX).as_bytes()).unwrap();
    assert!(c.iter().all(|(k, v)| v == if C_INT_KEYS.contains(&k) { None } else { Some(u64::MAX) }));
    assert_eq!(
        CpuStatLocal::parse(format!("throttled_usec {U64_MAX}").as_bytes()).unwrap().throttled_usec,
        Some(u64::MAX)
    );
    assert_eq!(
        CpuMax::parse(format!("{U64_MAX} {U64_MAX}").as_bytes()),
        Ok(CpuMax { quota_usec: Limit::Value(u64::MAX), period_usec: u64::MAX })
    );
    let input = format!("nr_descendants {U64_MAX}\nnr_subsys_cpu {U64_MAX}\n");
    let s = CgroupStat::parse(input.as_bytes()).unwrap();
    assert_eq!((s.nr_descendants, s.subsystem("cpu")), (Some(u64::MAX), Some(u64::MAX)));

    let line = format!(
        "8:0 rbytes={U64_MAX} wbytes={U64_MAX} rios={U64_MAX} wios={U64_MAX} dbytes={U64_MAX} dios={U64_MAX} cost.usage={U64_MAX} delay_nsec={U64_MAX}\n"
    );
    let io = IoStat::parse(line.as_bytes()).unwrap();
    let t = io.totals();
    assert_eq!([t.rbytes, t.wbytes, t.rios, t.wios, t.dbytes, t.dios], [Some(u64::MAX); 6]);
    let d = io.devices().next().unwrap();
    assert_eq!((d.cost_usage_usec, d.delay_nsec), (Some(u64::MAX), Some(u64::MAX)));
    // The largest exact Hundredths: 184467440737095516.15.
    let io = IoStat::parse(b"8:0 cost.vrate=184467440737095516.15\n").unwrap();
    assert_eq!(io.devices().next().unwrap().cost_vrate, Some(Hundredths(u64::MAX)));
}

/// `KEY VALUE\n` for each key.
fn render(keys: &[&str], value: &str) -> String {
    keys.iter().map(|k| format!("{k} {value}\n")).collect()
}

#[test]
fn overflow_in_every_key_of_every_flat_struct_is_located_at_the_value() {
    type ErrorAt = Option<(ErrorKind, u32, u32)>;
    fn check(name: &str, keys: &[&str], parse: fn(&[u8]) -> ErrorAt) {
        for key in keys {
            // An unknown first line, then the overflowing known key on line 2.
            let first = "some_future_key 1\n";
            let input = format!("{first}{key} {U64_MAX_PLUS_1}\n");
            let expected = (Overflow, 2, u32::try_from(first.len() + key.len() + 1).unwrap());
            assert_eq!(parse(input.as_bytes()), Some(expected), "{name}.{key}");
        }
    }
    check("CpuStat", CpuStat::KEYS, |i| CpuStat::parse(i).err().map(loc));
    check("CpuStatLocal", CpuStatLocal::KEYS, |i| CpuStatLocal::parse(i).err().map(loc));
    check("MemoryStat", MemoryStat::KEYS, |i| MemoryStat::parse(i).err().map(loc));
    check("MemoryEvents", MemoryEvents::KEYS, |i| MemoryEvents::parse(i).err().map(loc));
    check("PidsEvents", PidsEvents::KEYS, |i| PidsEvents::parse(i).err().map(loc));
    check("CgroupStat", &["nr_descendants", "nr_dying_descendants", "nr_subsys_memory", "nr_dying_subsys_io"], |i| {
        CgroupStat::parse(i).err().map(loc)
    });
}

#[test]
fn overflow_locations_in_other_formats() {
    assert_eq!(single::parse_u64(U64_MAX_PLUS_1.as_bytes()).map_err(loc), Err((Overflow, 1, 0)));
    assert_eq!(single::parse_u64(b"99999999999999999999999999\n").map_err(loc), Err((Overflow, 1, 0)));
    assert_eq!(Limit::parse(U64_MAX_PLUS_1.as_bytes()).map_err(loc), Err((Overflow, 1, 0)));
    assert_eq!(CpuMax::parse(format!("{U64_MAX_PLUS_1} 100000").as_bytes()).map_err(loc), Err((Overflow, 1, 0)));
    assert_eq!(CpuMax::parse(format!("max {U64_MAX_PLUS_1}").as_bytes()).map_err(loc), Err((Overflow, 1, 4)));

    // io.stat: a single value overflowing, located at the value.
    let input = format!("8:0 rbytes=1\n8:16 rbytes=1 wbytes={U64_MAX_PLUS_1}\n");
    assert_eq!(IoStat::parse(input.as_bytes()).map_err(loc), Err((Overflow, 2, 13 + 21)));
    // The sum over devices overflowing, located at the line that tips it over.
    let input = format!("8:0 rbytes={U64_MAX}\n8:16 rbytes=1\n");
    assert_eq!(IoStat::parse(input.as_bytes()).map_err(loc), Err((Overflow, 2, 32)));
    // Device numbers are u32.
    assert_eq!(IoStat::parse(b"4294967296:0 \n").map_err(loc), Err((Overflow, 1, 0)));
    assert_eq!(
        IoStat::parse(b"4294967295:4294967295 \n").unwrap().devices().next().unwrap().device,
        DeviceId { major: u32::MAX, minor: u32::MAX }
    );
    // cost.vrate beyond u64 hundredths.
    assert_eq!(IoStat::parse(b"8:0 cost.vrate=184467440737095516.16").map_err(loc), Err((Overflow, 1, 15)));

    // PIDs are u32.
    assert_eq!(PidList::parse(b"1\n4294967296\n").map_err(loc), Err((Overflow, 2, 2)));
    assert_eq!(PidList::parse(b"4294967295\n").unwrap().iter().collect::<Vec<_>>(), [u32::MAX]);

    // mountinfo IDs are u32, located at the field.
    let e = MountInfo::new(b"22 4294967296 0:21 / /proc rw - proc proc rw\n").next().unwrap().map_err(loc);
    assert_eq!(e, Err((Overflow, 1, 3)));
    // /proc/self/cgroup hierarchy IDs are u32.
    assert_eq!(unified_entry(b"0::/\n4294967296:cpu:/\n").map_err(loc), Err((Overflow, 2, 5)));
}

#[test]
fn c_int_counters_of_cpu_stat() {
    for key in C_INT_KEYS {
        let get = |v: &str| CpuStat::parse(format!("{key} {v}\n").as_bytes()).map(|s| s.get(key)).map_err(loc);
        assert_eq!(get("0"), Ok(Some(0)));
        assert_eq!(get("2147483647"), Ok(Some(2_147_483_647)));
        // A wrapped C int reads back as the unsigned counter it stands for.
        assert_eq!(get("-1"), Ok(Some(u64::from(u32::MAX))));
        assert_eq!(get("-2147483648"), Ok(Some(1 << 31)));
        assert_eq!(get("4294967295"), Ok(Some(u64::from(u32::MAX))));
        let at = u32::try_from(key.len() + 1).unwrap();
        assert_eq!(get("-2147483649"), Err((Overflow, 1, at)));
        assert_eq!(get("4294967296"), Err((Overflow, 1, at)));
        assert_eq!(get("-0"), Err((InvalidNumber, 1, at)));
        assert_eq!(get("-"), Err((InvalidNumber, 1, at)));
        assert_eq!(get("--1"), Err((InvalidNumber, 1, at)));
    }
    // Time keys are plain u64: no sign.
    assert_eq!(CpuStat::parse(b"usage_usec -1\n").map_err(loc), Err((InvalidNumber, 1, 11)));
    assert_eq!(CpuStat::parse(b"throttled_usec 4294967296\n").unwrap().throttled_usec, Some(1 << 32));
}

// ------------------------------------------------- unknown, reordered, duplicates

#[test]
fn unknown_keys_and_tokens_are_ignored() {
    let input = b"future_counter 42\nusage_usec 10\nnew_text_key some words here\nweird-key -1\nuser_usec 7\nk =\n";
    let s = CpuStat::parse(input).unwrap();
    assert_eq!((s.usage_usec, s.user_usec, s.system_usec), (Some(10), Some(7), None));
    assert_eq!(MemoryStat::parse(b"pgpgin 12\nanon 4096\npgpgout 3\n").unwrap().anon, Some(4096));
    assert_eq!(MemoryEvents::parse(b"oom_kill 1\nnew_event x\n").unwrap().oom_kill, Some(1));
    assert_eq!(CgroupEvents::parse(b"populated 1\nthawed maybe\n").unwrap().populated, Some(true));
    let s = CgroupStat::parse(b"nr_descendants 1\nnr_new_thing abc\n").unwrap();
    assert_eq!((s.nr_descendants, s.subsystems().count()), (Some(1), 0));

    let io = IoStat::parse(b"8:0 future=abc rbytes=5 cost.newthing=1.2.3 x.y=-7 wbytes=6\n").unwrap();
    let d = io.devices().next().unwrap();
    assert_eq!((d.rbytes, d.wbytes), (Some(5), Some(6)));
    // An unknown token still needs its `=`: that is the format, not the key.
    assert_eq!(IoStat::parse(b"8:0 rbytes=5 future\n").map_err(loc), Err((MissingSeparator, 1, 13)));
    // An unknown key with an empty value is still a malformed flat line.
    assert_eq!(CpuStat::parse(b"future \n").map_err(loc), Err((InvalidNumber, 1, 7)));
}

#[test]
fn key_order_does_not_matter() {
    fn reversed_lines(input: &[u8]) -> Vec<u8> {
        let lines: Vec<&[u8]> = input.split_inclusive(|&b| b == b'\n').collect();
        lines.into_iter().rev().flatten().copied().collect()
    }
    let cpu = include_bytes!("data/pure-v2-handmade/cpu.stat");
    assert_eq!(CpuStat::parse(&reversed_lines(cpu)), CpuStat::parse(cpu));
    let mem = include_bytes!("data/pure-v2-handmade/memory.stat");
    assert_eq!(MemoryStat::parse(&reversed_lines(mem)), MemoryStat::parse(mem));
    let ev = include_bytes!("data/pure-v2-handmade/memory.events");
    assert_eq!(MemoryEvents::parse(&reversed_lines(ev)), MemoryEvents::parse(ev));
    assert_eq!(
        CgroupEvents::parse(b"frozen 1\npopulated 0\n").unwrap(),
        CgroupEvents::parse(b"populated 0\nfrozen 1\n").unwrap()
    );

    // io.stat: reversed device order and reversed tokens within each line.
    let io = include_bytes!("data/pure-v2-handmade/io.stat");
    let shuffled: Vec<u8> = reversed_lines(io)
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .flat_map(|line| {
            let mut tokens: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
            let device = tokens.remove(0);
            tokens.reverse();
            let mut out = device.to_vec();
            for t in tokens {
                out.push(b' ');
                out.extend_from_slice(t);
            }
            out.push(b'\n');
            out
        })
        .collect();
    let (a, b) = (IoStat::parse(io).unwrap(), IoStat::parse(&shuffled).unwrap());
    assert_eq!(a.totals(), b.totals());
    let mut da: Vec<_> = a.devices().collect();
    let mut db: Vec<_> = b.devices().collect();
    da.sort_by_key(|d| d.device);
    db.sort_by_key(|d| d.device);
    assert_eq!(da, db);
}

#[test]
fn duplicate_keys_last_wins() {
    // Kernels never print a key twice; the documented behaviour is "last wins".
    assert_eq!(CpuStat::parse(b"usage_usec 1\nusage_usec 2\n").unwrap().usage_usec, Some(2));
    assert_eq!(MemoryStat::parse(b"anon 1\nfile 5\nanon 3\n").unwrap().anon, Some(3));
    assert_eq!(MemoryEvents::parse(b"max 9\nmax 0\n").unwrap().max, Some(0));
    assert_eq!(PidsEvents::parse(b"max 1\nmax 2\n").unwrap().max, Some(2));
    assert_eq!(CgroupEvents::parse(b"populated 1\npopulated 0\n").unwrap().populated, Some(false));
    assert_eq!(CgroupStat::parse(b"nr_descendants 1\nnr_descendants 4\n").unwrap().nr_descendants, Some(4));
    // Within an io.stat line, too.
    let io = IoStat::parse(b"8:0 rbytes=1 rbytes=2\n").unwrap();
    assert_eq!((io.totals().rbytes, io.devices().next().unwrap().rbytes), (Some(2), Some(2)));
    // Every value of a duplicate is still validated.
    assert_eq!(CpuStat::parse(b"usage_usec x\nusage_usec 2\n").map_err(loc), Err((InvalidNumber, 1, 11)));
}

#[test]
fn duplicate_lines_of_views() {
    // Views that walk the input (not "last wins"): documented here.
    // io.stat: a device printed twice is summed into the totals, listed twice,
    // and `device()` returns its first line.
    let io = IoStat::parse(b"8:0 rbytes=1\n8:0 rbytes=2\n").unwrap();
    assert_eq!((io.totals().rbytes, io.device_count()), (Some(3), 2));
    assert_eq!(io.device(DeviceId { major: 8, minor: 0 }).unwrap().rbytes, Some(1));
    // cgroup.stat: `subsystem()` returns the first of duplicate per-controller keys.
    let s = CgroupStat::parse(b"nr_subsys_cpu 1\nnr_subsys_cpu 2\n").unwrap();
    assert_eq!(s.subsystem("cpu"), Some(1));
    assert_eq!(s.subsystems().count(), 2);
    // Lists keep repeats.
    assert_eq!(ControllerList::parse(b"cpu cpu\n").unwrap().len(), 2);
    assert_eq!(PidList::parse(b"5\n5\n").unwrap().iter().collect::<Vec<_>>(), [5, 5]);
    // /proc/self/cgroup: the first `0::` line is the unified one.
    assert_eq!(unified_entry(b"0::/a\n0::/b\n").unwrap().unwrap().path, b"/a");
}

// ------------------------------------------------------------ CRLF and garbage

#[test]
fn crlf_locations() {
    assert_eq!(CpuStat::parse(b"usage_usec 1\r\n").map_err(loc), Err((InvalidNumber, 1, 11)));
    assert_eq!(MemoryEvents::parse(b"low 0\nhigh 1\r\n").map_err(loc), Err((InvalidNumber, 2, 11)));
    assert_eq!(CgroupEvents::parse(b"populated 1\r\n").map_err(loc), Err((InvalidFlag, 1, 10)));
    assert_eq!(single::parse_u64(b"1\r\n").map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(Limit::parse(b"max\r\n").map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(CgroupType::parse(b"domain\r\n").map_err(loc), Err((InvalidKey, 1, 0)));
    assert_eq!(ControllerList::parse(b"cpu io\r\n").map_err(loc), Err((InvalidKey, 1, 4)));
    assert_eq!(PidList::parse(b"1\r\n").map_err(loc), Err((InvalidKey, 1, 0)));
    assert_eq!(IoStat::parse(b"8:0 rbytes=1\r\n").map_err(loc), Err((InvalidNumber, 1, 11)));
    assert_eq!(IoStat::parse(b"8:0 \r\n").map_err(loc), Err((MissingSeparator, 1, 4)));
    assert_eq!(IoStat::parse(b"8:0\r\n").map_err(loc), Err((InvalidKey, 1, 0)));
    assert_eq!(CpuMax::parse(b"max 100000\r\n").map_err(loc), Err((InvalidNumber, 1, 4)));
    let e = MountInfo::new(b"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\r\n").next();
    assert_eq!(e.unwrap().map_err(loc), Err((InvalidKey, 1, 66)));
    assert_eq!(unified_entry(b"0::/\r\n").map_err(loc), Err((InvalidField, 1, 3)));
}

#[test]
fn crlf_on_lines_no_parser_reads_is_not_detected() {
    // Values of unknown keys are skipped without being looked at, so a `\r`
    // there goes unnoticed; the first known key reports it.
    assert_eq!(CpuStat::parse(b"future 1\r\n").unwrap(), CpuStat::default());
    assert_eq!(CpuStat::parse(b"future 1\r\nusage_usec 2\r\n").map_err(loc), Err((InvalidNumber, 2, 21)));
}

#[test]
fn garbage_is_an_error_for_every_parser() {
    let garbage: [&[u8]; 7] = [
        b"\x00",
        b"\x00\x01\x02\x03",
        b"\xff\xfe\xfd",
        b"\x7fELF\x02\x01\x01",
        b"\xc3\xa4\xc3\xb6\xc3\xbc",
        b"\t\t\t",
        b"\x1b[31mred\x1b[0m",
    ];
    for input in garbage {
        for (name, parse) in ALL_PARSERS {
            assert!(parse(input).is_err(), "{name} accepted {input:?}");
        }
    }
}

#[test]
fn nul_bytes_inside_otherwise_valid_lines() {
    assert_eq!(CpuStat::parse(b"usage_usec 1\x00\n").map_err(loc), Err((InvalidNumber, 1, 11)));
    assert_eq!(CpuStat::parse(b"usage_usec\x001\n").map_err(loc), Err((MissingSeparator, 1, 0)));
    assert_eq!(CpuStat::parse(b"usage\x00usec 1\n").map_err(loc), Err((InvalidKey, 1, 0)));
    assert_eq!(single::parse_u64(b"12\x0034\n").map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(ControllerList::parse(b"cpu\x00 io\n").map_err(loc), Err((InvalidKey, 1, 0)));
    assert_eq!(IoStat::parse(b"8:0 rbytes=1\x00\n").map_err(loc), Err((InvalidNumber, 1, 11)));
    assert_eq!(unified_entry(b"0::/a\x00b\n").map_err(loc), Err((InvalidField, 1, 3)));
}

#[test]
fn random_text_is_an_error_unless_it_has_the_shape_of_the_format() {
    let text = b"The quick brown fox jumps over the lazy dog.\n";
    // For flat files this is `KEY VAL` with an unknown key: accepted, all absent.
    assert_eq!(CpuStat::parse(text).unwrap(), CpuStat::default());
    assert_eq!(MemoryStat::parse(text).unwrap(), MemoryStat::default());
    // Every other format rejects it.
    assert_eq!(single::parse_u64(text).map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(Limit::parse(text).map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(CpuMax::parse(text).map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(IoStat::parse(text).map_err(loc), Err((InvalidField, 1, 0)));
    assert_eq!(PidList::parse(text).map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(unified_entry(text).map_err(loc), Err((MissingSeparator, 1, 0)));
    assert_eq!(MountInfo::new(text).next().unwrap().map_err(loc), Err((InvalidNumber, 1, 0)));
    // Controller names and cgroup.type text are free-form, so prose is "valid".
    assert_eq!(ControllerList::parse(text).unwrap().len(), 9);
    assert_eq!(CgroupType::parse(text).unwrap(), CgroupType::Other("The quick brown fox jumps over the lazy dog."));
}

// ------------------------------------------------- format-specific error spots

#[test]
fn flat_keyed_line_errors() {
    assert_eq!(CpuStat::parse(b"usage_usec 1\n\nuser_usec 2\n").map_err(loc), Err((EmptyLine, 2, 13)));
    assert_eq!(CpuStat::parse(b"usage_usec 1\n\n").map_err(loc), Err((EmptyLine, 2, 13)));
    assert_eq!(CpuStat::parse(b"usage_usec  1\n").map_err(loc), Err((InvalidNumber, 1, 11)));
    assert_eq!(CpuStat::parse(b"usage_usec 1 \n").map_err(loc), Err((InvalidNumber, 1, 11)));
    assert_eq!(CpuStat::parse(b"usage_usec\t1\n").map_err(loc), Err((MissingSeparator, 1, 0)));
    assert_eq!(CpuStat::parse(b" usage_usec 1\n").map_err(loc), Err((InvalidKey, 1, 0)));
    assert_eq!(CpuStat::parse(b"user_usec 1\nusage=usec 1\n").map_err(loc), Err((InvalidKey, 2, 12)));
    assert_eq!(CpuStat::parse(b"user_usec 1\nusage_usec\n").map_err(loc), Err((MissingSeparator, 2, 12)));
    assert_eq!(CpuStat::parse(b"usage_usec +1\n").map_err(loc), Err((InvalidNumber, 1, 11)));
    assert_eq!(CpuStat::parse(b"usage_usec 0x10\n").map_err(loc), Err((InvalidNumber, 1, 11)));
    assert_eq!(CpuStat::parse(b"usage_usec 1.5\n").map_err(loc), Err((InvalidNumber, 1, 11)));
    assert_eq!(CpuStat::parse(b"usage_usec 007\n").unwrap().usage_usec, Some(7), "leading zeros are decimal");
    assert_eq!(CgroupEvents::parse(b"populated 0\nfrozen 01\n").map_err(loc), Err((InvalidFlag, 2, 19)));
    assert_eq!(CgroupEvents::parse(b"populated 2\n").map_err(loc), Err((InvalidFlag, 1, 10)));
    assert_eq!(CgroupStat::parse(b"nr_descendants 1\nnr_subsys_cpu -1\n").map_err(loc), Err((InvalidNumber, 2, 31)));
}

#[test]
fn io_stat_line_errors_and_tolerances() {
    // Tolerated: bare device with or without trailing space, runs of spaces,
    // trailing spaces, unknown tokens.
    let io = IoStat::parse(b"8:0\n8:16 \n8:32   rbytes=1   wbytes=2   \n").unwrap();
    assert_eq!((io.device_count(), io.totals().rbytes, io.totals().wbytes), (3, Some(1), Some(2)));
    assert_eq!(io.totals().rios, None);
    // Errors, located at the offending token or line.
    assert_eq!(IoStat::parse(b"8:0 rbytes=1 wbytes\n").map_err(loc), Err((MissingSeparator, 1, 13)));
    assert_eq!(IoStat::parse(b"8:0 =1\n").map_err(loc), Err((InvalidKey, 1, 4)));
    assert_eq!(IoStat::parse(b"8:0 rbytes=\n").map_err(loc), Err((InvalidNumber, 1, 11)));
    assert_eq!(IoStat::parse(b"8:0 rbytes=1=2\n").map_err(loc), Err((InvalidNumber, 1, 11)));
    assert_eq!(IoStat::parse(b"8:0 rbytes=1\n80 rbytes=1\n").map_err(loc), Err((InvalidField, 2, 13)));
    assert_eq!(IoStat::parse(b"8: rbytes=1\n").map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(IoStat::parse(b":0 rbytes=1\n").map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(IoStat::parse(b"8:0:1 \n").map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(IoStat::parse(b"8:0\trbytes=1\n").map_err(loc), Err((InvalidKey, 1, 0)));
    assert_eq!(IoStat::parse(b"8:0 rbytes=1\n\n8:16 \n").map_err(loc), Err((EmptyLine, 2, 13)));
    assert_eq!(IoStat::parse(b"8:0 cost.vrate=100.001\n").map_err(loc), Err((InvalidNumber, 1, 15)));
    assert_eq!(IoStat::parse(b"8:0 depth=-1\n").map_err(loc), Err((InvalidNumber, 1, 10)));
    // Values accepted by each policy key.
    let d = IoStat::parse(b"8:0 cost.vrate=100 use_delay=-1\n").unwrap().devices().next().unwrap();
    assert_eq!((d.cost_vrate, d.use_delay), (Some(Hundredths(10_000)), Some(-1)));
    let d = IoStat::parse(b"8:0 cost.vrate=3.5\n").unwrap().devices().next().unwrap();
    assert_eq!(d.cost_vrate, Some(Hundredths(350)));
    assert_eq!(IoStat::parse(b"8:0 use_delay=-9223372036854775809\n").map_err(loc), Err((Overflow, 1, 14)));
}

#[test]
fn list_errors() {
    assert_eq!(ControllerList::parse(b"cpu io\nmemory\n").map_err(loc), Err((TrailingData, 2, 7)));
    assert_eq!(ControllerList::parse(b"cpu\n\n").map_err(loc), Err((TrailingData, 2, 4)));
    assert_eq!(ControllerList::parse(b"cpu\tio\n").map_err(loc), Err((InvalidKey, 1, 0)));
    let c = ControllerList::parse(b"  cpu   io  \n").unwrap();
    assert_eq!(c.iter().collect::<Vec<_>>(), ["cpu", "io"]);
    assert_eq!(PidList::parse(b"1\n\n2\n").map_err(loc), Err((EmptyLine, 2, 2)));
    assert_eq!(PidList::parse(b"1\n 2\n").map_err(loc), Err((InvalidNumber, 2, 2)));
    assert_eq!(PidList::parse(b"1\n2 3\n").map_err(loc), Err((InvalidNumber, 2, 2)));
    assert_eq!(PidList::parse(b"-1\n").map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(PidList::parse(b"0\n").unwrap().iter().collect::<Vec<_>>(), [0], "PID 0: task outside our namespace");
}

#[test]
fn single_value_errors() {
    assert_eq!(single::parse_u64(b"1\n2\n").map_err(loc), Err((TrailingData, 2, 2)));
    assert_eq!(single::parse_u64(b"1\n\n").map_err(loc), Err((TrailingData, 2, 2)));
    assert_eq!(single::parse_u64(b" 1\n").map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(single::parse_u64(b"1 \n").map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(single::parse_u64(b"-1\n").map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(single::parse_flag(b"2\n").map_err(loc), Err((InvalidFlag, 1, 0)));
    assert_eq!(single::parse_flag(b"true\n").map_err(loc), Err((InvalidFlag, 1, 0)));
    assert_eq!(CpuMax::parse(b"max\n").map_err(loc), Err((MissingField, 1, 0)));
    assert_eq!(CpuMax::parse(b"max  100000\n").map_err(loc), Err((InvalidNumber, 1, 4)));
    assert_eq!(CpuMax::parse(b"max 100000 1\n").map_err(loc), Err((InvalidNumber, 1, 4)));
    assert_eq!(CpuMax::parse(b"50000 max\n").map_err(loc), Err((InvalidNumber, 1, 6)));
    assert_eq!(CpuMax::parse(b"-1 100000\n").map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(CpuMax::parse(b"max 100000\nx\n").map_err(loc), Err((TrailingData, 2, 11)));
}

#[test]
fn cgroup_type_values() {
    assert_eq!(CgroupType::parse(b"domain\n"), Ok(CgroupType::Domain));
    assert_eq!(CgroupType::parse(b"domain threaded\n"), Ok(CgroupType::DomainThreaded));
    assert_eq!(CgroupType::parse(b"domain invalid\n"), Ok(CgroupType::DomainInvalid));
    assert_eq!(CgroupType::parse(b"threaded"), Ok(CgroupType::Threaded));
    // Unknown text is kept verbatim rather than forced into a variant.
    assert_eq!(CgroupType::parse(b"domain  threaded\n"), Ok(CgroupType::Other("domain  threaded")));
    assert_eq!(CgroupType::parse(b"Domain\n"), Ok(CgroupType::Other("Domain")));
    assert_eq!(CgroupType::parse(b"domain\nthreaded\n").map_err(loc), Err((TrailingData, 2, 7)));
    assert_eq!(CgroupType::parse(b"dom\tain\n").map_err(loc), Err((InvalidKey, 1, 0)));
}

#[test]
fn mountinfo_edges() {
    let kind_at = |i: &'static [u8]| MountInfo::new(i).next().unwrap().map(|m| m.mount_id).map_err(loc);
    // No `-` separator: reported at the end of the line.
    assert_eq!(kind_at(b"41 31 0:38 / /x rw shared:1\n"), Err((MissingSeparator, 1, 27)));
    assert_eq!(kind_at(b"41 31 0:38 / /x rw - cgroup2\n"), Err((MissingField, 1, 28)));
    assert_eq!(kind_at(b"41 31 0:38 / /x rw - cgroup2 cgroup2 rw extra\n"), Err((TrailingData, 1, 40)));
    assert_eq!(kind_at(b"41 31 038 / /x rw - cgroup2 cgroup2 rw\n"), Err((InvalidField, 1, 6)));
    assert_eq!(kind_at(b"41\n"), Err((MissingField, 1, 2)));
    // A mount point that is itself `-` (field 5 is fixed, so it is not the separator).
    let m = MountInfo::new(b"50 1 0:5 / - rw shared:2 - tmpfs none rw\n").next().unwrap().unwrap();
    assert!(m.mount_point.eq_unescaped(b"-"));
    assert_eq!((m.optional_fields, m.fs_type), ("shared:2", "tmpfs"));
    // Tabs also separate fields, lines are counted.
    let two = b"1 0 0:1 / / rw - ext4 /dev/sda1 rw\n2\t1\t0:2\t/\t/sys/fs/cgroup\trw\t-\tcgroup2\tcgroup2\trw\n";
    let all: Vec<_> = MountInfo::new(two).map(Result::unwrap).collect();
    assert_eq!((all[1].line, all[1].fs_type, all[1].mount_id), (2, "cgroup2", 2));
    // Iteration stops after the first bad line.
    let mut it = MountInfo::new(b"x\n1 0 0:1 / / rw - ext4 a rw\n");
    assert!(it.next().unwrap().is_err());
    assert!(it.next().is_none());
    // Escapes: the four the kernel writes, an invalid one kept literally.
    let e = Escaped::new(b"a\\040b\\011c\\012d\\134e\\999f\\777g\\04");
    assert_eq!(e.bytes().collect::<Vec<_>>(), b"a b\tc\nd\\e\\999f\\777g\\04");
    let mut small = [0u8; 3];
    assert_eq!(Escaped::new(b"abcd").unescape_into(&mut small), None);
    // find_cgroup2_mount: escaped roots compare unescaped; an error anywhere is an error.
    let esc = b"9 1 0:30 /my\\040slice /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
    assert_eq!(find_cgroup2_mount(esc, b"/my slice/step").unwrap().unwrap().mount_id, 9);
    assert!(find_cgroup2_mount(esc, b"/my").unwrap().is_none());
    let bad_later = b"9 1 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\nbroken\n";
    assert_eq!(find_cgroup2_mount(bad_later, b"/").map_err(loc), Err((InvalidNumber, 2, 50)));
}

#[test]
fn proc_cgroup_edges() {
    let parse = |i: &'static [u8]| ProcCgroup::new(i).next().unwrap();
    let e = parse(b"0::/a:b:c\n").unwrap();
    assert_eq!(e.path, b"/a:b:c", "the path may contain colons");
    let e = parse(b"0::/step (deleted)\n").unwrap();
    assert_eq!((e.path, e.deleted), (&b"/step"[..], true));
    let e = parse(b"0::/../../sibling\n").unwrap();
    assert_eq!(e.path, b"/../../sibling");
    let e = parse(b"2:cpu,cpuacct:/\n").unwrap();
    assert_eq!(e.controller_names().collect::<Vec<_>>(), ["cpu", "cpuacct"]);
    assert!(!e.is_unified());
    let e = parse(b"1:name=systemd:/init.scope\n").unwrap();
    assert_eq!(e.controller_names().collect::<Vec<_>>(), ["name=systemd"]);
    // Non-UTF-8 cgroup names are fine: the path is bytes.
    assert_eq!(parse(b"0::/caf\xe9\n").unwrap().path, b"/caf\xe9");

    assert_eq!(parse(b"0::relative\n").map_err(loc), Err((InvalidField, 1, 3)));
    assert_eq!(parse(b"0::\n").map_err(loc), Err((InvalidField, 1, 3)));
    assert_eq!(parse(b"0:cpu\n").map_err(loc), Err((MissingSeparator, 1, 2)));
    assert_eq!(parse(b"x::/\n").map_err(loc), Err((InvalidNumber, 1, 0)));
    assert_eq!(parse(b"0:c\tpu:/\n").map_err(loc), Err((InvalidKey, 1, 2)));
    // unified_entry validates the whole input, even after finding `0::`.
    assert_eq!(unified_entry(b"0::/\n1:cpu\n").map_err(loc), Err((MissingSeparator, 2, 7)));
    assert_eq!(unified_entry(b"1:cpu:/\n2:memory:/\n"), Ok(None), "pure v1: no 0:: line");
}

#[test]
fn non_ascii_super_options_of_an_unrelated_mount_do_not_break_discovery() {
    // seq_show_option() escapes only `,= \t\n\\` in option values; other bytes,
    // including UTF-8, are printed as they are (rootless podman under a home
    // directory with a non-ASCII name produces exactly this line shape).
    let input = "30 22 0:27 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n\
                 412 28 0:61 / /home/j\\303\\274rgen/merged rw,relatime - overlay overlay \
                 rw,lowerdir=/home/jürgen/.local/share/containers/storage/overlay/l/ABC,upperdir=/u,workdir=/w\n";
    assert_eq!(find_cgroup2_mount(input.as_bytes(), b"/").map(|m| m.map(|m| m.mount_id)), Ok(Some(30)));
    let overlay = MountInfo::new(input.as_bytes()).nth(1).unwrap().unwrap();
    assert!(overlay.super_options.contains("lowerdir=/home/jürgen/"));
}
