//! `/proc/stat`:
//! <https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>.

use stepmon_cgroupfs_parse::lines::{Line, split_line};
use stepmon_cgroupfs_parse::number::parse_u32;
use stepmon_cgroupfs_parse::{ErrorKind, ParseError, Result};

use super::columns::Columns;
use super::cpu::{CpuTimes, PerCpuTimes};
use stepmon_cgroupfs_parse::scan::{line_len, terminated_u64};

/// The single-number lines of `/proc/stat`, spec:
/// <https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>.
///
/// Each is `None` when its line is absent (e.g. `procs_running` and
/// `procs_blocked` appeared in 2.5.45).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct StatCounters {
    /// First number of the `intr` line: all interrupts serviced since boot,
    /// including unnumbered architecture-specific ones. The per-IRQ columns
    /// after it (thousands on large machines) are skipped, not parsed.
    pub intr_total: Option<u64>,
    /// `ctxt`: context switches since boot.
    pub ctxt: Option<u64>,
    /// `btime`: boot time, seconds since the Unix epoch (in the reader's time namespace).
    pub btime: Option<u64>,
    /// `processes`: forks since boot.
    pub processes: Option<u64>,
    /// `procs_running`: runnable threads right now.
    pub procs_running: Option<u64>,
    /// `procs_blocked`: threads blocked on I/O right now.
    pub procs_blocked: Option<u64>,
}

/// The `softirq` line: the total, then one count per softirq type, spec:
/// <https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>.
///
/// Types are positional in the kernel's `softirq_to_name` order; a type
/// absent from a shorter line is `None`, extra columns are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct Softirqs {
    /// All softirqs since boot.
    pub total: u64,
    /// `HI`.
    pub hi: Option<u64>,
    /// `TIMER`.
    pub timer: Option<u64>,
    /// `NET_TX`.
    pub net_tx: Option<u64>,
    /// `NET_RX`.
    pub net_rx: Option<u64>,
    /// `BLOCK`.
    pub block: Option<u64>,
    /// `IRQ_POLL` (`BLOCK_IOPOLL` before 4.5).
    pub irq_poll: Option<u64>,
    /// `TASKLET`.
    pub tasklet: Option<u64>,
    /// `SCHED`.
    pub sched: Option<u64>,
    /// `HRTIMER`.
    pub hrtimer: Option<u64>,
    /// `RCU`.
    pub rcu: Option<u64>,
}

/// `/proc/stat`, spec:
/// <https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>.
///
/// The aggregate `cpu` line and the counters are parsed into `Copy` fields;
/// the per-CPU lines are validated once here and then iterated from the
/// borrowed input by [`KernelStat::per_cpu`] (no allocation, any CPU count).
/// The `intr` line is not tokenized: only its first number (the total) is read.
/// Unknown lines (`page`, `swap`, `disk_io` on 2.4 kernels, anything newer)
/// are ignored.
///
/// ```
/// use stepmon_sysusage::parse::KernelStat;
/// let input = b"cpu  30 0 10 400 0 0 0 0 0 0\ncpu0 10 0 5 200 0 0 0 0 0 0\ncpu2 20 0 5 200 0 0 0 0 0 0\n\
///               intr 5000 1 2 3\nctxt 9\nprocesses 77\nprocs_running 2\n";
/// let stat = KernelStat::parse(input)?;
/// assert_eq!(stat.cpu_count(), 2);
/// let ids: Vec<u32> = stat.per_cpu().map(|c| c.cpu).collect();
/// assert_eq!(ids, [0, 2]); // CPU 1 is offline
/// assert_eq!(stat.counters.intr_total, Some(5000));
/// assert_eq!(stat.counters.btime, None);
/// # Ok::<(), stepmon_sysusage::parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct KernelStat<'a> {
    /// The aggregate `cpu` line: all **possible** CPUs summed, so it can
    /// exceed the sum of the online `cpuN` lines after a CPU went offline.
    pub total: Option<CpuTimes>,
    /// `intr` total, `ctxt`, `btime`, `processes`, `procs_running`, `procs_blocked`.
    pub counters: StatCounters,
    /// The `softirq` line.
    pub softirq: Option<Softirqs>,
    /// The bytes from the first to the last `cpuN` line (all validated).
    cpu_section: &'a [u8],
    cpu_count: usize,
}

/// What a `/proc/stat` line is, from its first field.
enum Key {
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
enum Counter {
    Ctxt,
    Btime,
    Processes,
    ProcsRunning,
    ProcsBlocked,
}

fn classify(key: &[u8]) -> core::result::Result<Key, ErrorKind> {
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
enum Item {
    Aggregate(CpuTimes),
    Cpu(PerCpuTimes),
    Intr(u64),
    Counter(Counter, u64),
    Softirq(Softirqs),
    Unknown,
}

/// The first field of `line`, its classification, and a cursor after it.
#[inline]
fn split_key<'a>(line: &Line<'a>) -> Result<(Key, Columns<'a>)> {
    let mut cols = Columns::at(*line, 0);
    let Some((at, key)) = cols.next_field() else {
        return Err(line.error(ErrorKind::EmptyLine));
    };
    let kind = classify(key).map_err(|kind| line.error_at(kind, at))?;
    Ok((kind, cols))
}

fn parse_softirq(mut cols: Columns<'_>, key_end: usize) -> Result<Softirqs> {
    let total = cols.require_u64(key_end)?;
    let mut types = [None; 10];
    for slot in &mut types {
        let Some(value) = cols.next_u64()? else { break };
        *slot = Some(value);
    }
    Ok(softirqs(total, types))
}

fn softirqs(total: u64, types: [Option<u64>; 10]) -> Softirqs {
    let [hi, timer, net_tx, net_rx, block, irq_poll, tasklet, sched, hrtimer, rcu] = types;
    Softirqs { total, hi, timer, net_tx, net_rx, block, irq_poll, tasklet, sched, hrtimer, rcu }
}

/// The general path: one line of any shape, split into fields; decides
/// every value and every error.
#[inline(never)]
fn general_line(line: &Line<'_>) -> Result<Item> {
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

/// What a fast-path line was, for the caller's bookkeeping.
enum Fast {
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
fn fast_line<'i>(
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
            // skipped with memchr, never tokenized.
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
fn row<const N: usize>(mut input: &[u8]) -> Option<([u64; N], usize, &[u8])> {
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
fn fast_cpu_line(input: &[u8]) -> Option<(PerCpuTimes, &[u8])> {
    let [b'c', b'p', b'u', rest @ ..] = input else { return None };
    let (cpu, end, rest) = terminated_u64(rest)?;
    let (Some(b' '), Ok(cpu)) = (end, u32::try_from(cpu)) else { return None };
    let (times, next) = fast_cpu_columns(rest)?;
    Some((PerCpuTimes { cpu, times }, next))
}

/// ` N\n` after a counter's key, stored into `slot`.
#[inline(always)]
fn fast_counter<'i>(input: &'i [u8], slot: &mut Option<u64>) -> Option<(Fast, &'i [u8])> {
    let ([value], _, next) = row::<1>(input)?;
    *slot = Some(value);
    Some((Fast::Other, next))
}

/// The columns after `cpu`/`cpuN` and its spaces: 4 to 10 numbers, then the
/// line end. More columns (vendor kernels) go to the general path, which
/// counts them.
#[inline(always)]
fn fast_cpu_columns(input: &[u8]) -> Option<(CpuTimes, &[u8])> {
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
fn next_cpu(mut input: &[u8]) -> Option<(PerCpuTimes, &[u8])> {
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

impl<'a> KernelStat<'a> {
    /// Parses the whole file. An empty input is [`ErrorKind::Empty`]; a line
    /// that is only a key (a truncated read), or a CPU line with fewer than
    /// four columns, is [`ErrorKind::MissingField`]. Never allocates.
    ///
    /// Every `cpuN` line is checked here and decoded again by
    /// [`per_cpu`](Self::per_cpu); a caller that wants every CPU's times
    /// gets them in the same pass with [`parse_with`](Self::parse_with).
    pub fn parse(input: &'a [u8]) -> Result<Self> {
        Self::parse_with(input, |_| {})
    }

    /// [`parse`](Self::parse), handing each `cpuN` line to `each_cpu` as it
    /// is parsed (file order): one scan of the input for everything in it.
    ///
    /// On an error `each_cpu` may already have seen the CPU lines before it;
    /// discard what it collected then. Never allocates (the closure may).
    ///
    /// ```
    /// use stepmon_sysusage::parse::KernelStat;
    /// let input = b"cpu  30 0 10 400\ncpu0 10 0 5 200\ncpu2 20 0 5 200\nctxt 9\n";
    /// let mut busy = Vec::new();
    /// let stat = KernelStat::parse_with(input, |c| busy.push((c.cpu, c.times.busy_ticks())))?;
    /// assert_eq!(busy, [(0, 15), (2, 25)]);
    /// assert_eq!((stat.cpu_count(), stat.counters.ctxt), (2, Some(9)));
    /// assert!(KernelStat::parse_with(b"cpu0 1 2 3 4\ncpu1 1 2\n", |_| {}).is_err());
    /// # Ok::<(), stepmon_sysusage::parse::ParseError>(())
    /// ```
    #[inline]
    pub fn parse_with(input: &'a [u8], mut each_cpu: impl FnMut(PerCpuTimes)) -> Result<Self> {
        let mut out = KernelStat {
            total: None,
            counters: StatCounters::default(),
            softirq: None,
            cpu_section: &[],
            cpu_count: 0,
        };
        out.fill(input, &mut each_cpu)?;
        Ok(out)
    }

    /// The body of [`parse_with`](Self::parse_with), storing into `self`.
    #[inline(always)]
    fn fill(&mut self, input: &'a [u8], each_cpu: &mut impl FnMut(PerCpuTimes)) -> Result<()> {
        if input.is_empty() {
            return Err(ParseError::new(ErrorKind::Empty, 1, 0));
        }
        // The first `cpuN` line's start and the input after the last one.
        let mut section: Option<(usize, &'a [u8])> = None;
        let (mut rest, mut number) = (input, 0usize);
        while !rest.is_empty() {
            // Cannot wrap: there are fewer lines than bytes.
            number = number.wrapping_add(1);
            let (kind, next) = match fast_line(rest, self, each_cpu) {
                Some(fast) => fast,
                None => {
                    let (item, next) = general(rest, number, input.len().wrapping_sub(rest.len()))?;
                    (store(item, self, each_cpu), next)
                }
            };
            if let Fast::Cpu = kind {
                self.cpu_count = self.cpu_count.saturating_add(1);
                let start = input.len().wrapping_sub(rest.len());
                section = Some((section.map_or(start, |(first, _)| first), next));
            }
            rest = next;
        }
        if let Some((start, after_last)) = section {
            let end = line_len(input, input.len().wrapping_sub(after_last.len()));
            self.cpu_section = input.get(start..end).unwrap_or_default();
        }
        Ok(())
    }

    /// Number of `cpuN` lines (online CPUs), which is not the highest CPU
    /// number plus one when some CPUs are offline.
    #[must_use]
    pub fn cpu_count(&self) -> usize {
        self.cpu_count
    }

    /// The `cpuN` lines in file order (ascending CPU number on real kernels).
    #[must_use]
    pub fn per_cpu(&self) -> PerCpu<'a> {
        PerCpu { rest: self.cpu_section, remaining: self.cpu_count }
    }

    /// The times of CPU `cpu`, `None` if it has no line (offline or absent).
    #[must_use]
    pub fn cpu(&self, cpu: u32) -> Option<CpuTimes> {
        self.per_cpu().find(|c| c.cpu == cpu).map(|c| c.times)
    }
}

/// The general path for the line at the start of `input` (line `number`,
/// byte `start` of the file): what it holds, and the input after it. It
/// returns the line rather than storing it so that `out` stays private to
/// the inlined fast loop.
#[inline(never)]
#[cold]
fn general(input: &[u8], number: usize, start: usize) -> Result<(Item, &[u8])> {
    let (bytes, next) = split_line(input);
    Ok((general_line(&Line { bytes, number, start })?, next))
}

/// Stores what [`general`] read, as the fast path would have.
#[inline(always)]
fn store(item: Item, out: &mut KernelStat<'_>, each_cpu: &mut impl FnMut(PerCpuTimes)) -> Fast {
    match item {
        Item::Cpu(cpu) => {
            each_cpu(cpu);
            return Fast::Cpu;
        }
        Item::Aggregate(times) => out.total = Some(times),
        Item::Intr(total) => out.counters.intr_total = Some(total),
        // One store per field, not one through a pointer picked at run
        // time, which would keep the compiler from splitting `out` up.
        Item::Counter(Counter::Ctxt, value) => out.counters.ctxt = Some(value),
        Item::Counter(Counter::Btime, value) => out.counters.btime = Some(value),
        Item::Counter(Counter::Processes, value) => out.counters.processes = Some(value),
        Item::Counter(Counter::ProcsRunning, value) => out.counters.procs_running = Some(value),
        Item::Counter(Counter::ProcsBlocked, value) => out.counters.procs_blocked = Some(value),
        Item::Softirq(softirq) => out.softirq = Some(softirq),
        Item::Unknown => {}
    }
    Fast::Other
}

/// Iterator over the per-CPU lines of a [`KernelStat`], borrowing its input, spec:
/// <https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>.
/// The lines were validated by [`KernelStat::parse`], so it yields exactly
/// [`KernelStat::cpu_count`] items.
#[derive(Debug, Clone)]
pub struct PerCpu<'a> {
    /// The rest of the section from the first to the last `cpuN` line.
    rest: &'a [u8],
    remaining: usize,
}

impl Iterator for PerCpu<'_> {
    type Item = PerCpuTimes;

    fn next(&mut self) -> Option<PerCpuTimes> {
        // Lines between the first and last cpuN line that are not cpuN
        // lines (never printed by the kernel) are skipped by `next_cpu`.
        if let Some((cpu, next)) = next_cpu(self.rest) {
            self.rest = next;
            self.remaining = self.remaining.saturating_sub(1);
            return Some(cpu);
        }
        // The end, or the impossible error: stop for good.
        self.rest = &[];
        self.remaining = 0;
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for PerCpu<'_> {}
impl core::iter::FusedIterator for PerCpu<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: &[u8] = b"cpu  991 0 1182 38460 93 0 21 7 0 0\n\
cpu0 229 0 543 19571 7 0 5 2 0 0\n\
cpu1 761 0 638 18889 86 0 15 5 0 0\n\
intr 98611 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 1 14 0 0\n\
ctxt 231363\n\
btime 1796005186\n\
processes 4682\n\
procs_running 1\n\
procs_blocked 0\n\
softirq 51212 0 6742 4 4623 6218 0 137 17545 0 15943\n";

    #[test]
    fn host_capture() {
        let s = KernelStat::parse(HOST).unwrap();
        let total = s.total.unwrap();
        assert_eq!((total.user, total.system, total.idle, total.steal), (991, 1182, 38460, Some(7)));
        let cpus: Vec<_> = s.per_cpu().collect();
        assert_eq!(cpus.len(), 2);
        assert_eq!((cpus[1].cpu, cpus[1].times.iowait), (1, Some(86)));
        assert_eq!(s.counters.intr_total, Some(98_611));
        assert_eq!(s.counters.ctxt, Some(231_363));
        assert_eq!(s.counters.btime, Some(1_796_005_186));
        assert_eq!(s.counters.processes, Some(4682));
        assert_eq!((s.counters.procs_running, s.counters.procs_blocked), (Some(1), Some(0)));
        let soft = s.softirq.unwrap();
        assert_eq!((soft.total, soft.timer, soft.rcu), (51_212, Some(6742), Some(15_943)));
        assert_eq!(s.cpu(1).unwrap().user, 761);
        assert_eq!(s.cpu(2), None);
    }

    #[test]
    fn errors_are_located() {
        let err = |i: &[u8]| {
            let e = KernelStat::parse(i).unwrap_err();
            (e.kind, e.line, e.offset)
        };
        assert_eq!(err(b""), (ErrorKind::Empty, 1, 0));
        assert_eq!(err(b"cpu  1 2 3 4\ncpu0 1 2\n"), (ErrorKind::MissingField, 2, 17));
        assert_eq!(err(b"cpu  1 2 3 4\nctxt\n"), (ErrorKind::MissingField, 2, 17));
        assert_eq!(err(b"ctxt 1 2\n"), (ErrorKind::TrailingData, 1, 7));
        assert_eq!(err(b"ctxt 1\n\nbtime 2\n"), (ErrorKind::EmptyLine, 2, 7));
        assert_eq!(err(b"ctxt 1\r\n"), (ErrorKind::InvalidNumber, 1, 5));
        assert_eq!(err(b"cpu99999999999 1 2 3 4\n"), (ErrorKind::Overflow, 1, 0));
        assert_eq!(err(b"intr x 1 2\n"), (ErrorKind::InvalidNumber, 1, 5));
        assert_eq!(err(b"softirq\n"), (ErrorKind::MissingField, 1, 7));
        assert_eq!(err(b"ctxt 1\npag"), (ErrorKind::MissingField, 2, 10));
    }

    #[test]
    fn parse_with_sees_what_per_cpu_yields() {
        let mut seen = Vec::new();
        let s = KernelStat::parse_with(HOST, |c| seen.push(c)).unwrap();
        assert_eq!(seen, s.per_cpu().collect::<Vec<_>>());
        assert_eq!(s, KernelStat::parse(HOST).unwrap());
        let mut seen = Vec::new();
        let e = KernelStat::parse_with(b"cpu0 1 2 3 4\ncpu1 1 2 3 4\ncpu2 x\n", |c| seen.push(c.cpu)).unwrap_err();
        assert_eq!((e.kind, e.line, seen), (ErrorKind::InvalidNumber, 3, vec![0, 1]));
    }

    /// `parse_with` with the general path only: the specification the fast
    /// path must agree with.
    fn parse_general(input: &[u8]) -> Result<(KernelStat<'_>, Vec<PerCpuTimes>)> {
        let mut cpus = Vec::new();
        let mut out = KernelStat::parse(b"x 1").unwrap();
        let mut number = 0;
        let mut rest = input;
        if input.is_empty() {
            return Err(ParseError::new(ErrorKind::Empty, 1, 0));
        }
        while !rest.is_empty() {
            number += 1;
            let (bytes, next) = split_line(rest);
            let item = general_line(&Line { bytes, number, start: input.len() - rest.len() })?;
            store(item, &mut out, &mut |c| cpus.push(c));
            rest = next;
        }
        Ok((out, cpus))
    }

    fn check_against_general(input: &[u8]) {
        let mut cpus = Vec::new();
        let fast = KernelStat::parse_with(input, |c| cpus.push(c));
        match (fast, parse_general(input)) {
            (Ok(f), Ok((g, g_cpus))) => {
                assert_eq!((f.total, f.counters, f.softirq), (g.total, g.counters, g.softirq), "{input:?}");
                assert_eq!(cpus, g_cpus, "{input:?}");
                assert_eq!(f.per_cpu().collect::<Vec<_>>(), g_cpus, "{input:?}");
            }
            (Err(f), Err(g)) => assert_eq!(f, g, "{input:?}"),
            (f, g) => panic!("{input:?}: fast {f:?}, general {g:?}"),
        }
    }

    #[test]
    fn fast_path_agrees_with_the_general_path() {
        let inputs: [&[u8]; 4] = [
            HOST,
            b"cpu  1 2 3 4 5 6 7 8 9 10 11\ncpu12 99999999999999999999 1 1 1\ncpu1  1\t2 3 4 \nintr 5\nintr 6 x\n",
            b"softirq 1 2 3 4 5 6 7 8 9 10 11 12\nctxt 18446744073709551615\nbtime 1 \nprocs_blocked 01\n",
            // 19 digits (the most the fast path reads) where the digit
            // window and the input's end meet at every cut.
            b"cpu  9999999999999999999 1 2 3\ncpu0 1 2 3 4 5 6 7 8 9 1234567890123456789\ncpu4294967296 1 2 3 4\n\
              intr 1234567890123456789 0\nsoftirq 9999999999999999999 1\nctxt 1234567890123456789\n",
        ];
        // Every cut, and every byte replaced by each of a few troublemakers.
        for input in inputs {
            stepmon_cgroupfs_parse::testing::for_each_damaged(
                &mut input.to_vec(),
                b" \t\n09x\r-:",
                check_against_general,
            );
        }
    }

    #[test]
    fn intr_columns_are_not_parsed() {
        // Garbage after the total is never looked at: proof that the line is skipped.
        let s = KernelStat::parse(b"intr 12 not numbers at all\nctxt 3\n").unwrap();
        assert_eq!((s.counters.intr_total, s.counters.ctxt), (Some(12), Some(3)));
    }

    #[test]
    fn unknown_lines_and_no_cpu_lines() {
        let s = KernelStat::parse(b"page 5741 1808\ndisk_io: (2,0):(31,30,5764,1,2)\ncpufreq x\nctxt 1\n").unwrap();
        assert_eq!((s.total, s.cpu_count(), s.per_cpu().next()), (None, 0, None));
        assert_eq!(s.counters.ctxt, Some(1));
    }

    #[test]
    fn non_contiguous_cpu_lines() {
        let s = KernelStat::parse(b"cpu0 1 0 0 0\nctxt 5\ncpu3 2 0 0 0\n").unwrap();
        let got: Vec<_> = s.per_cpu().map(|c| (c.cpu, c.times.user)).collect();
        assert_eq!(got, [(0, 1), (3, 2)]);
        assert_eq!(s.per_cpu().len(), 2);
    }
}
