//! Whole-machine and network parsers and the system probe, side by side
//! with their peers (see the README, "Whole-machine and network").
//!
//! Parser groups (one input file each, cases named as in [`crate::cases`]
//! so `scripts/bench-table` reads them the same way):
//! * `ours` — our parser on the bytes **and** every value it offers taken
//!   out, since the peers build all of them, in one pass:
//!   `KernelStat::parse_with` (each CPU handed out as it is parsed);
//!   `NetDevLines`; `ours_validate` — the parse call alone (it checks every
//!   line; per-CPU and per-interface values are then decoded lazily);
//!   `ours_parse_walk` — `KernelStat::parse` + walking `per_cpu()`,
//!   `NetDev::parse` + walking `interfaces()` (two passes);
//! * `ours_file` — open + read the tmpfs copy into a reused buffer + `ours`;
//!   `ours_pread` — `pread` on a kept-open fd + `ours` (how our probes read);
//! * `procfs_core_from_buf_read` (bytes), `procfs_core_file`
//!   (`from_file`: open + `BufReader`), `fb_procfs_file` (`ProcReader` on a
//!   tmpfs directory laid out like `/proc`);
//! * `io_open_read`, `io_pread` — the I/O of `ours_file` / `ours_pread` alone.
//!
//! `sys_probe` reads the live `/proc`; `sys_sample_json` turns two live
//! readings into BuildKit's `SysSample` JSON.

use std::fs;
use std::hint::black_box;
use std::io;
use std::path::Path;
use std::time::Duration;

use fb_procfs::ProcReader;
use procfs_core::net::InterfaceDeviceStatus;
use procfs_core::{
    ExplicitSystemInfo, FromBufRead, FromBufReadSI, FromRead, FromReadSI, KernelStats, LoadAverage, Meminfo,
};
use stepmon_fdread::{Dir, HeldFile};
use stepmon_netns_stats::{NetDev, NetDevLines};
use stepmon_sysusage::parse::{KernelStat, LoadAvg, MemInfo, ParseError, Pressure};
use stepmon_sysusage::probe::{ProcFile, ReadStrategy, SysProbe};

use crate::floor::{HeldFiles, OpenReadClose, PathReader, PreadReader, present};
use crate::inputs::{Input, TmpDir};
use crate::runner::{GroupInfo, Runner, Side, keep};

/// Real `/proc/stat` of the hybrid 6.18 host (2 CPUs).
pub const PROC_STAT: Input = Input { file: "proc_stat.txt", bytes: include_bytes!("../data/proc_stat.txt") };
/// 64-CPU `/proc/stat` with offline CPUs (59 `cpuN` lines), from sysusage's edge cases.
pub const PROC_STAT_64CPU: Input =
    Input { file: "proc_stat_64cpu_gaps.txt", bytes: include_bytes!("../data/proc_stat_64cpu_gaps.txt") };
/// Real `/proc/meminfo` (57 keys).
pub const PROC_MEMINFO: Input = Input { file: "proc_meminfo.txt", bytes: include_bytes!("../data/proc_meminfo.txt") };
/// Real `/proc/loadavg`.
pub const PROC_LOADAVG: Input = Input { file: "proc_loadavg.txt", bytes: include_bytes!("../data/proc_loadavg.txt") };
/// Real `/proc/net/dev` (4 interfaces).
pub const PROC_NET_DEV: Input = Input { file: "proc_net_dev.txt", bytes: include_bytes!("../data/proc_net_dev.txt") };
/// Synthetic `/proc/net/dev` with 64 interfaces in the kernel's layout.
pub const PROC_NET_DEV_64: Input =
    Input { file: "proc_net_dev_64if.txt", bytes: include_bytes!("../data/proc_net_dev_64if.txt") };

/// What procfs-core needs to turn ticks into durations (USER_HZ 100).
const SYSTEM_INFO: ExplicitSystemInfo = ExplicitSystemInfo {
    boot_time_secs: 1_796_005_186,
    ticks_per_second: 100,
    page_size: 4096,
    is_little_endian: true,
};

#[derive(Debug, Clone, Copy)]
enum Kind {
    Stat,
    Meminfo,
    Loadavg,
    NetDev,
    Probe,
    SampleJson,
}

/// One group of this module.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    /// Name, input, allocation rule.
    pub info: GroupInfo,
    input: Option<Input>,
    /// Where the input lives below a `/proc`-like root (for `fb_procfs`).
    proc_path: &'static str,
    kind: Kind,
}

const fn parser(name: &'static str, input: Input, proc_path: &'static str, kind: Kind) -> Group {
    Group { info: GroupInfo { name, file: input.file, zero_alloc: true }, input: Some(input), proc_path, kind }
}

/// Every group, in report order.
pub const GROUPS: &[Group] = &[
    parser("proc_stat_2cpu", PROC_STAT, "stat", Kind::Stat),
    parser("proc_stat_64cpu", PROC_STAT_64CPU, "stat", Kind::Stat),
    parser("meminfo", PROC_MEMINFO, "meminfo", Kind::Meminfo),
    parser("loadavg", PROC_LOADAVG, "loadavg", Kind::Loadavg),
    parser("net_dev_4if", PROC_NET_DEV, "net/dev", Kind::NetDev),
    parser("net_dev_64if", PROC_NET_DEV_64, "net/dev", Kind::NetDev),
    Group {
        info: GroupInfo { name: "sys_probe", file: "/proc (live)", zero_alloc: false },
        input: None,
        proc_path: "",
        kind: Kind::Probe,
    },
    Group {
        info: GroupInfo { name: "sys_sample_json", file: "/proc (live, two readings)", zero_alloc: false },
        input: None,
        proc_path: "",
        kind: Kind::SampleJson,
    },
];

/// `/proc/stat` with every per-CPU line decoded (the peers build a `Vec` of
/// them) in the one pass of [`KernelStat::parse_with`], the way `SysProbe`
/// builds its `StatSnapshot`.
pub fn stat_all(bytes: &[u8]) -> Result<(KernelStat<'_>, usize), ParseError> {
    let mut n = 0;
    let stat = KernelStat::parse_with(bytes, |cpu| {
        black_box(cpu);
        n += 1;
    })?;
    Ok((stat, n))
}

/// `/proc/stat` validated whole by [`KernelStat::parse`], then every
/// per-CPU line decoded again by walking `per_cpu()` (two passes).
pub fn stat_parse_walk(bytes: &[u8]) -> Result<(KernelStat<'_>, usize), ParseError> {
    let stat = KernelStat::parse(bytes)?;
    let mut n = 0;
    for cpu in stat.per_cpu() {
        black_box(cpu);
        n += 1;
    }
    Ok((stat, n))
}

/// `/proc/net/dev` with every interface decoded in one pass (the peer
/// builds a map of them): [`NetDevLines`], each line checked as it comes.
pub fn net_dev_all(bytes: &[u8]) -> Result<usize, ParseError> {
    let mut n = 0;
    for interface in NetDevLines::new(bytes)? {
        black_box(interface?);
        n += 1;
    }
    Ok(n)
}

/// `/proc/net/dev` validated whole by [`NetDev::parse`], then every
/// interface decoded by walking it again (what `NetnsCounters::read` and
/// `Snapshot::from_net_dev` do: two passes).
pub fn net_dev_parse_walk(bytes: &[u8]) -> Result<usize, ParseError> {
    let dev = NetDev::parse(bytes)?;
    let mut n = 0;
    for interface in dev.interfaces() {
        black_box(interface);
        n += 1;
    }
    Ok(n)
}

/// Our parser for a file below `/proc`, everything decoded (as `SysProbe`
/// does, without building the owned reading).
pub fn parse_proc_file(path: &str, bytes: &[u8]) -> Result<(), ParseError> {
    match path {
        "stat" => stat_all(bytes).map(drop),
        "meminfo" => MemInfo::parse(bytes).map(keep),
        "loadavg" => LoadAvg::parse(bytes).map(keep),
        _ => Pressure::parse(bytes).map(keep),
    }
}

impl Group {
    /// Hands every case of this group to `runner`. Fails only if the
    /// tmpfs copies cannot be written or `/proc` cannot be opened.
    pub fn cases<R: Runner>(&self, runner: &mut R) -> io::Result<()> {
        match (self.kind, self.input) {
            (Kind::Probe, _) => probe_cases(runner),
            (Kind::SampleJson, _) => sample_json_cases(runner),
            (kind, Some(input)) => {
                let dir = TmpDir::new()?;
                let path = dir.path().join(self.proc_path);
                if let Some(parent) = path.parent() {
                    fs::create_dir_all(parent)?;
                }
                fs::write(&path, input.bytes)?;
                parser_cases(runner, kind, input.bytes, dir.path(), &path)
            }
            (_, None) => Ok(()),
        }
    }
}

fn parser_cases<R: Runner>(r: &mut R, kind: Kind, bytes: &'static [u8], root: &Path, path: &Path) -> io::Result<()> {
    let si = SYSTEM_INFO;
    let mut file = PathReader::new(path.to_path_buf());
    let mut held = PreadReader::open(path)?;
    macro_rules! ours {
        ($parse:expr, $validate:expr) => {{
            r.case("ours", Side::Ours, || $parse(black_box(bytes)));
            r.case("ours_validate", Side::Ours, || $validate(black_box(bytes)));
            // The result borrows the reused buffer: black-boxed in place.
            r.case("ours_file", Side::Ours, || file.read(|b| $parse(b).map(keep)));
            r.case("ours_pread", Side::Ours, || held.read(|b| $parse(b).map(keep)));
            r.case("io_open_read", Side::Baseline, || file.read(<[u8]>::len));
            r.case("io_pread", Side::Baseline, || held.read(<[u8]>::len));
        }};
    }
    match kind {
        Kind::Stat => {
            ours!(stat_all, KernelStat::parse);
            r.case("ours_parse_walk", Side::Ours, || stat_parse_walk(black_box(bytes)));
            r.case("procfs_core_from_buf_read", Side::Peer, || {
                <KernelStats as FromBufReadSI>::from_buf_read(black_box(bytes), &si)
            });
            r.case("procfs_core_file", Side::Peer, || <KernelStats as FromReadSI>::from_file(path, &si));
            let fb = ProcReader::new_with_custom_procfs(root.to_path_buf());
            r.case("fb_procfs_file", Side::Peer, || fb.read_stat());
        }
        Kind::Meminfo => {
            ours!(MemInfo::parse, MemInfo::parse);
            r.case("procfs_core_from_buf_read", Side::Peer, || {
                <Meminfo as FromBufRead>::from_buf_read(black_box(bytes))
            });
            r.case("procfs_core_file", Side::Peer, || <Meminfo as FromRead>::from_file(path));
            let fb = ProcReader::new_with_custom_procfs(root.to_path_buf());
            r.case("fb_procfs_file", Side::Peer, || fb.read_meminfo());
        }
        Kind::Loadavg => {
            ours!(LoadAvg::parse, LoadAvg::parse);
            // `LoadAverage` implements `FromRead` only (it reads into a `String`).
            r.case("procfs_core_from_read", Side::Peer, || <LoadAverage as FromRead>::from_read(black_box(bytes)));
            r.case("procfs_core_file", Side::Peer, || <LoadAverage as FromRead>::from_file(path));
        }
        Kind::NetDev => {
            ours!(net_dev_all, NetDev::parse);
            r.case("ours_parse_walk", Side::Ours, || net_dev_parse_walk(black_box(bytes)));
            r.case("procfs_core_from_buf_read", Side::Peer, || {
                <InterfaceDeviceStatus as FromBufRead>::from_buf_read(black_box(bytes))
            });
            r.case("procfs_core_file", Side::Peer, || <InterfaceDeviceStatus as FromRead>::from_file(path));
        }
        Kind::Probe | Kind::SampleJson => {}
    }
    Ok(())
}

/// `SysProbe` on the live `/proc` against the floor: the same files through
/// held fds, `pread` into a reused buffer, no parsing.
fn probe_cases<R: Runner>(r: &mut R) -> io::Result<()> {
    let root = Path::new("/proc");
    let all: Vec<&str> = ProcFile::ALL.iter().map(|f| f.path()).collect();
    let files = present(root, &all);

    let mut held = SysProbe::open(root)?;
    r.case("ours_held_pread", Side::Ours, || held.read());
    // The probe's own I/O path (stepmon-fdread) without parsing.
    let mut io_only = SysProbe::open(root)?;
    r.case("ours_held_read_files", Side::Ours, || {
        ProcFile::ALL.iter().map(|&f| io_only.read_file(f).map_or(0, <[u8]>::len)).sum::<usize>()
    });
    let mut orc = SysProbe::open_with(root, ReadStrategy::OpenReadClose)?;
    r.case("ours_open_read_close", Side::Ours, || orc.read());

    let mut floor = HeldFiles::open(root, &files)?;
    r.case("io_floor_pread", Side::Baseline, || floor.pread_all());
    r.case("io_floor_pread_once", Side::Baseline, || floor.pread_once_all());
    let mut open = OpenReadClose::new(root, &files)?;
    r.case("io_open_read_close", Side::Baseline, || open.read_all());

    // The two ratios of the targets, measured interleaved (see `Runner::paired`).
    let (mut held2, mut floor2) = (SysProbe::open(root)?, HeldFiles::open(root, &files)?);
    r.paired("paired_held_over_floor", || held2.read(), || floor2.pread_all());
    r.paired("paired_held_over_floor_once", || held2.read(), || floor2.pread_once_all());
    let mut orc2 = SysProbe::open_with(root, ReadStrategy::OpenReadClose)?;
    r.paired("paired_open_read_close_over_held", || orc2.read(), || held2.read());

    // Where the probe's time goes beyond the floor: our parsers on what the
    // floor read (no owned reading built) ...
    r.case("ours_floor_parse", Side::Ours, || {
        let mut errors = 0usize;
        floor.for_each(|name, bytes| errors += usize::from(parse_proc_file(name, bytes).is_err())).map(|()| errors)
    });
    // ... the same parsers on bytes captured once (no I/O) ...
    let mut captured = Vec::new();
    floor.for_each(|name, bytes| captured.push((name.to_owned(), bytes.to_vec())))?;
    r.case("ours_parse_only", Side::Ours, || {
        captured.iter().filter(|(name, bytes)| parse_proc_file(name, black_box(bytes)).is_err()).count()
    });
    // ... and, for each file the probe cannot open (here `pressure/irq`
    // without CONFIG_IRQ_TIME_ACCOUNTING), the `openat` it retries on
    // every reading.
    let absent: Vec<&str> = all.iter().copied().filter(|p| !files.iter().any(|f| f == p)).collect();
    if !absent.is_empty() {
        let dir = Dir::open(root)?;
        r.case("io_failed_openat", Side::Baseline, || {
            absent.iter().filter(|p| HeldFile::open_at(&dir, black_box(p)).is_err()).count()
        });
    }
    Ok(())
}

/// `SysSample::from_reading` and `serde_json::to_string` on two live readings.
fn sample_json_cases<R: Runner>(r: &mut R) -> io::Result<()> {
    let mut probe = SysProbe::open("/proc")?;
    let first = probe.read();
    std::thread::sleep(Duration::from_millis(20));
    let second = probe.read();
    r.case("ours_from_reading", Side::Ours, || stepmon_sysusage::model::sys_sample(black_box(&second), Some(&first)));
    let sample = stepmon_sysusage::model::sys_sample(&second, Some(&first));
    r.case("ours_to_json", Side::Ours, || serde_json::to_string(black_box(&sample)));
    r.case("ours_from_reading_to_json", Side::Ours, || {
        serde_json::to_string(&stepmon_sysusage::model::sys_sample(black_box(&second), Some(&first)))
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    //! Every case succeeds and the peers read the same values as ours.

    use super::*;
    use crate::runner::CheckRunner;

    #[test]
    fn every_case_succeeds() {
        for g in GROUPS {
            let mut check = CheckRunner::new(g.info.name);
            g.cases(&mut check).unwrap();
            let seen: Vec<&str> = check.seen.iter().map(|(f, _)| *f).collect();
            let mut unique = seen.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), seen.len(), "{}", g.info.name);
            if g.input.is_some() {
                assert!(check.ran("ours") && seen.iter().any(|f| f.starts_with("procfs_core")));
            }
        }
    }

    #[test]
    fn stat_peers_agree() {
        for (input, cpus) in [(PROC_STAT, 2), (PROC_STAT_64CPU, 59)] {
            let (ours, n) = stat_all(input.bytes).unwrap();
            assert_eq!(n, cpus);
            assert_eq!(stat_parse_walk(input.bytes).unwrap(), (ours, n));
            let peer = <KernelStats as FromBufReadSI>::from_buf_read(input.bytes, &SYSTEM_INFO).unwrap();
            assert_eq!(peer.cpu_time.len(), cpus);
            assert_eq!(Some(peer.total.user), ours.total.map(|t| t.user));
            assert_eq!(Some(peer.ctxt), ours.counters.ctxt);
            for (p, o) in peer.cpu_time.iter().zip(ours.per_cpu()) {
                assert_eq!((p.user, p.idle, p.steal), (o.times.user, o.times.idle, o.times.steal));
            }
            let dir = TmpDir::new().unwrap();
            fs::write(dir.path().join("stat"), input.bytes).unwrap();
            let fb = ProcReader::new_with_custom_procfs(dir.path().to_path_buf()).read_stat().unwrap();
            assert_eq!(fb.cpus_map.unwrap().len(), cpus);
            assert_eq!(fb.context_switches, ours.counters.ctxt);
        }
    }

    #[test]
    fn meminfo_and_loadavg_peers_agree() {
        let ours = MemInfo::parse(PROC_MEMINFO.bytes).unwrap();
        let peer = <Meminfo as FromBufRead>::from_buf_read(PROC_MEMINFO.bytes).unwrap();
        // procfs-core converts kB to bytes.
        assert_eq!(Some(peer.mem_total), ours.mem_total.map(|kb| kb * 1024));
        assert_eq!(peer.mem_available, ours.mem_available.map(|kb| kb * 1024));
        let dir = TmpDir::new().unwrap();
        fs::write(dir.path().join("meminfo"), PROC_MEMINFO.bytes).unwrap();
        let fb = ProcReader::new_with_custom_procfs(dir.path().to_path_buf()).read_meminfo().unwrap();
        assert_eq!(fb.total, ours.mem_total.map(|kb| kb * 1024));

        let ours = LoadAvg::parse(PROC_LOADAVG.bytes).unwrap();
        let peer = <LoadAverage as FromRead>::from_read(PROC_LOADAVG.bytes).unwrap();
        assert_eq!(u64::from(peer.latest_pid), ours.last_pid);
    }

    #[test]
    fn net_dev_peer_agrees() {
        for (input, n) in [(PROC_NET_DEV, 4), (PROC_NET_DEV_64, 64)] {
            assert_eq!(net_dev_all(input.bytes).unwrap(), n);
            assert_eq!(net_dev_parse_walk(input.bytes).unwrap(), n);
            let peer = <InterfaceDeviceStatus as FromBufRead>::from_buf_read(input.bytes).unwrap();
            assert_eq!(peer.0.len(), n);
            for i in NetDev::parse(input.bytes).unwrap().interfaces() {
                let p = &peer.0[i.name_str().unwrap()];
                assert_eq!((p.recv_bytes, p.sent_bytes), (i.counters.rx_bytes, i.counters.tx_bytes));
            }
        }
    }
}
