//! The benchmark groups (one per input file) and, for each, the functions to
//! compare: ours, the peers, and I/O baselines.
//!
//! Naming, relied upon by `scripts/bench-table`:
//! * `ours` — our typed parser on the bytes (the headline number);
//! * `ours_file` — open + read the tmpfs copy into a reused buffer + `ours`,
//!   to compare like with like against peers that only take a `File`;
//! * `ours_*` — other ways to use our crates (the generic building blocks);
//! * `*_file` peers — open + read + parse, the only way the peer can be used;
//! * `io_*` baselines — the open + read part alone, so the parse share of a
//!   `*_file` number can be estimated (`io_pread`: `pread` on a kept-open fd).

use std::fs::File;
use std::io::Read;

use cgroups_rs::fs::{flat_keyed_to_hashmap, nested_keyed_to_hashmap, parse_max_value};
use procfs_core::{CpuPressure, FromBufRead, IoPressure, parse_pressure_record};
use stepmon_cgroupfs_parse::format::{flat, nested::NestedKeyed, single};
use stepmon_cgroupfs_parse::{CpuStat, IoStat, Limit, MemoryStat};
use stepmon_psi::Pressure;

use crate::inputs::{self, Fixture, Input};

/// Whose code a case runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Our crates.
    Ours,
    /// A peer crate from crates.io.
    Peer,
    /// Plain I/O without parsing, for reference.
    Baseline,
}

impl Side {
    /// Lower-case name, as written to the allocation report.
    pub fn name(self) -> &'static str {
        match self {
            Side::Ours => "ours",
            Side::Peer => "peer",
            Side::Baseline => "baseline",
        }
    }
}

/// Receives the cases of a group. Generic over the closure so each case is
/// monomorphised and inlined into the timing loop (no indirect call).
pub trait Sink {
    /// One case: `function` names it inside its group. The result is `Debug`
    /// so tests can check that no case fails on its input.
    fn case<T: std::fmt::Debug>(&mut self, function: &'static str, side: Side, run: impl Fn(&Fixture) -> T);
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    CpuStat,
    MemoryStat,
    IoStat,
    PsiCpu,
    PsiIo,
    LimitValue,
    LimitMax,
}

/// One benchmark group: an input file and the cases run on it.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    /// Criterion group name.
    pub name: &'static str,
    /// The bytes parsed by every case of the group.
    pub input: Input,
    kind: Kind,
}

/// Every group, in report order.
pub const GROUPS: &[Group] = &[
    Group { name: "cpu_stat_root", input: inputs::CPU_STAT_ROOT, kind: Kind::CpuStat },
    Group { name: "cpu_stat_full", input: inputs::CPU_STAT_FULL, kind: Kind::CpuStat },
    Group { name: "memory_stat", input: inputs::MEMORY_STAT, kind: Kind::MemoryStat },
    Group { name: "io_stat", input: inputs::IO_STAT, kind: Kind::IoStat },
    Group { name: "psi_cpu", input: inputs::PSI_CPU, kind: Kind::PsiCpu },
    Group { name: "psi_io", input: inputs::PSI_IO, kind: Kind::PsiIo },
    Group { name: "psi_cgroup_cpu", input: inputs::PSI_CGROUP_CPU, kind: Kind::PsiCpu },
    Group { name: "single_max_value", input: inputs::MEMORY_MAX_VALUE, kind: Kind::LimitValue },
    Group { name: "single_max_max", input: inputs::MEMORY_MAX_MAX, kind: Kind::LimitMax },
];

impl Group {
    /// Hands every case of this group to `sink`.
    pub fn cases<S: Sink>(&self, sink: &mut S) {
        match self.kind {
            Kind::CpuStat => {
                sink.case("ours", Side::Ours, |fx| CpuStat::parse(fx.bytes()));
                sink.case("ours_flat_keyed", Side::Ours, |fx| flat_sum(fx.bytes()));
                sink.case("ours_file", Side::Ours, |fx| fx.open_read(CpuStat::parse));
                file_baselines(sink);
                sink.case("cgroups_rs_file", Side::Peer, |fx| File::open(&fx.path).map(flat_keyed_to_hashmap));
            }
            Kind::MemoryStat => {
                sink.case("ours", Side::Ours, |fx| MemoryStat::parse(fx.bytes()));
                sink.case("ours_flat_keyed", Side::Ours, |fx| flat_sum(fx.bytes()));
                sink.case("ours_file", Side::Ours, |fx| fx.open_read(MemoryStat::parse));
                file_baselines(sink);
                sink.case("cgroups_rs_file", Side::Peer, |fx| File::open(&fx.path).map(flat_keyed_to_hashmap));
            }
            Kind::IoStat => {
                sink.case("ours", Side::Ours, |fx| IoStat::parse(fx.bytes()).map(|io| io.totals()));
                sink.case("ours_nested_keyed", Side::Ours, |fx| nested_sum(fx.bytes()));
                sink.case("ours_file", Side::Ours, |fx| fx.open_read(|b| IoStat::parse(b).map(|io| io.totals())));
                file_baselines(sink);
                sink.case("cgroups_rs_file", Side::Peer, |fx| File::open(&fx.path).map(nested_keyed_to_hashmap));
            }
            Kind::PsiCpu => {
                sink.case("ours", Side::Ours, |fx| Pressure::parse(fx.bytes()));
                sink.case("procfs_core_from_buf_read", Side::Peer, |fx| CpuPressure::from_buf_read(fx.bytes()));
                psi_line_peers(sink);
            }
            Kind::PsiIo => {
                sink.case("ours", Side::Ours, |fx| Pressure::parse(fx.bytes()));
                sink.case("procfs_core_from_buf_read", Side::Peer, |fx| IoPressure::from_buf_read(fx.bytes()));
                psi_line_peers(sink);
            }
            Kind::LimitValue => {
                sink.case("ours", Side::Ours, |fx| Limit::parse(fx.bytes()));
                sink.case("ours_single_u64", Side::Ours, |fx| single::parse_u64(fx.bytes()));
                sink.case("cgroups_rs_parse_max_value", Side::Peer, |fx| parse_max_value(fx.text));
            }
            Kind::LimitMax => {
                sink.case("ours", Side::Ours, |fx| Limit::parse(fx.bytes()));
                sink.case("cgroups_rs_parse_max_value", Side::Peer, |fx| parse_max_value(fx.text));
            }
        }
    }
}

/// The open + read half of the `*_file` cases, without parsing: into our
/// reused buffer (as `ours_file`), and into a fresh `String` (as the
/// cgroups-rs helpers do before parsing); and `pread` on a kept-open fd, the
/// floor for a sampler that does not reopen files.
fn file_baselines<S: Sink>(sink: &mut S) {
    sink.case("io_open_read", Side::Baseline, |fx| fx.open_read(<[u8]>::len));
    sink.case("io_pread", Side::Baseline, |fx| fx.pread(<[u8]>::len));
    sink.case("io_open_read_to_string", Side::Baseline, |fx| {
        File::open(&fx.path).and_then(|mut f| {
            let mut s = String::new();
            f.read_to_string(&mut s).map(|_| s)
        })
    });
}

/// The peers that parse one PSI line from a `&str`; both lines of the file
/// are parsed. They get the text already split off as `&str`, which spares
/// them the UTF-8 check a real caller reading a `File` would pay.
fn psi_line_peers<S: Sink>(sink: &mut S) {
    sink.case("procfs_core_parse_pressure_record", Side::Peer, |fx| {
        let mut lines = fx.text.lines().map(parse_pressure_record);
        (lines.next(), lines.next())
    });
    sink.case("psi_from_str", Side::Peer, |fx| {
        let mut lines = fx.text.lines().map(str::parse::<psi::Psi>);
        (lines.next(), lines.next())
    });
}

/// The generic flat keyed iterator, every value parsed as `u64` (what the
/// cgroups-rs helper does for every line).
fn flat_sum(input: &[u8]) -> stepmon_cgroupfs_parse::Result<u64> {
    let mut sum = 0u64;
    flat::for_each(input, |entry| {
        sum = sum.wrapping_add(entry.value_u64()?);
        Ok(())
    })?;
    Ok(sum)
}

/// The generic nested keyed iterator, every value parsed as `u64` (what the
/// cgroups-rs helper does for every pair).
fn nested_sum(input: &[u8]) -> stepmon_cgroupfs_parse::Result<u64> {
    let mut sum = 0u64;
    for line in NestedKeyed::new(input) {
        for pair in line?.pairs() {
            sum = sum.wrapping_add(pair?.value_u64()?);
        }
    }
    Ok(sum)
}

#[cfg(test)]
mod tests {
    //! Every case must succeed on its input and the peers must read the same
    //! values as ours: a benchmark of a parser that fails early would be
    //! meaningless.

    use super::*;
    use crate::inputs::TmpDir;
    use std::collections::HashMap;

    fn fixture(group: &Group, dir: &TmpDir) -> Fixture {
        Fixture::new(group.input, dir.path()).unwrap()
    }

    fn group(name: &str) -> &'static Group {
        GROUPS.iter().find(|g| g.name == name).unwrap()
    }

    /// Runs each case once and fails if its result holds an error (only the
    /// `Debug` form is available generically).
    struct Check<'a> {
        group: &'static str,
        fx: &'a Fixture,
        seen: Vec<&'static str>,
    }

    impl Sink for Check<'_> {
        fn case<T: std::fmt::Debug>(&mut self, function: &'static str, _side: Side, run: impl Fn(&Fixture) -> T) {
            let text = format!("{:?}", run(self.fx));
            assert!(!text.contains("Err(") && !text.contains("(None"), "{}/{function}: {text}", self.group);
            self.seen.push(function);
        }
    }

    #[test]
    fn every_case_succeeds_and_every_group_has_ours_and_a_peer() {
        let dir = TmpDir::new().unwrap();
        for g in GROUPS {
            let fx = fixture(g, &dir);
            let mut check = Check { group: g.name, fx: &fx, seen: Vec::new() };
            g.cases(&mut check);
            let names = check.seen;
            assert!(names.contains(&"ours"), "{}", g.name);
            let mut unique = names.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), names.len(), "{}", g.name);
            assert!(
                names.iter().any(|n| n.starts_with("cgroups_rs") || n.starts_with("procfs") || *n == "psi_from_str")
            );
        }
    }

    fn as_i64(v: Option<u64>) -> i64 {
        i64::try_from(v.unwrap()).unwrap()
    }

    #[test]
    fn flat_peers_agree() {
        let dir = TmpDir::new().unwrap();
        for name in ["cpu_stat_root", "cpu_stat_full"] {
            let fx = fixture(group(name), &dir);
            let ours = CpuStat::parse(fx.bytes()).unwrap();
            let peer = File::open(&fx.path).map(flat_keyed_to_hashmap).unwrap().unwrap();
            let present: Vec<_> = ours.iter().filter(|(_, v)| v.is_some()).collect();
            assert_eq!(present.len(), peer.len(), "{name}");
            for (key, value) in present {
                assert_eq!(peer[key], as_i64(value), "{name} {key}");
            }
            assert_eq!(fx.open_read(CpuStat::parse).unwrap().unwrap(), ours);
            let sum: i64 = peer.values().sum();
            assert_eq!(flat_sum(fx.bytes()).unwrap(), u64::try_from(sum).unwrap());
        }
        assert_eq!(
            CpuStat::parse(inputs::CPU_STAT_FULL.bytes).unwrap().iter().filter(|(_, v)| v.is_some()).count(),
            10
        );

        let fx = fixture(group("memory_stat"), &dir);
        let ours = MemoryStat::parse(fx.bytes()).unwrap();
        let peer = File::open(&fx.path).map(flat_keyed_to_hashmap).unwrap().unwrap();
        let present: Vec<_> = ours.iter().filter(|(_, v)| v.is_some()).collect();
        assert_eq!(present.len(), 61);
        assert_eq!(peer.len(), 61);
        for (key, value) in present {
            assert_eq!(peer[key], as_i64(value), "{key}");
        }
        assert_eq!(fx.open_read(MemoryStat::parse).unwrap().unwrap(), ours);
    }

    #[test]
    fn io_peer_agrees() {
        let dir = TmpDir::new().unwrap();
        let fx = fixture(group("io_stat"), &dir);
        let ours = IoStat::parse(fx.bytes()).unwrap();
        let peer: HashMap<String, HashMap<String, i64>> =
            File::open(&fx.path).map(nested_keyed_to_hashmap).unwrap().unwrap();
        assert_eq!((ours.device_count(), peer.len()), (10, 10));
        let total = |key: &str| peer.values().filter_map(|d| d.get(key)).sum::<i64>();
        let t = ours.totals();
        assert_eq!(as_i64(t.rbytes), total("rbytes"));
        assert_eq!(as_i64(t.wbytes), total("wbytes"));
        assert_eq!(as_i64(t.rios), total("rios"));
        assert_eq!(as_i64(t.wios), total("wios"));
        assert_eq!(as_i64(t.dbytes), total("dbytes"));
        assert_eq!(as_i64(t.dios), total("dios"));
        assert_eq!(peer["8:32"]["cost.usage"], 0);
        assert!(peer["11:0"].is_empty());
        let all: i64 = peer.values().flat_map(|d| d.values()).sum();
        assert_eq!(nested_sum(fx.bytes()).unwrap(), u64::try_from(all).unwrap());
        assert_eq!(fx.open_read(|b| IoStat::parse(b).map(|io| io.totals())).unwrap().unwrap(), t);
    }

    #[test]
    fn psi_peers_agree() {
        let dir = TmpDir::new().unwrap();
        for name in ["psi_cpu", "psi_io", "psi_cgroup_cpu"] {
            let fx = fixture(group(name), &dir);
            let ours = Pressure::parse(fx.bytes()).unwrap();
            let (some, full) = (ours.some.unwrap(), ours.full.unwrap());
            let procfs = CpuPressure::from_buf_read(fx.bytes()).unwrap();
            let mut lines = fx.text.lines();
            let psi_some: psi::Psi = lines.next().unwrap().parse().unwrap();
            let psi_full: psi::Psi = lines.next().unwrap().parse().unwrap();
            for (ours, procfs, psi) in [(some, procfs.some, psi_some), (full, procfs.full, psi_full)] {
                assert_eq!(ours.total_usec, Some(procfs.total), "{name}");
                assert_eq!(u128::from(ours.total_usec.unwrap()), psi.total.as_micros(), "{name}");
                #[allow(clippy::cast_possible_truncation)] // the peers' f32, compared at 1e-3
                for (a, b, c) in [
                    (ours.avg10, procfs.avg10, psi.avg10),
                    (ours.avg60, procfs.avg60, psi.avg60),
                    (ours.avg300, procfs.avg300, psi.avg300),
                ] {
                    let a = a.unwrap().as_f64() as f32;
                    assert!((a - b).abs() < 1e-3 && (a - c).abs() < 1e-3, "{name}: {a} {b} {c}");
                }
            }
            let per_line: Vec<_> = fx.text.lines().map(|l| parse_pressure_record(l).unwrap().total).collect();
            assert_eq!(per_line, [some.total_usec.unwrap(), full.total_usec.unwrap()]);
        }
        assert!(IoPressure::from_buf_read(inputs::PSI_IO.bytes).is_ok());
    }

    #[test]
    fn limit_peer_agrees() {
        use cgroups_rs::fs::MaxValue;
        assert_eq!(Limit::parse(inputs::MEMORY_MAX_VALUE.bytes).unwrap(), Limit::Value(8 << 30));
        assert_eq!(single::parse_u64(inputs::MEMORY_MAX_VALUE.bytes).unwrap(), 8 << 30);
        let text = std::str::from_utf8(inputs::MEMORY_MAX_VALUE.bytes).unwrap();
        assert!(matches!(parse_max_value(text).unwrap(), MaxValue::Value(v) if v == 8 << 30));
        assert_eq!(Limit::parse(inputs::MEMORY_MAX_MAX.bytes).unwrap(), Limit::Max);
        let text = std::str::from_utf8(inputs::MEMORY_MAX_MAX.bytes).unwrap();
        assert!(matches!(parse_max_value(text).unwrap(), MaxValue::Max));
    }
}
