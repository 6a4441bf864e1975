//! `/proc/meminfo` (crate `stepmon-sysusage`): `MemInfo::{parse, get,
//! get_bytes, unit_of, iter, KEYS}`, every public field, and
//! `MemInfoEntries` (consumed to the end, then checked to stay ended) with
//! `MemInfoEntry::{kb, bytes}`, all checked against an independent
//! line model (proc(5) meminfo: `Key: value [kB]`) and a hand-written
//! table of the known keys, their units and their fields.
//! On success every entry is `Ok` and the lookups agree with the entries.
#![no_main]

use std::collections::BTreeMap;
use std::sync::Once;

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::{ErrorKind, ParseError};
use stepmon_fuzz::{check_error, model_fields, model_lines, model_u64};
use stepmon_sysusage::parse::{MemInfo, MemInfoEntries, MemUnit};

type Field = fn(&MemInfo) -> Option<u64>;

/// Every key `MemInfo` knows, its unit and its field, in print order
/// (written out by hand so a key wired to the wrong field is caught).
const TABLE: &[(&str, MemUnit, Field)] = &[
    ("MemTotal", MemUnit::Kb, |m| m.mem_total),
    ("MemFree", MemUnit::Kb, |m| m.mem_free),
    ("MemAvailable", MemUnit::Kb, |m| m.mem_available),
    ("Buffers", MemUnit::Kb, |m| m.buffers),
    ("Cached", MemUnit::Kb, |m| m.cached),
    ("SwapCached", MemUnit::Kb, |m| m.swap_cached),
    ("Active", MemUnit::Kb, |m| m.active),
    ("Inactive", MemUnit::Kb, |m| m.inactive),
    ("Active(anon)", MemUnit::Kb, |m| m.active_anon),
    ("Inactive(anon)", MemUnit::Kb, |m| m.inactive_anon),
    ("Active(file)", MemUnit::Kb, |m| m.active_file),
    ("Inactive(file)", MemUnit::Kb, |m| m.inactive_file),
    ("Unevictable", MemUnit::Kb, |m| m.unevictable),
    ("Mlocked", MemUnit::Kb, |m| m.mlocked),
    ("HighTotal", MemUnit::Kb, |m| m.high_total),
    ("HighFree", MemUnit::Kb, |m| m.high_free),
    ("LowTotal", MemUnit::Kb, |m| m.low_total),
    ("LowFree", MemUnit::Kb, |m| m.low_free),
    ("MmapCopy", MemUnit::Kb, |m| m.mmap_copy),
    ("SwapTotal", MemUnit::Kb, |m| m.swap_total),
    ("SwapFree", MemUnit::Kb, |m| m.swap_free),
    ("Zswap", MemUnit::Kb, |m| m.zswap),
    ("Zswapped", MemUnit::Kb, |m| m.zswapped),
    ("Dirty", MemUnit::Kb, |m| m.dirty),
    ("Writeback", MemUnit::Kb, |m| m.writeback),
    ("AnonPages", MemUnit::Kb, |m| m.anon_pages),
    ("Mapped", MemUnit::Kb, |m| m.mapped),
    ("Shmem", MemUnit::Kb, |m| m.shmem),
    ("KReclaimable", MemUnit::Kb, |m| m.k_reclaimable),
    ("Slab", MemUnit::Kb, |m| m.slab),
    ("SReclaimable", MemUnit::Kb, |m| m.s_reclaimable),
    ("SUnreclaim", MemUnit::Kb, |m| m.s_unreclaim),
    ("KernelStack", MemUnit::Kb, |m| m.kernel_stack),
    ("ShadowCallStack", MemUnit::Kb, |m| m.shadow_call_stack),
    ("PageTables", MemUnit::Kb, |m| m.page_tables),
    ("SecPageTables", MemUnit::Kb, |m| m.sec_page_tables),
    ("Quicklists", MemUnit::Kb, |m| m.quicklists),
    ("NFS_Unstable", MemUnit::Kb, |m| m.nfs_unstable),
    ("Bounce", MemUnit::Kb, |m| m.bounce),
    ("WritebackTmp", MemUnit::Kb, |m| m.writeback_tmp),
    ("CommitLimit", MemUnit::Kb, |m| m.commit_limit),
    ("Committed_AS", MemUnit::Kb, |m| m.committed_as),
    ("VmallocTotal", MemUnit::Kb, |m| m.vmalloc_total),
    ("VmallocUsed", MemUnit::Kb, |m| m.vmalloc_used),
    ("VmallocChunk", MemUnit::Kb, |m| m.vmalloc_chunk),
    ("Percpu", MemUnit::Kb, |m| m.percpu),
    ("EarlyMemtestBad", MemUnit::Kb, |m| m.early_memtest_bad),
    ("HardwareCorrupted", MemUnit::Kb, |m| m.hardware_corrupted),
    ("AnonHugePages", MemUnit::Kb, |m| m.anon_huge_pages),
    ("ShmemHugePages", MemUnit::Kb, |m| m.shmem_huge_pages),
    ("ShmemPmdMapped", MemUnit::Kb, |m| m.shmem_pmd_mapped),
    ("FileHugePages", MemUnit::Kb, |m| m.file_huge_pages),
    ("FilePmdMapped", MemUnit::Kb, |m| m.file_pmd_mapped),
    ("CmaTotal", MemUnit::Kb, |m| m.cma_total),
    ("CmaFree", MemUnit::Kb, |m| m.cma_free),
    ("Unaccepted", MemUnit::Kb, |m| m.unaccepted),
    ("Balloon", MemUnit::Kb, |m| m.balloon),
    ("HugePages_Total", MemUnit::Count, |m| m.huge_pages_total),
    ("HugePages_Free", MemUnit::Count, |m| m.huge_pages_free),
    ("HugePages_Rsvd", MemUnit::Count, |m| m.huge_pages_rsvd),
    ("HugePages_Surp", MemUnit::Count, |m| m.huge_pages_surp),
    ("Hugepagesize", MemUnit::Kb, |m| m.hugepagesize),
    ("Hugetlb", MemUnit::Kb, |m| m.hugetlb),
    ("DirectMap4k", MemUnit::Kb, |m| m.direct_map_4k),
    ("DirectMap2M", MemUnit::Kb, |m| m.direct_map_2m),
    ("DirectMap4M", MemUnit::Kb, |m| m.direct_map_4m),
    ("DirectMap1G", MemUnit::Kb, |m| m.direct_map_1g),
];

/// One line of the model: key, value, unit.
type Entry<'a> = (&'a str, u64, MemUnit);

fn model_entry(line: usize, start: usize, bytes: &[u8]) -> Result<Entry<'_>, ParseError> {
    let err = |kind, at: usize| ParseError::new(kind, line, start + at);
    if bytes.iter().all(|&b| b == b' ' || b == b'\t') {
        return Err(err(ErrorKind::EmptyLine, 0));
    }
    let colon = bytes.iter().position(|&b| b == b':').ok_or_else(|| err(ErrorKind::MissingSeparator, 0))?;
    let key = &bytes[..colon];
    if key.is_empty() || !key.iter().all(u8::is_ascii_graphic) {
        return Err(err(ErrorKind::InvalidKey, 0));
    }
    let key = std::str::from_utf8(key).expect("printable ASCII");
    let rest_at = colon + 1;
    let fields = model_fields(&bytes[rest_at..]);
    let &(at, value) = fields.first().ok_or_else(|| err(ErrorKind::MissingField, rest_at))?;
    let value = model_u64(value).map_err(|kind| err(kind, rest_at + at))?;
    let unit = match fields.get(1) {
        None => MemUnit::Count,
        Some((_, b"kB")) => MemUnit::Kb,
        Some(&(at, _)) => return Err(err(ErrorKind::InvalidField, rest_at + at)),
    };
    if let Some(&(at, _)) = fields.get(2) {
        return Err(err(ErrorKind::TrailingData, rest_at + at));
    }
    Ok((key, value, unit))
}

/// The entries as `MemInfoEntries` must yield them: one per line up to and
/// including the first error.
fn model_entries(input: &[u8]) -> Vec<Result<(Entry<'_>, usize), ParseError>> {
    let mut out = Vec::new();
    for (index, (start, bytes)) in model_lines(input).into_iter().enumerate() {
        let entry = model_entry(index + 1, start, bytes).map(|e| (e, index + 1));
        let stop = entry.is_err();
        out.push(entry);
        if stop {
            break;
        }
    }
    out
}

/// `MemInfo::parse` as a model: known keys must carry their unit (a size
/// without ` kB` is a read cut short), the last of duplicates wins.
fn model_meminfo(input: &[u8]) -> Result<BTreeMap<&'static str, u64>, ParseError> {
    if input.is_empty() {
        return Err(ParseError::new(ErrorKind::Empty, 1, 0));
    }
    let lines = model_lines(input);
    let mut values = BTreeMap::new();
    for entry in model_entries(input) {
        let ((key, value, unit), line) = entry?;
        if let Some(&(known, expected, _)) = TABLE.iter().find(|(k, _, _)| *k == key) {
            if unit != expected {
                let (start, bytes) = lines[line - 1];
                let kind = if expected == MemUnit::Kb { ErrorKind::MissingField } else { ErrorKind::InvalidField };
                return Err(ParseError::new(kind, line, start + bytes.len()));
            }
            values.insert(known, value);
        }
    }
    Ok(values)
}

fn check_static_tables() {
    let keys: Vec<_> = TABLE.iter().map(|&(k, u, _)| (k, u)).collect();
    assert_eq!(MemInfo::KEYS, &keys[..], "MemInfo::KEYS differs from the table");
    for (i, (key, unit, _)) in TABLE.iter().enumerate() {
        assert!(TABLE[..i].iter().all(|(k, _, _)| k != key), "duplicate key {key}");
        assert_eq!(MemInfo::unit_of(key), Some(*unit));
    }
}

fuzz_target!(|data: &[u8]| {
    static TABLES: Once = Once::new();
    TABLES.call_once(check_static_tables);

    // MemInfoEntries, consumed to the end.
    let mut entries = MemInfoEntries::new(data);
    let got: Vec<_> = entries.by_ref().collect();
    assert!(entries.next().is_none() && entries.next().is_none(), "MemInfoEntries is fused");
    let expected = model_entries(data);
    assert_eq!(got.len(), expected.len(), "MemInfoEntries yielded {got:?}, model {expected:?}");
    for (entry, model) in got.iter().zip(&expected) {
        match (entry, model) {
            (Ok(e), Ok(((key, value, unit), line))) => {
                assert_eq!((e.key, e.value, e.unit, e.line), (*key, *value, *unit, *line));
                assert_eq!(e.kb(), (e.unit == MemUnit::Kb).then_some(e.value));
                assert_eq!(e.bytes(), e.kb().and_then(|kb| kb.checked_mul(1024)));
            }
            (Err(err), Err(model_err)) => {
                assert_eq!(err, model_err);
                check_error(data, err);
            }
            (e, m) => panic!("MemInfoEntries gave {e:?}, model {m:?}"),
        }
    }

    match (MemInfo::parse(data), model_meminfo(data)) {
        (Ok(m), Ok(values)) => {
            assert!(got.iter().all(Result::is_ok), "MemInfo parsed but an entry failed: {got:?}");
            for &(key, unit, field) in TABLE {
                let value = values.get(key).copied();
                assert_eq!(field(&m), value, "field of {key}");
                assert_eq!(m.get(key), value, "get({key})");
                let bytes = match unit {
                    MemUnit::Kb => value.and_then(|kb| kb.checked_mul(1024)),
                    MemUnit::Count => None,
                };
                assert_eq!(m.get_bytes(key), bytes, "get_bytes({key})");
            }
            let listed: Vec<_> = m.iter().collect();
            let table: Vec<_> = TABLE.iter().map(|&(k, u, f)| (k, u, f(&m))).collect();
            assert_eq!(listed, table, "iter() differs from the table");
            // The lookups agree with the entries: the last entry of a known
            // key is its value; unknown keys are ignored everywhere.
            for e in got.iter().flatten() {
                match MemInfo::unit_of(e.key) {
                    Some(unit) => {
                        assert_eq!(unit, e.unit);
                        let last = got.iter().flatten().rfind(|x| x.key == e.key).expect("e itself");
                        assert_eq!(m.get(e.key), Some(last.value));
                        assert_eq!(m.get_bytes(e.key), last.bytes());
                    }
                    None => {
                        assert_eq!(m.get(e.key), None);
                        assert_eq!(m.get_bytes(e.key), None);
                    }
                }
            }
            for unknown in ["", "memtotal", "MemTotal:", "MemTotal ", "no such key"] {
                assert_eq!((m.get(unknown), m.get_bytes(unknown), MemInfo::unit_of(unknown)), (None, None, None));
            }
            assert_eq!(MemInfo::parse(data), Ok(m));
        }
        (Err(err), Err(model_err)) => {
            assert_eq!(err, model_err, "error differs from the model");
            check_error(data, &err);
            // A bad line is also the entries' error. Otherwise it is a known
            // key with the wrong unit (not the entries' business) or an empty
            // file, and every entry up to that line parsed.
            if got.iter().find_map(|e| e.err()) != Some(err) {
                assert!(matches!(err.kind, ErrorKind::Empty | ErrorKind::MissingField | ErrorKind::InvalidField));
                assert!(got.iter().take(err.line as usize).all(Result::is_ok), "{got:?} vs {err:?}");
            }
        }
        (got, expected) => panic!("MemInfo::parse gave {got:?}, model {expected:?}"),
    }
});
