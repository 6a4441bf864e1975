//! The general path: any line of `/proc/stat`, split into fields, every
//! value and every error decided (what the fast path falls back to).

use stepmon_cgroupfs_parse::lines::Line;
use stepmon_cgroupfs_parse::number::parse_u32;
use stepmon_cgroupfs_parse::{ErrorKind, Result};

use super::super::columns::Columns;
use super::super::cpu::{CpuTimes, PerCpuTimes};
use super::Softirqs;

/// What a `/proc/stat` line is, from its first field.
pub(super) enum Key {
    Aggregate,
    Cpu(u32),
    Intr,
    Counter(Counter),
    Softirq,
    Unknown,
}

/// The single-number lines. A plain enum, matched where the value is
/// stored ([`store`]), rather than a function pointer to the field: no
/// indirect call, and the compiler sees every store.
#[derive(Clone, Copy)]
pub(super) enum Counter {
    Ctxt,
    Btime,
    Processes,
    ProcsRunning,
    ProcsBlocked,
}

pub(super) fn classify(key: &[u8]) -> core::result::Result<Key, ErrorKind> {
    Ok(match key {
        b"cpu" => Key::Aggregate,
        b"intr" => Key::Intr,
        b"ctxt" => Key::Counter(Counter::Ctxt),
        b"btime" => Key::Counter(Counter::Btime),
        b"processes" => Key::Counter(Counter::Processes),
        b"procs_running" => Key::Counter(Counter::ProcsRunning),
        b"procs_blocked" => Key::Counter(Counter::ProcsBlocked),
        b"softirq" => Key::Softirq,
        [b'c', b'p', b'u', digits @ ..] if digits.iter().all(u8::is_ascii_digit) => Key::Cpu(parse_u32(digits)?),
        _ => Key::Unknown,
    })
}

/// What one line holds (general path only: the fast path writes each
/// value straight into the output instead of moving this large enum).
pub(super) enum Item {
    Aggregate(CpuTimes),
    Cpu(PerCpuTimes),
    Intr(u64),
    Counter(Counter, u64),
    Softirq(Softirqs),
    Unknown,
}

/// The first field of `line`, its classification, and a cursor after it.
#[inline]
pub(super) fn split_key<'a>(line: &Line<'a>) -> Result<(Key, Columns<'a>)> {
    let mut cols = Columns::at(*line, 0);
    let Some((at, key)) = cols.next_field() else {
        return Err(line.error(ErrorKind::EmptyLine));
    };
    let kind = classify(key).map_err(|kind| line.error_at(kind, at))?;
    Ok((kind, cols))
}

pub(super) fn parse_softirq(mut cols: Columns<'_>, key_end: usize) -> Result<Softirqs> {
    let total = cols.require_u64(key_end)?;
    let mut types = [None; 10];
    for slot in &mut types {
        let Some(value) = cols.next_u64()? else { break };
        *slot = Some(value);
    }
    Ok(softirqs(total, types))
}

#[inline]
pub(super) fn softirqs(total: u64, types: [Option<u64>; 10]) -> Softirqs {
    let [hi, timer, net_tx, net_rx, block, irq_poll, tasklet, sched, hrtimer, rcu] = types;
    Softirqs { total, hi, timer, net_tx, net_rx, block, irq_poll, tasklet, sched, hrtimer, rcu }
}

/// The general path: one line of any shape, split into fields; decides
/// every value and every error.
#[inline(never)]
pub(super) fn general_line(line: &Line<'_>) -> Result<Item> {
    let (key, mut cols) = split_key(line)?;
    let key_end = cols.position();
    Ok(match key {
        Key::Cpu(cpu) => Item::Cpu(PerCpuTimes { cpu, times: CpuTimes::parse_rest(cols, key_end)? }),
        Key::Aggregate => Item::Aggregate(CpuTimes::parse_rest(cols, key_end)?),
        // Only the total: the per-IRQ columns are never looked at.
        Key::Intr => Item::Intr(cols.require_u64(key_end)?),
        Key::Counter(counter) => {
            let value = cols.require_u64(key_end)?;
            if let Some((at, _)) = cols.next_field() {
                return Err(line.error_at(ErrorKind::TrailingData, at));
            }
            Item::Counter(counter, value)
        }
        Key::Softirq => Item::Softirq(parse_softirq(cols, key_end)?),
        // Every /proc/stat line, old or new, is a key and at least one
        // value: a lone token is a read cut short (`cp`, `ctx`).
        Key::Unknown if cols.next_field().is_none() => return Err(line.error_at(ErrorKind::MissingField, key_end)),
        Key::Unknown => Item::Unknown,
    })
}
