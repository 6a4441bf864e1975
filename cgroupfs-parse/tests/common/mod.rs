//! Helpers shared by the integration tests: every public parser behind one
//! signature, so tests can run all of them on the same bytes.
#![allow(dead_code)] // each test binary uses a different subset

use std::fmt::Write as _;
use std::path::PathBuf;

use stepmon_cgroupfs_parse::format::flat::FlatKeyed;
use stepmon_cgroupfs_parse::format::list::{NewlineList, SpaceList};
use stepmon_cgroupfs_parse::format::nested::NestedKeyed;
use stepmon_cgroupfs_parse::format::single::{self, Limit};
use stepmon_cgroupfs_parse::mountinfo::{MountInfo, find_cgroup2_mount};
use stepmon_cgroupfs_parse::proc_cgroup::{ProcCgroup, unified_entry};
use stepmon_cgroupfs_parse::{
    CgroupEvents, CgroupStat, CgroupType, ControllerList, CpuMax, CpuStat, CpuStatLocal, IoStat, MemoryEvents,
    MemoryStat, ParseError, PidList, PidsEvents, Result,
};

/// A parser run to completion (iterators drained), its output rendered with
/// `Debug` so results of different types can be compared and printed.
pub(crate) type AnyParser = fn(&[u8]) -> Result<String>;

fn collect<T: std::fmt::Debug>(items: impl Iterator<Item = Result<T>>) -> Result<String> {
    let items = items.collect::<Result<Vec<T>>>()?;
    Ok(format!("{items:?}"))
}

fn cpu_stat(i: &[u8]) -> Result<String> {
    CpuStat::parse(i).map(|s| format!("{s:?}"))
}
fn cpu_stat_local(i: &[u8]) -> Result<String> {
    CpuStatLocal::parse(i).map(|s| format!("{s:?}"))
}
fn cpu_max(i: &[u8]) -> Result<String> {
    CpuMax::parse(i).map(|s| format!("{s:?}"))
}
fn memory_stat(i: &[u8]) -> Result<String> {
    MemoryStat::parse(i).map(|s| format!("{s:?}"))
}
fn memory_events(i: &[u8]) -> Result<String> {
    MemoryEvents::parse(i).map(|s| format!("{s:?}"))
}
fn pids_events(i: &[u8]) -> Result<String> {
    PidsEvents::parse(i).map(|s| format!("{s:?}"))
}
fn cgroup_events(i: &[u8]) -> Result<String> {
    CgroupEvents::parse(i).map(|s| format!("{s:?}"))
}
fn single_u64(i: &[u8]) -> Result<String> {
    single::parse_u64(i).map(|s| format!("{s:?}"))
}
fn limit(i: &[u8]) -> Result<String> {
    Limit::parse(i).map(|s| format!("{s:?}"))
}
fn flag(i: &[u8]) -> Result<String> {
    single::parse_flag(i).map(|s| format!("{s:?}"))
}
fn text(i: &[u8]) -> Result<String> {
    single::parse_text(i).map(|s| format!("{s:?}"))
}
fn cgroup_type(i: &[u8]) -> Result<String> {
    CgroupType::parse(i).map(|s| format!("{s:?}"))
}

fn io_stat(i: &[u8]) -> Result<String> {
    let io = IoStat::parse(i)?;
    let devices: Vec<_> = io.devices().collect();
    assert_eq!(devices.len(), io.device_count(), "devices() must yield every validated line");
    for d in &devices {
        // `device` finds the first line of that device.
        assert_eq!(io.device(d.device).map(|f| f.device), Some(d.device));
        let _ = d.device.to_string();
        if let Some(v) = d.cost_vrate {
            let _ = (v.to_string(), v.as_f64());
        }
    }
    Ok(format!("{:?} {devices:?}", io.totals()))
}

fn cgroup_stat(i: &[u8]) -> Result<String> {
    let s = CgroupStat::parse(i)?;
    let live: Vec<_> = s.subsystems().collect();
    let dying: Vec<_> = s.dying_subsystems().collect();
    for c in &live {
        assert!(s.subsystem(c.controller).is_some());
    }
    Ok(format!("{:?} {:?} {live:?} {dying:?}", s.nr_descendants, s.nr_dying_descendants))
}

fn controller_list(i: &[u8]) -> Result<String> {
    let c = ControllerList::parse(i)?;
    let items: Vec<_> = c.iter().collect();
    assert_eq!(items.len(), c.len());
    assert_eq!(c.is_empty(), items.is_empty());
    for item in &items {
        assert!(c.contains(item));
    }
    Ok(format!("{items:?}"))
}

fn pid_list(i: &[u8]) -> Result<String> {
    let p = PidList::parse(i)?;
    let items: Vec<_> = p.iter().collect();
    assert_eq!(items.len(), p.len());
    Ok(format!("{items:?}"))
}

fn mountinfo(i: &[u8]) -> Result<String> {
    let mut out = String::new();
    for m in MountInfo::new(i) {
        let m = m?;
        // Exercise the lazy unescaping on every escaped field.
        for e in [m.root, m.mount_point, m.source] {
            let bytes: Vec<u8> = e.bytes().collect();
            assert_eq!(bytes.len(), e.unescaped_len());
            assert!(e.eq_unescaped(&bytes) && e.starts_with_unescaped(&bytes));
            let mut buf = vec![0u8; bytes.len()];
            assert_eq!(e.unescape_into(&mut buf), Some(&bytes[..]));
            let _ = e.to_path_buf();
        }
        let _ = (m.is_cgroup2(), m.has_super_option("nsdelegate"));
        write!(out, "{m:?};").unwrap();
    }
    // The selection must agree with validation: it fails exactly when iteration fails.
    let found = find_cgroup2_mount(i, b"/")?;
    write!(out, "{:?}", found.map(|m| m.mount_id)).unwrap();
    Ok(out)
}

fn proc_cgroup(i: &[u8]) -> Result<String> {
    let all = collect(ProcCgroup::new(i))?;
    let unified = unified_entry(i)?;
    Ok(format!("{all} {unified:?}"))
}

fn flat_keyed(i: &[u8]) -> Result<String> {
    collect(FlatKeyed::new(i).map(|e| e.and_then(|e| Ok((e.key, e.value_u64()?)))))
}

fn nested_keyed(i: &[u8]) -> Result<String> {
    let mut out = String::new();
    for line in NestedKeyed::new(i) {
        let line = line?;
        write!(out, "{} {}:", line.key, line.line()).unwrap();
        for pair in line.pairs() {
            let pair = pair?;
            write!(out, " {}={:?}", pair.key, pair.value).unwrap();
        }
        out.push(';');
    }
    Ok(out)
}

fn space_list(i: &[u8]) -> Result<String> {
    collect(SpaceList::new(i))
}

fn newline_list(i: &[u8]) -> Result<String> {
    collect(NewlineList::new(i).map(|l| l.map(|l| l.bytes)))
}

/// Every public parser and building block of the crate, by name.
pub(crate) const ALL_PARSERS: &[(&str, AnyParser)] = &[
    ("CpuStat", cpu_stat),
    ("CpuStatLocal", cpu_stat_local),
    ("CpuMax", cpu_max),
    ("MemoryStat", memory_stat),
    ("MemoryEvents", memory_events),
    ("PidsEvents", pids_events),
    ("CgroupEvents", cgroup_events),
    ("CgroupStat", cgroup_stat),
    ("ControllerList", controller_list),
    ("PidList", pid_list),
    ("CgroupType", cgroup_type),
    ("single::parse_u64", single_u64),
    ("Limit", limit),
    ("single::parse_flag", flag),
    ("single::parse_text", text),
    ("IoStat", io_stat),
    ("MountInfo", mountinfo),
    ("ProcCgroup", proc_cgroup),
    ("FlatKeyed", flat_keyed),
    ("NestedKeyed", nested_keyed),
    ("SpaceList", space_list),
    ("NewlineList", newline_list),
];

/// The parser for a kernel file, by its name in `tests/data` (the
/// `cgroup2_root_`/`cgroup2_child_` prefix and `.txt` suffix of captures are
/// ignored). `None` for files no parser here reads.
pub(crate) fn parser_for(file_name: &str) -> Option<AnyParser> {
    let name = file_name.trim_end_matches(".txt");
    let name = name.strip_prefix("cgroup2_root_").or_else(|| name.strip_prefix("cgroup2_child_")).unwrap_or(name);
    Some(match name {
        "cpu.stat" => cpu_stat,
        "cpu.stat.local" => cpu_stat_local,
        "cpu.max" => cpu_max,
        "memory.stat" => memory_stat,
        "memory.events" | "memory.events.local" => memory_events,
        "memory.current"
        | "memory.peak"
        | "memory.swap.current"
        | "memory.swap.peak"
        | "pids.current"
        | "pids.peak" => single_u64,
        "memory.min"
        | "memory.low"
        | "memory.high"
        | "memory.max"
        | "memory.swap.max"
        | "pids.max"
        | "cgroup.max.depth"
        | "cgroup.max.descendants" => limit,
        "cgroup.freeze" | "cgroup.pressure" => flag,
        "pids.events" | "pids.events.local" => pids_events,
        "io.stat" => io_stat,
        "cgroup.events" => cgroup_events,
        "cgroup.stat" => cgroup_stat,
        "cgroup.stat.local" => flat_keyed,
        "cgroup.controllers" | "cgroup.subtree_control" => controller_list,
        "cgroup.procs" | "cgroup.threads" => pid_list,
        "cgroup.type" => cgroup_type,
        "proc_self_mountinfo" => mountinfo,
        "proc_self_cgroup" => proc_cgroup,
        "sys_kernel_cgroup_features" | "sys_kernel_cgroup_delegate" => newline_list,
        _ => return None,
    })
}

/// `(file name, bytes)` of every file under `tests/data/<dir>`, sorted.
pub(crate) fn data_files(dir: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// `(kind, line, offset)` of an error, for compact assertions.
pub(crate) fn loc(e: ParseError) -> (stepmon_cgroupfs_parse::ErrorKind, u32, u32) {
    (e.kind, e.line, e.offset)
}
