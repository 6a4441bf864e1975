//! The /proc parsers never allocate, and neither does a warm held-fd re-read.
//! `allocation-counter` counts per thread, so parallel tests do not interfere.

use stepmon_sysusage::parse::{CmdLine, KernelStat, LoadAvg, MemInfo, MemInfoEntries, Pressure};
use stepmon_sysusage::probe::{ProcFile, ReadStrategy, SysProbe};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn data(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}/{name}")).unwrap()
}

#[test]
fn the_counter_counts() {
    let info = allocation_counter::measure(|| {
        std::hint::black_box(vec![1u8; 16]);
    });
    assert_eq!(info.count_total, 1);
}

#[test]
fn parsers_do_not_allocate() {
    let stat = data("hybrid-6.18/stat");
    let big = data("edge/stat-64cpu-gaps");
    let meminfo = data("hybrid-6.18/meminfo");
    let loadavg = data("hybrid-6.18/loadavg");
    let psi = data("hybrid-6.18/pressure/io");
    let mut checksum = 0u64;
    let info = allocation_counter::measure(|| {
        for input in [&stat, &big] {
            let s = KernelStat::parse(input).unwrap();
            checksum += s.total.unwrap().total_ticks();
            checksum += s.per_cpu().map(|c| c.times.busy_ticks()).sum::<u64>();
            checksum += s.cpu(63).map_or(0, |c| c.user);
        }
        let m = MemInfo::parse(&meminfo).unwrap();
        checksum += m.mem_total.unwrap() + m.get_bytes("MemFree").unwrap();
        checksum += MemInfoEntries::new(&meminfo).map(|e| e.unwrap().value).sum::<u64>();
        checksum += LoadAvg::parse(&loadavg).unwrap().threads;
        checksum += Pressure::parse(&psi).unwrap().some.unwrap().total_usec.unwrap();
        let cmdline = CmdLine::new(b"rustc\0--crate-name\0foo\0src/lib.rs\0");
        checksum += cmdline.args().map(|a| a.len() as u64).sum::<u64>() + cmdline.len() as u64;
        // Error paths too.
        checksum += u64::from(KernelStat::parse(b"cpu 1 2\n").unwrap_err().offset);
        checksum += u64::from(MemInfo::parse(b"MemTotal: 5").unwrap_err().line);
    });
    assert!(checksum > 0);
    assert_eq!((info.count_total, info.bytes_total), (0, 0), "{info:?}");
}

#[test]
fn warm_held_fd_reread_does_not_allocate() {
    let mut probe = SysProbe::open_with(format!("{DATA}/hybrid-6.18"), ReadStrategy::HeldPread).unwrap();
    for file in [ProcFile::Stat, ProcFile::Meminfo, ProcFile::Loadavg, ProcFile::PressureCpu] {
        probe.read_file(file).unwrap(); // warm-up: opens nothing new, sizes the buffer
        let mut len = 0;
        let info = allocation_counter::measure(|| {
            len = probe.read_file(file).unwrap().len();
        });
        assert!(len > 0);
        assert_eq!(info.count_total, 0, "{file:?}: {info:?}");
    }
    // The same on the live /proc (stat and meminfo are regenerated on each read).
    let mut live = SysProbe::open("/proc").unwrap();
    for file in [ProcFile::Stat, ProcFile::Meminfo, ProcFile::Loadavg] {
        live.read_file(file).unwrap();
        let info = allocation_counter::measure(|| {
            live.read_file(file).unwrap();
        });
        assert_eq!(info.count_total, 0, "live {file:?}: {info:?}");
    }
}
