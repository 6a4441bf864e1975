//! `/proc/stat` (crate `stepmon-sysusage`): `KernelStat::{parse, cpu_count,
//! per_cpu, cpu}` and the public `total`, `counters` and `softirq` fields,
//! checked against an independent line-by-line model (proc(5) and the
//! parser's documented rules) built on `str::parse`, errors included.
//! `per_cpu()` is consumed to the end with its `ExactSizeIterator` length
//! checked at every step; `cpu(n)` must agree with the iteration; every CPU
//! line's `CpuTimes` goes through `check_cpu_times`, and its columns alone
//! through `CpuTimes::parse_columns` must give the same times.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::{ErrorKind, ParseError};
use stepmon_fuzz::{CpuColumns, check_cpu_times, check_error, model_cpu_columns, model_fields, model_lines, model_u64};
use stepmon_sysusage::parse::{CpuTimes, KernelStat, Softirqs, StatCounters};

/// The single-number lines, in `StatCounters` field order (after `intr`).
const COUNTERS: [&[u8]; 5] = [b"ctxt", b"btime", b"processes", b"procs_running", b"procs_blocked"];

#[derive(Debug, Default)]
struct Model<'a> {
    total: Option<CpuColumns>,
    /// `intr` total, then `COUNTERS`.
    counters: [Option<u64>; 6],
    /// `softirq` total, then the ten types.
    softirq: Option<(u64, [Option<u64>; 10])>,
    /// `cpuN` lines in file order: number, columns, the bytes after the key.
    cpus: Vec<(u32, CpuColumns, &'a [u8])>,
}

fn model(input: &[u8]) -> Result<Model<'_>, ParseError> {
    if input.is_empty() {
        return Err(ParseError::new(ErrorKind::Empty, 1, 0));
    }
    let mut m = Model::default();
    for (index, (start, bytes)) in model_lines(input).into_iter().enumerate() {
        let line = index + 1;
        let err = |kind, at: usize| ParseError::new(kind, line, start + at);
        let fields = model_fields(bytes);
        let Some((&(key_at, key), rest)) = fields.split_first() else {
            return Err(err(ErrorKind::EmptyLine, 0));
        };
        let key_end = key_at + key.len();
        let number = |i: usize| -> Result<u64, ParseError> {
            let &(at, field) = rest.get(i).ok_or_else(|| err(ErrorKind::MissingField, key_end))?;
            model_u64(field).map_err(|kind| err(kind, at))
        };
        if key == b"cpu" {
            m.total = Some(model_cpu_columns(rest, line, start, key_end)?);
        } else if key == b"intr" {
            // Only the total; the per-IRQ columns are never looked at.
            m.counters[0] = Some(number(0)?);
        } else if let Some(slot) = COUNTERS.iter().position(|c| *c == key) {
            let value = number(0)?;
            if let Some(&(at, _)) = rest.get(1) {
                return Err(err(ErrorKind::TrailingData, at));
            }
            m.counters[slot + 1] = Some(value);
        } else if key == b"softirq" {
            let total = number(0)?;
            let mut types = [None; 10];
            for (i, slot) in types.iter_mut().enumerate() {
                if i + 1 < rest.len() {
                    *slot = Some(number(i + 1)?);
                }
            }
            m.softirq = Some((total, types));
        } else if let Some(digits) = key.strip_prefix(b"cpu").filter(|d| d.iter().all(u8::is_ascii_digit)) {
            let cpu = model_u64(digits)
                .and_then(|v| u32::try_from(v).map_err(|_| ErrorKind::Overflow))
                .map_err(|kind| err(kind, key_at))?;
            let columns = model_cpu_columns(rest, line, start, key_end)?;
            m.cpus.push((cpu, columns, &bytes[key_end..]));
        } else if rest.is_empty() {
            // A lone unknown token is a read cut short.
            return Err(err(ErrorKind::MissingField, key_end));
        }
    }
    Ok(m)
}

fn counters_of(c: &StatCounters) -> [Option<u64>; 6] {
    [c.intr_total, c.ctxt, c.btime, c.processes, c.procs_running, c.procs_blocked]
}

fn softirq_of(s: &Softirqs) -> (u64, [Option<u64>; 10]) {
    (s.total, [s.hi, s.timer, s.net_tx, s.net_rx, s.block, s.irq_poll, s.tasklet, s.sched, s.hrtimer, s.rcu])
}

fuzz_target!(|data: &[u8]| {
    match (KernelStat::parse(data), model(data)) {
        (Ok(stat), Ok(m)) => {
            assert_eq!(stat.total.is_some(), m.total.is_some());
            if let (Some(t), Some(expected)) = (stat.total, m.total) {
                check_cpu_times(&t, &expected);
            }
            assert_eq!(counters_of(&stat.counters), m.counters);
            assert_eq!(stat.softirq.as_ref().map(softirq_of), m.softirq);

            // per_cpu(): exactly cpu_count() items, the model's CPU lines in
            // file order, with an exact length at every step.
            assert_eq!(stat.cpu_count(), m.cpus.len(), "cpu_count() differs from the number of cpuN lines");
            let mut iter = stat.per_cpu();
            let mut got = Vec::new();
            loop {
                let left = iter.len();
                assert_eq!(iter.size_hint(), (left, Some(left)));
                match iter.next() {
                    Some(c) => {
                        assert!(left > 0, "per_cpu() yielded more than its length");
                        got.push(c);
                    }
                    None => {
                        assert_eq!(left, 0, "per_cpu() ended early");
                        break;
                    }
                }
            }
            assert!(iter.next().is_none(), "per_cpu() is fused");
            assert_eq!(got.len(), stat.cpu_count(), "per_cpu().count() != cpu_count()");
            for (c, (cpu, columns, after_key)) in got.iter().zip(&m.cpus) {
                assert_eq!(c.cpu, *cpu);
                check_cpu_times(&c.times, columns);
                // The columns alone parse to the same times.
                assert_eq!(CpuTimes::parse_columns(after_key), Ok(c.times));
            }
            // cpu(n) is the first line of CPU n, None for a CPU without one.
            for c in &got {
                let first = got.iter().find(|x| x.cpu == c.cpu).map(|x| x.times);
                assert_eq!(stat.cpu(c.cpu), first);
            }
            let max = got.iter().map(|c| c.cpu).max();
            for absent in [0, 1, u32::MAX, max.map_or(0, |n| n.saturating_add(1))] {
                if !got.iter().any(|c| c.cpu == absent) {
                    assert_eq!(stat.cpu(absent), None, "cpu({absent}) without a line");
                }
            }
            // Parsing is deterministic.
            assert_eq!(KernelStat::parse(data), Ok(stat));
        }
        (Err(err), Err(expected)) => {
            assert_eq!(err, expected, "error differs from the model");
            check_error(data, &err);
        }
        (got, expected) => panic!("KernelStat::parse gave {got:?}, model {expected:?}"),
    }
});
