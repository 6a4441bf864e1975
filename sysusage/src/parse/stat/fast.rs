//! The fast path: lines as the kernel's `show_stat()` prints them, stored
//! straight into the output without splitting them into fields.

use stepmon_cgroupfs_parse::lines::{Line, split_line};
use stepmon_cgroupfs_parse::scan::terminated_u64;

use super::super::cpu::{CpuTimes, PerCpuTimes};
use super::KernelStat;
use super::general::{Item, general_line, softirqs};

/// What a fast-path line was, for the caller's bookkeeping.
pub(super) enum Fast {
    /// A `cpuN` line, already handed to the closure.
    Cpu,
    /// Any other line, already stored.
    Other,
}

/// The fast path: the line at the start of `input`, as `show_stat()`
/// (`fs/proc/stat.c`) prints it — the key, single spaces, plain numbers,
/// `\n` — stored straight into `out` (a `cpuN` line handed to `each_cpu`),
/// and the input after it; `None` for anything else, including lines it
/// does not know, which the caller then re-reads with [`general_line`].
/// Nothing is stored before the whole line is read, so a line it gives up
/// on leaves `out` as it was.
#[inline(always)]
pub(super) fn fast_line<'i>(
    input: &'i [u8],
    out: &mut KernelStat<'_>,
    each_cpu: &mut impl FnMut(PerCpuTimes),
) -> Option<(Fast, &'i [u8])> {
    match input {
        // `"cpu  "`: two spaces after the aggregate's key.
        [b'c', b'p', b'u', b' ', b' ', rest @ ..] => {
            let (times, next) = fast_cpu_columns(rest)?;
            out.total = Some(times);
            Some((Fast::Other, next))
        }
        [b'c', b'p', b'u', ..] => {
            let (cpu, next) = fast_cpu_line(input)?;
            each_cpu(cpu);
            Some((Fast::Cpu, next))
        }
        [b'i', b'n', b't', b'r', b' ', rest @ ..] => {
            let (total, end, after) = terminated_u64(rest)?;
            // The per-IRQ columns (thousands of bytes on big machines) are
            // skipped with a vector scan (`split_line`), never tokenized.
            let next = match end {
                Some(b' ') => split_line(after).1,
                Some(b'\n') | None => after,
                Some(_) => return None,
            };
            out.counters.intr_total = Some(total);
            Some((Fast::Other, next))
        }
        [b'c', b't', b'x', b't', b' ', rest @ ..] => fast_counter(rest, &mut out.counters.ctxt),
        [b'b', b't', b'i', b'm', b'e', b' ', rest @ ..] => fast_counter(rest, &mut out.counters.btime),
        [b'p', b'r', b'o', b'c', rest @ ..] => match rest {
            [b'e', b's', b's', b'e', b's', b' ', rest @ ..] => fast_counter(rest, &mut out.counters.processes),
            [b's', b'_', b'r', b'u', b'n', b'n', b'i', b'n', b'g', b' ', rest @ ..] => {
                fast_counter(rest, &mut out.counters.procs_running)
            }
            [b's', b'_', b'b', b'l', b'o', b'c', b'k', b'e', b'd', b' ', rest @ ..] => {
                fast_counter(rest, &mut out.counters.procs_blocked)
            }
            _ => None,
        },
        [b's', b'o', b'f', b't', b'i', b'r', b'q', b' ', rest @ ..] => {
            let (values, count, next) = row::<11>(rest)?;
            let [total, types @ ..] = values;
            let mut present = [None; 10];
            for (index, (slot, value)) in present.iter_mut().zip(types).enumerate() {
                *slot = (index < count.wrapping_sub(1)).then_some(value);
            }
            out.softirq = Some(softirqs(total, present));
            Some((Fast::Other, next))
        }
        _ => None,
    }
}

/// Up to `N` numbers separated by single spaces from the start of `input`
/// to the end of the line: the values (zero past the count), how many
/// there were (at least one), and the input after the line. `None` for
/// anything else: more than `N` numbers, a second space, a tab, a trailing
/// blank, a sign.
#[inline(always)]
pub(super) fn row<const N: usize>(mut input: &[u8]) -> Option<([u64; N], usize, &[u8])> {
    let mut values = [0; N];
    let mut count: usize = 0;
    for slot in &mut values {
        let (value, end, after) = terminated_u64(input)?;
        *slot = value;
        count = count.wrapping_add(1);
        match end {
            Some(b' ') => input = after,
            Some(b'\n') | None => return Some((values, count, after)),
            Some(_) => return None,
        }
    }
    None
}

/// A whole `cpuN` line at the start of `input` on the fast path.
#[inline(always)]
pub(super) fn fast_cpu_line(input: &[u8]) -> Option<(PerCpuTimes, &[u8])> {
    let [b'c', b'p', b'u', rest @ ..] = input else { return None };
    let (cpu, end, rest) = terminated_u64(rest)?;
    let (Some(b' '), Ok(cpu)) = (end, u32::try_from(cpu)) else { return None };
    let (times, next) = fast_cpu_columns(rest)?;
    Some((PerCpuTimes { cpu, times }, next))
}

/// ` N\n` after a counter's key, stored into `slot`.
#[inline(always)]
pub(super) fn fast_counter<'i>(input: &'i [u8], slot: &mut Option<u64>) -> Option<(Fast, &'i [u8])> {
    let ([value], _, next) = row::<1>(input)?;
    *slot = Some(value);
    Some((Fast::Other, next))
}

/// The columns after `cpu`/`cpuN` and its spaces: 4 to 10 numbers, then the
/// line end. More columns (vendor kernels) go to the general path, which
/// counts them.
#[inline(always)]
pub(super) fn fast_cpu_columns(input: &[u8]) -> Option<(CpuTimes, &[u8])> {
    let (values, columns, next) = row::<10>(input)?;
    if columns < 4 {
        return None;
    }
    let [user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice] = values;
    let later = |index: usize, value: u64| (columns > index).then_some(value);
    let times = CpuTimes {
        user,
        nice,
        system,
        idle,
        iowait: later(4, iowait),
        irq: later(5, irq),
        softirq: later(6, softirq),
        steal: later(7, steal),
        guest: later(8, guest),
        guest_nice: later(9, guest_nice),
        columns,
    };
    Some((times, next))
}

/// The next `cpuN` line of `input` and the input after it, skipping other
/// lines; for re-reading lines [`KernelStat::parse`] already validated.
#[inline]
pub(super) fn next_cpu(mut input: &[u8]) -> Option<(PerCpuTimes, &[u8])> {
    while !input.is_empty() {
        if let Some(fast) = fast_cpu_line(input) {
            return Some(fast);
        }
        let (bytes, next) = split_line(input);
        // Validated: positions are not needed, and an error cannot happen.
        if let Item::Cpu(cpu) = general_line(&Line { bytes, number: 0, start: 0 }).ok()? {
            return Some((cpu, next));
        }
        input = next;
    }
    None
}
