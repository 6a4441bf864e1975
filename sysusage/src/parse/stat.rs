//! `/proc/stat`:
//! <https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>.

use stepmon_cgroupfs_parse::lines::{Fields, Line, Lines};
use stepmon_cgroupfs_parse::number::{parse_u32, parse_u64};
use stepmon_cgroupfs_parse::{ErrorKind, ParseError, Result};

use super::cpu::{CpuTimes, PerCpuTimes};

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
    Counter(fn(&mut StatCounters) -> &mut Option<u64>),
    Softirq,
    Unknown,
}

fn classify(key: &[u8]) -> core::result::Result<Key, ErrorKind> {
    Ok(match key {
        b"cpu" => Key::Aggregate,
        b"intr" => Key::Intr,
        b"ctxt" => Key::Counter(|c| &mut c.ctxt),
        b"btime" => Key::Counter(|c| &mut c.btime),
        b"processes" => Key::Counter(|c| &mut c.processes),
        b"procs_running" => Key::Counter(|c| &mut c.procs_running),
        b"procs_blocked" => Key::Counter(|c| &mut c.procs_blocked),
        b"softirq" => Key::Softirq,
        [b'c', b'p', b'u', digits @ ..] if digits.iter().all(u8::is_ascii_digit) => Key::Cpu(parse_u32(digits)?),
        _ => Key::Unknown,
    })
}

/// The first field of `line` and the line's classification.
fn split_key<'a>(line: &Line<'a>) -> Result<(Key, Fields<'a>, usize)> {
    let mut fields = Fields::new(line.bytes);
    let Some((at, key)) = fields.next() else {
        return Err(line.error(ErrorKind::EmptyLine));
    };
    let kind = classify(key).map_err(|kind| line.error_at(kind, at))?;
    Ok((kind, fields, at.saturating_add(key.len())))
}

/// The next field as a number; [`ErrorKind::MissingField`] after `key_end` if there is none.
fn next_u64(line: &Line<'_>, fields: &mut Fields<'_>, key_end: usize) -> Result<u64> {
    let (at, field) = fields.next().ok_or_else(|| line.error_at(ErrorKind::MissingField, key_end))?;
    parse_u64(field).map_err(|kind| line.error_at(kind, at))
}

fn parse_softirq(line: &Line<'_>, mut fields: Fields<'_>, key_end: usize) -> Result<Softirqs> {
    let total = next_u64(line, &mut fields, key_end)?;
    let mut types = [None; 10];
    for slot in &mut types {
        let Some((at, field)) = fields.next() else { break };
        *slot = Some(parse_u64(field).map_err(|kind| line.error_at(kind, at))?);
    }
    let [hi, timer, net_tx, net_rx, block, irq_poll, tasklet, sched, hrtimer, rcu] = types;
    Ok(Softirqs { total, hi, timer, net_tx, net_rx, block, irq_poll, tasklet, sched, hrtimer, rcu })
}

impl<'a> KernelStat<'a> {
    /// Parses the whole file. An empty input is [`ErrorKind::Empty`]; a line
    /// that is only a key (a truncated read), or a CPU line with fewer than
    /// four columns, is [`ErrorKind::MissingField`]. Never allocates.
    pub fn parse(input: &'a [u8]) -> Result<Self> {
        if input.is_empty() {
            return Err(ParseError::new(ErrorKind::Empty, 1, 0));
        }
        let mut out = KernelStat {
            total: None,
            counters: StatCounters::default(),
            softirq: None,
            cpu_section: &[],
            cpu_count: 0,
        };
        let mut section: Option<(usize, usize)> = None;
        for line in Lines::new(input) {
            let (key, mut fields, key_end) = split_key(&line)?;
            match key {
                Key::Aggregate => out.total = Some(CpuTimes::parse_fields(&line, fields, key_end)?),
                Key::Cpu(_) => {
                    CpuTimes::parse_fields(&line, fields, key_end)?;
                    out.cpu_count = out.cpu_count.saturating_add(1);
                    let end = line.start.saturating_add(line.bytes.len());
                    section = Some((section.map_or(line.start, |(start, _)| start), end));
                }
                // Only the total: the per-IRQ columns are never looked at; the
                // line iterator already found its end with memchr.
                Key::Intr => out.counters.intr_total = Some(next_u64(&line, &mut fields, key_end)?),
                Key::Counter(slot) => {
                    let value = next_u64(&line, &mut fields, key_end)?;
                    if let Some((at, _)) = fields.next() {
                        return Err(line.error_at(ErrorKind::TrailingData, at));
                    }
                    *slot(&mut out.counters) = Some(value);
                }
                Key::Softirq => out.softirq = Some(parse_softirq(&line, fields, key_end)?),
                // Every /proc/stat line, old or new, is a key and at least one
                // value: a lone token is a read cut short (`cp`, `ctx`).
                Key::Unknown if fields.next().is_none() => return Err(line.error_at(ErrorKind::MissingField, key_end)),
                Key::Unknown => {}
            }
        }
        if let Some((start, end)) = section {
            out.cpu_section = input.get(start..end).unwrap_or_default();
        }
        Ok(out)
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
        PerCpu { lines: Lines::new(self.cpu_section), remaining: self.cpu_count }
    }

    /// The times of CPU `cpu`, `None` if it has no line (offline or absent).
    #[must_use]
    pub fn cpu(&self, cpu: u32) -> Option<CpuTimes> {
        self.per_cpu().find(|c| c.cpu == cpu).map(|c| c.times)
    }
}

/// Iterator over the per-CPU lines of a [`KernelStat`], borrowing its input, spec:
/// <https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>.
/// The lines were validated by [`KernelStat::parse`], so it yields exactly
/// [`KernelStat::cpu_count`] items.
#[derive(Debug, Clone)]
pub struct PerCpu<'a> {
    lines: Lines<'a>,
    remaining: usize,
}

impl Iterator for PerCpu<'_> {
    type Item = PerCpuTimes;

    fn next(&mut self) -> Option<PerCpuTimes> {
        for line in self.lines.by_ref() {
            // Lines between the first and last cpuN line that are not cpuN
            // lines (never printed by the kernel) are skipped.
            let Ok((Key::Cpu(cpu), fields, key_end)) = split_key(&line) else { continue };
            // Validated by `KernelStat::parse`; on the impossible error, stop.
            let Ok(times) = CpuTimes::parse_fields(&line, fields, key_end) else { break };
            self.remaining = self.remaining.saturating_sub(1);
            return Some(PerCpuTimes { cpu, times });
        }
        self.lines.finish();
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
