//! Hand-made edge cases: a 64-CPU machine with offline CPUs and a
//! 1000-column `intr` line, a 2.4-era `/proc/stat`, meminfo variants,
//! empty and truncated files, and the probe over broken capture directories.

use std::num::NonZeroU64;
use std::path::Path;

use stepmon_model::missing::MissingKind;
use stepmon_sysusage::parse::{ErrorKind, KernelStat, LoadAvg, MemInfo, Pressure};
use stepmon_sysusage::probe::{ProcFile, ReadStrategy, SysProbe};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
const HZ: NonZeroU64 = NonZeroU64::new(100).unwrap();

fn data(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DATA}/{name}")).unwrap()
}

/// A scratch directory laid out like /proc, removed on drop (also when the
/// test fails).
struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = tempfile::Builder::new().prefix(&format!("stepmon-sysusage-{name}-")).tempdir().unwrap();
        std::fs::create_dir(dir.path().join("pressure")).unwrap();
        Scratch(dir)
    }
    fn put(&self, name: &str, content: &[u8]) -> &Self {
        std::fs::write(self.0.path().join(name), content).unwrap();
        self
    }
    fn path(&self) -> &Path {
        self.0.path()
    }
}

/// The columns `data/edge/stat-64cpu-gaps` was generated with, for CPU `n`.
fn columns(n: u64) -> [u64; 10] {
    [1000 + n, n, 500 + 2 * n, 100_000 + n, n % 7, n % 2, n % 3, n % 5, n % 4, 0]
}
const OFFLINE: [u64; 5] = [5, 17, 18, 19, 40];

#[test]
fn sixty_four_cpus_with_gaps_and_a_1000_column_intr() {
    let bytes = data("edge/stat-64cpu-gaps");
    assert!(bytes.len() > 4096, "larger than one page, like on real big machines");
    let s = KernelStat::parse(&bytes).unwrap();
    let online: Vec<u64> = (0..64).filter(|n| !OFFLINE.contains(n)).collect();
    assert_eq!(s.cpu_count(), online.len());
    assert_eq!(s.per_cpu().len(), 59);
    for (line, n) in s.per_cpu().zip(&online) {
        assert_eq!(u64::from(line.cpu), *n);
        assert_eq!(line.times.as_array(), columns(*n).map(Some), "cpu{n}");
    }
    assert_eq!(s.cpu(5), None);
    assert_eq!(s.cpu(63).unwrap().user, 1063);
    // The aggregate covers all possible CPUs, offline ones included.
    let total = s.total.unwrap().as_array().map(Option::unwrap);
    for (col, aggregate) in total.into_iter().enumerate() {
        let all: u64 = (0..64).map(|n| columns(n)[col]).sum();
        let on: u64 = s.per_cpu().map(|c| c.times.as_array()[col].unwrap()).sum();
        let off: u64 = OFFLINE.iter().map(|n| columns(*n)[col]).sum();
        assert_eq!((aggregate, aggregate - on), (all, off), "column {col}");
    }
    let irqs: u64 = (0..1000).map(|i| i % 13).sum();
    assert_eq!(s.counters.intr_total, Some(12_345 + irqs));
    assert_eq!(
        (s.counters.ctxt, s.counters.procs_running, s.counters.procs_blocked),
        (Some(987_654_321), Some(17), Some(3))
    );
    assert_eq!(s.softirq.unwrap().rcu, Some(945));

    // Through the probe: the buffer grows past its first 4 KiB.
    let dir = Scratch::new("64cpu");
    dir.put("stat", &bytes);
    let mut probe = SysProbe::open(dir.path()).unwrap();
    assert_eq!(probe.read_file(ProcFile::Stat).unwrap(), &bytes[..]);
    let r = probe.read();
    assert_eq!(r.stat.unwrap().per_cpu.len(), 59);
}

#[test]
fn pre_2_5_four_column_stat() {
    let bytes = data("edge/stat-2.4-4col");
    let s = KernelStat::parse(&bytes).unwrap();
    let total = s.total.unwrap();
    assert_eq!((total.user, total.nice, total.system, total.idle, total.columns), (1539, 0, 2346, 113_408, 4));
    assert_eq!([total.iowait, total.irq, total.softirq, total.steal, total.guest, total.guest_nice], [None; 6]);
    assert_eq!(s.per_cpu().map(|c| c.cpu).collect::<Vec<_>>(), [0]);
    assert_eq!(s.counters.intr_total, Some(1_462_898));
    assert_eq!(
        (s.counters.ctxt, s.counters.btime, s.counters.processes),
        (Some(115_315), Some(769_041_601), Some(86_031))
    );
    assert_eq!((s.counters.procs_running, s.counters.procs_blocked, s.softirq), (None, None, None));

    // As a sample: BuildKit's plain floats get 0 for the absent columns, and
    // stepmon.missing says so; procStat is omitted rather than invented.
    let dir = Scratch::new("stat24");
    dir.put("stat", &bytes);
    let mut probe = SysProbe::open(dir.path()).unwrap();
    probe.set_user_hz(HZ);
    let sample = stepmon_sysusage::model::sys_sample(&probe.read(), None);
    let cpu = sample.cpu_stat.unwrap();
    assert_eq!((cpu.user, cpu.idle, cpu.iowait, cpu.steal), (15.39, 1134.08, 0.0, 0.0));
    assert_eq!(sample.proc_stat, None);
    let ext = sample.stepmon.unwrap();
    let absent: Vec<&str> = ext.missing.iter().filter(|m| m.kind == MissingKind::Absent).map(|m| &*m.field).collect();
    assert_eq!(
        absent,
        [
            "cpuStat.iowait",
            "cpuStat.irq",
            "cpuStat.softirq",
            "cpuStat.steal",
            "cpuStat.guest",
            "cpuStat.guest_nice",
            "procStat"
        ]
    );
    let proc_stat = ext.missing.iter().find(|m| m.field == "procStat").unwrap();
    assert!(proc_stat.reason.contains("procs_running"), "{}", proc_stat.reason);
    assert_eq!(ext.procs_blocked, None);
}

#[test]
fn meminfo_with_hardware_corrupted_and_without_mem_available() {
    let bytes = data("edge/meminfo-hwcorrupted-no-available");
    let m = MemInfo::parse(&bytes).unwrap();
    assert_eq!((m.mem_available, m.hardware_corrupted), (None, Some(4)));
    assert_eq!(m.get_bytes("HardwareCorrupted"), Some(4096));
    assert_eq!((m.mem_total, m.percpu, m.anon_huge_pages), (Some(24_684_092), Some(976), Some(0)));
}

#[test]
fn empty_files_are_typed_errors() {
    assert_eq!(KernelStat::parse(b"").unwrap_err().kind, ErrorKind::Empty);
    assert_eq!(MemInfo::parse(b"").unwrap_err().kind, ErrorKind::Empty);
    assert_eq!(LoadAvg::parse(b"").unwrap_err().kind, ErrorKind::Empty);
    // The PSI parser accepts an empty file as "no lines"; the probe reports it.
    assert_eq!(Pressure::parse(b"").unwrap(), Pressure::default());
}

#[test]
fn truncated_stat_is_an_error_or_a_shorter_valid_file() {
    let bytes = data("hybrid-6.18/stat");
    let first_line_end = bytes.iter().position(|&b| b == b'\n').unwrap();
    for cut in 1..bytes.len() {
        let result = KernelStat::parse(&bytes[..cut]);
        if cut < first_line_end {
            // Inside `cpu  991 0 1182 38460 ...`: a lone key or fewer than 4
            // columns is MissingField; once 4 columns are there it is a valid
            // old-style line.
            let columns = bytes[..cut].split(|&b| b == b' ').filter(|f| !f.is_empty()).count() - 1;
            if columns < 4 {
                let e = result.unwrap_err();
                assert_eq!((e.kind, e.line), (ErrorKind::MissingField, 1), "cut {cut}");
            } else {
                assert!(result.is_ok(), "cut {cut}");
            }
        } else if bytes[cut - 1] != b'\n' && bytes[..cut].ends_with(b"pro") {
            // A key cut short, whatever the key.
            assert_eq!(result.unwrap_err().kind, ErrorKind::MissingField, "cut {cut}");
        } else {
            let _ = result; // a cut inside a number is a shorter valid number: undetectable
        }
    }
    assert_eq!(
        KernelStat::parse(b"cpu  991 0 1182 38460 93 0 21 7 0 0\nctxt").unwrap_err().kind,
        ErrorKind::MissingField
    );
    assert_eq!(
        KernelStat::parse(b"cpu  991 0 1182 38460 93 0 21 7 0 0\nsoftirq").unwrap_err().kind,
        ErrorKind::MissingField
    );
}

#[test]
fn truncated_meminfo_is_an_error_unless_the_cut_is_at_a_line_end() {
    let bytes = data("hybrid-6.18/meminfo");
    let mut errors = 0;
    for cut in 1..bytes.len() {
        let prefix = &bytes[..cut];
        let line_start = prefix.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        let line_end = line_start + bytes[line_start..].iter().position(|&b| b == b'\n').unwrap();
        let full_line = &bytes[line_start..line_end];
        let result = MemInfo::parse(prefix);
        if cut == line_start || cut == line_end {
            assert!(result.is_ok(), "cut {cut} at a line boundary");
        } else if full_line.ends_with(b" kB") {
            // Every cut inside a size line loses at least its unit.
            let e = result.unwrap_err();
            assert_eq!(e.line as usize, bytes[..line_start].iter().filter(|&&b| b == b'\n').count() + 1, "cut {cut}");
            errors += 1;
        }
    }
    assert!(errors > 1000, "{errors}");
}

#[test]
fn probe_reports_broken_files_and_keeps_the_rest() {
    let dir = Scratch::new("broken");
    dir.put("stat", &data("hybrid-6.18/stat"))
        .put("meminfo", b"MemTotal:       2468")
        .put("loadavg", b"")
        .put("pressure/cpu", b"")
        .put("pressure/memory", b"some avg10=0.00 avg60=0.00 avg300=0.00 total=x\n");
    std::fs::create_dir(dir.path().join("pressure/io")).unwrap();
    for strategy in [ReadStrategy::HeldPread, ReadStrategy::OpenReadClose] {
        let r = SysProbe::open_with(dir.path(), strategy).unwrap().read();
        assert!(r.stat.is_some());
        assert!(r.meminfo.is_none() && r.loadavg.is_none() && r.cpu_pressure.is_none());
        assert!(r.memory_pressure.is_none() && r.io_pressure.is_none() && r.irq_pressure.is_none());
        let got: Vec<(&str, MissingKind)> = r.missing.iter().map(|m| (&*m.field, m.kind)).collect();
        assert_eq!(
            got,
            [
                ("meminfo", MissingKind::Parse),
                ("loadavg", MissingKind::Parse),
                ("cpuPressure", MissingKind::Parse),
                ("memoryPressure", MissingKind::Parse),
                ("ioPressure", MissingKind::Io),
                ("irqPressure", MissingKind::NotFound),
            ],
            "{strategy:?}"
        );
        assert_eq!(&*r.missing[0].reason, "missing field at line 1, byte 20");
        assert_eq!(&*r.missing[1].reason, "empty input at line 1, byte 0");
        assert_eq!(&*r.missing[3].reason, "not a decimal number at line 1, byte 45");
        assert!(r.missing[4].reason.contains("directory"), "{}", r.missing[4].reason);
    }
}

#[test]
fn held_descriptors_see_rewrites_but_not_replacements() {
    let dir = Scratch::new("replace");
    dir.put("loadavg", b"0.00 0.00 0.00 1/1 1\n");
    let mut held = SysProbe::open_with(dir.path(), ReadStrategy::HeldPread).unwrap();
    let mut fresh = SysProbe::open_with(dir.path(), ReadStrategy::OpenReadClose).unwrap();
    assert_eq!(held.read().loadavg.unwrap().last_pid, 1);
    // Rewritten in place (same inode): both see it.
    dir.put("loadavg", b"0.00 0.00 0.00 1/1 2\n");
    assert_eq!(held.read().loadavg.unwrap().last_pid, 2);
    assert_eq!(fresh.read().loadavg.unwrap().last_pid, 2);
    // Replaced by rename (new inode): only open/read/close sees the new file.
    std::fs::write(dir.path().join("next"), b"0.00 0.00 0.00 1/1 3\n").unwrap();
    std::fs::rename(dir.path().join("next"), dir.path().join("loadavg")).unwrap();
    assert_eq!(held.read().loadavg.unwrap().last_pid, 2);
    assert_eq!(fresh.read().loadavg.unwrap().last_pid, 3);
    // A file that appears later is picked up by the held probe's retry.
    assert!(held.read().meminfo.is_none());
    dir.put("meminfo", b"MemTotal: 1 kB\n");
    assert_eq!(held.read().meminfo.unwrap().mem_total, Some(1));
}
