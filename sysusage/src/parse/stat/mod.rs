//! `/proc/stat`:
//! <https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>.

use stepmon_cgroupfs_parse::lines::{Line, split_line};
use stepmon_cgroupfs_parse::{ErrorKind, ParseError, Result};

use super::cpu::{CpuTimes, PerCpuTimes};
use stepmon_cgroupfs_parse::scan::line_len;

mod fast;
mod general;

use fast::{Fast, fast_line, next_cpu};
use general::{Counter, Item, general_line};

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
mod tests;
