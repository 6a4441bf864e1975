//! Property tests: kernel-formatted text round-trips through the parsers,
//! no input panics them, and the JSON model round-trips through serde.

mod common;

use proptest::collection::vec;
use proptest::prelude::*;
use stepmon_model::round_millis;
use stepmon_model::system::{PressureJson, SysCPUStat, SysMemoryStat};
use stepmon_sysusage::parse::{
    CmdLine, CpuTimes, Hundredths, KernelStat, LoadAvg, MemInfo, MemInfoEntries, MemUnit, Pressure, PressureLine,
};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

fn run_all_parsers(input: &[u8]) {
    if let Ok(s) = KernelStat::parse(input) {
        assert_eq!(s.per_cpu().count(), s.cpu_count());
    }
    let _ = MemInfo::parse(input);
    let _ = MemInfoEntries::new(input).count();
    let _ = LoadAvg::parse(input);
    let _ = Pressure::parse(input);
    let _ = CpuTimes::parse_columns(input);
    let line = CmdLine::new(input);
    assert_eq!(line.args().count(), line.len());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn stat_round_trip(s in common::stat_text()) {
        let parsed = KernelStat::parse(s.text.as_bytes()).unwrap();
        let total = parsed.total.unwrap();
        prop_assert_eq!(total.as_array(), common::ten(&s.total));
        prop_assert_eq!(total.columns, s.total.len());
        let cpus: Vec<(u32, [Option<u64>; 10])> = parsed.per_cpu().map(|c| (c.cpu, c.times.as_array())).collect();
        let expected: Vec<(u32, [Option<u64>; 10])> = s.cpus.iter().map(|(id, c)| (*id, common::ten(c))).collect();
        prop_assert_eq!(cpus, expected);
        let c = parsed.counters;
        prop_assert_eq!((c.intr_total, c.ctxt, c.btime, c.processes), (s.intr_total, s.ctxt, s.btime, s.processes));
        prop_assert_eq!((c.procs_running, c.procs_blocked), (s.procs_running, s.procs_blocked));
        match (parsed.softirq, &s.softirq) {
            (None, None) => {}
            (Some(soft), Some(v)) => {
                prop_assert_eq!(soft.total, v[0]);
                let types = [soft.hi, soft.timer, soft.net_tx, soft.net_rx, soft.block, soft.irq_poll, soft.tasklet, soft.sched, soft.hrtimer, soft.rcu];
                prop_assert_eq!(types, common::ten(&v[1..]));
            }
            other => prop_assert!(false, "softirq {:?}", other),
        }
    }

    #[test]
    fn meminfo_round_trip(m in common::meminfo_text(true)) {
        let entries: Vec<(String, u64, bool)> = MemInfoEntries::new(m.text.as_bytes())
            .map(|e| e.map(|e| (e.key.to_string(), e.value, e.unit == MemUnit::Kb)))
            .collect::<Result<_, _>>()
            .unwrap();
        prop_assert_eq!(&entries, &m.entries);
        let parsed = MemInfo::parse(m.text.as_bytes()).unwrap();
        for (key, unit) in MemInfo::KEYS {
            let last = m.entries.iter().rev().find(|(k, _, _)| k == key).map(|(_, v, _)| *v);
            prop_assert_eq!(parsed.get(key), last, "{}", key);
            let bytes = last.filter(|_| *unit == MemUnit::Kb).map(|v| v * 1024);
            prop_assert_eq!(parsed.get_bytes(key), bytes, "{}", key);
        }
    }

    #[test]
    fn loadavg_round_trip(load in [0u64..100_000, 0u64..100_000, 0u64..100_000], r in any::<u64>(), t in any::<u64>(), p in any::<u64>()) {
        let text = format!("{}.{:02} {}.{:02} {}.{:02} {r}/{t} {p}\n", load[0] / 100, load[0] % 100, load[1] / 100, load[1] % 100, load[2] / 100, load[2] % 100);
        let parsed = LoadAvg::parse(text.as_bytes()).unwrap();
        prop_assert_eq!(parsed, LoadAvg::new(load.map(Hundredths), r, t, p));
    }

    #[test]
    fn arbitrary_bytes_never_panic(input in vec(any::<u8>(), 0..600)) {
        run_all_parsers(&input);
    }

    #[test]
    fn procfs_alphabet_never_panics(input in "[cpu0-9 \t\nintrxkB:()_/.a-z=-]{0,400}") {
        run_all_parsers(input.as_bytes());
    }

    #[test]
    fn mutated_captures_never_panic(file in 0usize..4, flips in vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let name = ["hybrid-6.18/stat", "hybrid-6.18/meminfo", "edge/stat-64cpu-gaps", "hybrid-6.18/loadavg"][file];
        let mut bytes = std::fs::read(format!("{DATA}/{name}")).unwrap();
        for (at, b) in flips {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        run_all_parsers(&bytes);
    }

    #[test]
    fn sys_cpu_stat_json_round_trip(ticks in vec(0u64..(1 << 40), 10), hz in prop_oneof![Just(100u64), Just(250), Just(1000), 1u64..5000]) {
        let line: String = ticks.iter().map(|t| format!("{t} ")).collect();
        let times = CpuTimes::parse_columns(line.as_bytes()).unwrap();
        let stat = stepmon_sysusage::model::cpu_stat(&times, std::num::NonZeroU64::new(hz).unwrap());
        let json = serde_json::to_string(&stat).unwrap();
        let back: SysCPUStat = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(back.as_array(), stat.as_array().map(round_millis), "{}", json);
    }

    #[test]
    fn pressure_and_memory_json_round_trip(
        lines in vec(proptest::option::of(([0u64..20_000, 0u64..20_000, 0u64..20_000], any::<u64>())), 2),
        mem in vec(proptest::option::of(any::<u64>()), 11),
    ) {
        let line = |l: Option<([u64; 3], u64)>| l.map(|(a, t)| PressureLine::new(Hundredths(a[0]), Hundredths(a[1]), Hundredths(a[2]), t));
        let p = stepmon_sysusage::model::pressure(&Pressure::new(line(lines[0]), line(lines[1])));
        let back: PressureJson = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        prop_assert_eq!(back, p);
        let mut m = SysMemoryStat::default();
        [m.total, m.free, m.available, m.buffers, m.cached, m.active, m.inactive, m.swap, m.dirty, m.writeback, m.slab] =
            mem.try_into().unwrap();
        let back: SysMemoryStat = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        prop_assert_eq!(back, m);
    }

    #[test]
    fn cmdline_round_trip(args in vec(vec(1u8..=255, 0..12), 0..10), final_nul in any::<bool>()) {
        // The kernel's layout: each argument followed by a NUL; a rewritten
        // argument area may lack the last one (proc_pid_cmdline(5)).
        let mut file: Vec<u8> = args.iter().flat_map(|a| a.iter().copied().chain([0])).collect();
        let unterminated = !final_nul && args.last().is_some_and(|a| !a.is_empty());
        if unterminated {
            file.pop();
        }
        let line = CmdLine::new(&file);
        prop_assert_eq!(line.args().collect::<Vec<_>>(), args.iter().map(Vec::as_slice).collect::<Vec<_>>());
        prop_assert_eq!(line.argv0(), args.first().map(Vec::as_slice));
        prop_assert_eq!(line.is_empty(), args.is_empty());
    }
}
