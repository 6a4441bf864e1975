//! Generators of kernel-formatted /proc text with the values they encode,
//! shared by the property and differential tests.
#![allow(dead_code)] // each test binary uses a different part

use std::fmt::Write as _;

use proptest::collection::{btree_set, vec};
use proptest::option;
use proptest::prelude::*;

/// A generated `/proc/stat` and what it says.
#[derive(Debug, Clone)]
pub(crate) struct StatText {
    pub(crate) text: String,
    /// Aggregate line columns (4..=12 numbers).
    pub(crate) total: Vec<u64>,
    /// `(cpu number, columns)` in file order.
    pub(crate) cpus: Vec<(u32, Vec<u64>)>,
    pub(crate) intr_total: Option<u64>,
    pub(crate) ctxt: Option<u64>,
    pub(crate) btime: Option<u64>,
    pub(crate) processes: Option<u64>,
    pub(crate) procs_running: Option<u64>,
    pub(crate) procs_blocked: Option<u64>,
    pub(crate) softirq: Option<Vec<u64>>,
}

fn line(out: &mut String, key: &str, values: &[u64]) {
    out.push_str(key);
    for v in values {
        write!(out, " {v}").unwrap();
    }
    out.push('\n');
}

/// `/proc/stat` as the kernel prints it: `cpu` + two spaces, `cpuN` lines
/// with gaps, an `intr` line, the counters, `softirq`.
pub(crate) fn stat_text() -> impl Strategy<Value = StatText> {
    (4usize..=12)
        .prop_flat_map(|n| {
            (
                vec(any::<u64>(), n),
                btree_set(0u32..4096, 0..8).prop_flat_map(move |ids| {
                    let ids: Vec<u32> = ids.into_iter().collect();
                    let len = ids.len();
                    (Just(ids), vec(vec(any::<u64>(), n), len))
                }),
                option::of((any::<u64>(), vec(any::<u64>(), 0..40))),
                (
                    option::weighted(0.9, any::<u64>()),
                    option::weighted(0.9, any::<u64>()),
                    option::weighted(0.9, any::<u64>()),
                ),
                (
                    option::of(prop_oneof![0u64..10_000, any::<u64>()]),
                    option::of(prop_oneof![0u64..10_000, any::<u64>()]),
                ),
                option::of(vec(any::<u64>(), 1..13)),
            )
        })
        .prop_map(|(total, (ids, cols), intr, (ctxt, btime, processes), (procs_running, procs_blocked), softirq)| {
            let mut text = String::new();
            let cpus: Vec<(u32, Vec<u64>)> = ids.into_iter().zip(cols).collect();
            text.push_str("cpu ");
            line(&mut text, "", &total);
            for (id, c) in &cpus {
                line(&mut text, &format!("cpu{id}"), c);
            }
            if let Some((t, irqs)) = &intr {
                line(&mut text, "intr", &[&[*t][..], irqs].concat());
            }
            for (key, v) in [("ctxt", ctxt), ("btime", btime), ("processes", processes)] {
                if let Some(v) = v {
                    line(&mut text, key, &[v]);
                }
            }
            for (key, v) in [("procs_running", procs_running), ("procs_blocked", procs_blocked)] {
                if let Some(v) = v {
                    line(&mut text, key, &[v]);
                }
            }
            if let Some(s) = &softirq {
                line(&mut text, "softirq", s);
            }
            StatText {
                text,
                total,
                cpus,
                intr_total: intr.map(|(t, _)| t),
                ctxt,
                btime,
                processes,
                procs_running,
                procs_blocked,
                softirq,
            }
        })
}

/// The ten known columns of a generated line, `None` past its end.
pub(crate) fn ten(columns: &[u64]) -> [Option<u64>; 10] {
    std::array::from_fn(|i| columns.get(i).copied())
}

/// A generated `/proc/meminfo`: `(key, value, has kB unit)` in order.
#[derive(Debug, Clone)]
pub(crate) struct MemText {
    pub(crate) text: String,
    pub(crate) entries: Vec<(String, u64, bool)>,
}

/// Keys procfs-core's `Meminfo` requires (it fails without them).
pub(crate) const PROCFS_REQUIRED: [&str; 17] = [
    "MemTotal",
    "MemFree",
    "Buffers",
    "Cached",
    "SwapCached",
    "Active",
    "Inactive",
    "SwapTotal",
    "SwapFree",
    "Dirty",
    "Writeback",
    "Mapped",
    "Slab",
    "Committed_AS",
    "VmallocTotal",
    "VmallocUsed",
    "VmallocChunk",
];

/// `/proc/meminfo` with a random subset of the known keys (with their
/// units), optionally unknown keys, values below 2^50 kB (procfs-core
/// multiplies by 1024 unchecked), padded like the kernel pads.
pub(crate) fn meminfo_text(with_unknown: bool) -> impl Strategy<Value = MemText> {
    let known = stepmon_sysusage::parse::MemInfo::KEYS;
    let picks = vec((0..known.len(), 0u64..(1 << 50)), 1..80);
    let unknown = if with_unknown {
        vec(("[A-Z][A-Za-z0-9_()]{0,20}", 0u64..(1 << 50), any::<bool>()), 0..5).boxed()
    } else {
        Just(vec![]).boxed()
    };
    (picks, unknown).prop_map(move |(picks, unknown)| {
        let mut entries = Vec::new();
        let mut text = String::new();
        for (i, value) in picks {
            let (key, unit) = known[i];
            let kb = unit == stepmon_sysusage::parse::MemUnit::Kb;
            entries.push((key.to_string(), value, kb));
        }
        for (key, value, kb) in unknown {
            if stepmon_sysusage::parse::MemInfo::unit_of(&key).is_none() {
                entries.push((key, value, kb));
            }
        }
        for (i, (key, value, kb)) in entries.iter().enumerate() {
            let pad = 1 + (i * 7 + key.len()) % 12;
            writeln!(text, "{key}:{:pad$}{value}{}", "", if *kb { " kB" } else { "" }).unwrap();
        }
        MemText { text, entries }
    })
}
