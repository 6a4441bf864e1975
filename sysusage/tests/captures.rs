//! The real captures of the hybrid 6.18 host (`data/hybrid-6.18/`, copied
//! from a hybrid 6.18 host, laid out like `/proc`), parsed
//! directly and through `SysProbe` pointed at that directory.

use std::num::NonZeroU64;

use stepmon_model::missing::MissingKind;
use stepmon_sysusage::parse::{Hundredths, KernelStat, LoadAvg, MemInfo, MemInfoEntries, MemUnit, Pressure};
use stepmon_sysusage::probe::{ProcFile, ReadStrategy, SysProbe};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/hybrid-6.18");

fn read(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DIR}/{name}")).unwrap()
}

#[test]
fn stat_capture() {
    let bytes = read("stat");
    let s = KernelStat::parse(&bytes).unwrap();
    let total = s.total.unwrap();
    // cpu  991 0 1182 38460 93 0 21 7 0 0
    assert_eq!(total.as_array(), [991, 0, 1182, 38460, 93, 0, 21, 7, 0, 0].map(Some),);
    assert_eq!(total.columns, 10);
    let cpus: Vec<_> = s.per_cpu().collect();
    assert_eq!(cpus.iter().map(|c| c.cpu).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(cpus[0].times.as_array(), [229, 0, 543, 19571, 7, 0, 5, 2, 0, 0].map(Some));
    assert_eq!(cpus[1].times.as_array(), [761, 0, 638, 18889, 86, 0, 15, 5, 0, 0].map(Some));
    // The aggregate is summed a moment before the per-CPU lines are printed,
    // so they need not add up: here user 991 vs 229 + 761, system 1182 vs
    // 543 + 638, softirq 21 vs 5 + 15; the other columns match.
    let diff: Vec<u64> = (0..10)
        .map(|col| {
            let sum: u64 = cpus.iter().map(|c| c.times.as_array()[col].unwrap()).sum();
            total.as_array()[col].unwrap() - sum
        })
        .collect();
    assert_eq!(diff, [1, 0, 1, 0, 0, 0, 1, 0, 0, 0]);
    let c = s.counters;
    assert_eq!(c.intr_total, Some(98_611));
    assert_eq!((c.ctxt, c.btime, c.processes), (Some(231_363), Some(1_796_005_186), Some(4682)));
    assert_eq!((c.procs_running, c.procs_blocked), (Some(1), Some(0)));
    let soft = s.softirq.unwrap();
    assert_eq!(soft.total, 51_212);
    assert_eq!(
        [
            soft.hi,
            soft.timer,
            soft.net_tx,
            soft.net_rx,
            soft.block,
            soft.irq_poll,
            soft.tasklet,
            soft.sched,
            soft.hrtimer,
            soft.rcu
        ],
        [0, 6742, 4, 4623, 6218, 0, 137, 17545, 0, 15943].map(Some)
    );
}

#[test]
fn meminfo_capture() {
    let bytes = read("meminfo");
    let m = MemInfo::parse(&bytes).unwrap();
    assert_eq!((m.mem_total, m.mem_free, m.mem_available), (Some(24_684_092), Some(24_225_144), Some(24_371_192)));
    assert_eq!((m.active_anon, m.inactive_file), (Some(1544), Some(204_348)));
    assert_eq!((m.swap_total, m.swap_free, m.zswapped), (Some(0), Some(0), Some(0)));
    assert_eq!((m.nfs_unstable, m.committed_as), (Some(0), Some(61_276)));
    assert_eq!(m.vmalloc_total, Some(34_359_738_367));
    assert_eq!(m.get_bytes("VmallocTotal"), Some(34_359_738_367 * 1024));
    assert_eq!((m.huge_pages_total, m.hugepagesize, m.direct_map_1g), (Some(0), Some(2048), Some(25_165_824)));
    assert_eq!((m.balloon, m.sec_page_tables), (Some(0), Some(0)));
    // Config-dependent keys this kernel does not print.
    assert_eq!((m.hardware_corrupted, m.cma_total, m.unaccepted, m.high_total), (None, None, None, None));
    // 54 lines, every one a known key.
    let entries: Vec<_> = MemInfoEntries::new(&bytes).map(Result::unwrap).collect();
    assert_eq!(entries.len(), 54);
    assert!(entries.iter().all(|e| MemInfo::unit_of(e.key) == Some(e.unit)), "every key known, with its unit");
    assert_eq!(entries.iter().filter(|e| e.unit == MemUnit::Count).count(), 4);
    assert_eq!(m.iter().filter(|(_, _, v)| v.is_some()).count(), 54);
}

#[test]
fn loadavg_and_pressure_captures() {
    let l = LoadAvg::parse(&read("loadavg")).unwrap();
    assert_eq!(l, LoadAvg::new([Hundredths(18), Hundredths(7), Hundredths(2)], 1, 89, 4687));
    let cpu = Pressure::parse(&read("pressure/cpu")).unwrap();
    let some = cpu.some.unwrap();
    assert_eq!(
        (some.avg10, some.avg300, some.total_usec),
        (Some(Hundredths(300)), Some(Hundredths(60)), Some(3_220_079))
    );
    assert_eq!(cpu.full.unwrap().total_usec, Some(0));
    let io = Pressure::parse(&read("pressure/io")).unwrap();
    assert_eq!((io.some.unwrap().total_usec, io.full.unwrap().total_usec), (Some(745_509), Some(683_709)));
    let mem = Pressure::parse(&read("pressure/memory")).unwrap();
    assert_eq!((mem.some.unwrap().total_usec, mem.full.unwrap().avg10), (Some(0), Some(Hundredths(0))));
}

#[test]
fn probe_reads_a_capture_directory() {
    for strategy in [ReadStrategy::HeldPread, ReadStrategy::OpenReadClose] {
        let mut probe = SysProbe::open_with(DIR, strategy).unwrap();
        probe.set_user_hz(NonZeroU64::new(100).unwrap());
        for _ in 0..2 {
            let r = probe.read();
            assert_eq!(r.stat.as_ref().unwrap().per_cpu.len(), 2);
            assert_eq!(r.meminfo.unwrap().mem_total, Some(24_684_092));
            assert_eq!(r.loadavg.unwrap().threads, 89);
            assert!(r.cpu_pressure.is_some() && r.memory_pressure.is_some() && r.io_pressure.is_some());
            // The capture, like the host, has no pressure/irq.
            assert_eq!(r.irq_pressure, None);
            assert_eq!(r.missing.len(), 1, "{:?}", r.missing);
            let m = &r.missing[0];
            assert_eq!((&*m.field, &*m.file, m.kind), ("irqPressure", "pressure/irq", MissingKind::NotFound));
            assert!(m.reason.contains("No such file"), "{}", m.reason);
        }
        assert_eq!(probe.read_file(ProcFile::Loadavg).unwrap(), b"0.18 0.07 0.02 1/89 4687\n");
        assert_eq!(probe.read_file(ProcFile::PressureIrq).unwrap_err().kind(), std::io::ErrorKind::NotFound);
    }
}

#[test]
fn probe_root_must_be_a_directory() {
    assert!(SysProbe::open(format!("{DIR}/nope")).is_err());
    assert!(SysProbe::open(format!("{DIR}/stat")).is_err());
    // A directory without the files is not an error: every part is reported missing.
    let mut probe = SysProbe::open(format!("{DIR}/pressure")).unwrap();
    let r = probe.read();
    assert!(r.stat.is_none() && r.meminfo.is_none() && r.cpu_pressure.is_none());
    assert_eq!(r.missing.len(), ProcFile::ALL.len());
    assert!(r.missing.iter().all(|m| m.kind == MissingKind::NotFound));
}
