//! The CPU lines of `/proc/stat` (`cpu` and `cpuN`):
//! <https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>.

use stepmon_cgroupfs_parse::Result;
use stepmon_cgroupfs_parse::lines::Line;

use super::columns::Columns;

/// The time columns of one `/proc/stat` CPU line, in clock ticks (USER_HZ,
/// `sysconf(_SC_CLK_TCK)`, 100 on x86), spec:
/// <https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>.
///
/// Columns are positional. The first four exist on every kernel; the others
/// were added later (iowait/irq/softirq 2.5.41, steal 2.6.11, guest 2.6.24,
/// guest_nice 2.6.33) and are `None` when the line is shorter. Columns past
/// the tenth (vendor kernels) are ignored but counted in [`CpuTimes::columns`].
///
/// `guest` is already included in `user` and `guest_nice` in `nice`; `iowait`
/// may go backwards between reads (the kernel docs call it unreliable).
///
/// ```
/// use stepmon_sysusage::parse::CpuTimes;
/// let t = CpuTimes::parse_columns(b"991 0 1182 38460 93 0 21 7 0 0")?;
/// assert_eq!((t.user, t.idle, t.steal), (991, 38460, Some(7)));
/// assert_eq!(t.total_ticks(), 991 + 1182 + 38460 + 93 + 21 + 7);
/// let old = CpuTimes::parse_columns(b"1000 20 300 40000")?; // pre-2.5 kernel
/// assert_eq!((old.iowait, old.columns), (None, 4));
/// # Ok::<(), stepmon_sysusage::parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct CpuTimes {
    /// Normal processes in user mode (includes `guest`).
    pub user: u64,
    /// Niced processes in user mode (includes `guest_nice`).
    pub nice: u64,
    /// Kernel mode.
    pub system: u64,
    /// Idle.
    pub idle: u64,
    /// Idle while I/O was outstanding. 2.5.41. Not monotonic.
    pub iowait: Option<u64>,
    /// Servicing hard interrupts. 2.5.41 (always 0 without IRQ time accounting).
    pub irq: Option<u64>,
    /// Servicing softirqs. 2.5.41.
    pub softirq: Option<u64>,
    /// Involuntary wait while the hypervisor ran something else. 2.6.11.
    pub steal: Option<u64>,
    /// Running a guest vCPU (part of `user`). 2.6.24.
    pub guest: Option<u64>,
    /// Running a niced guest vCPU (part of `nice`). 2.6.33.
    pub guest_nice: Option<u64>,
    /// How many numeric columns the line had, including ignored vendor extras.
    pub columns: usize,
}

/// One `cpuN` line of `/proc/stat`: the CPU number and its times, spec:
/// <https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PerCpuTimes {
    /// The CPU number `N` of `cpuN` (online CPUs only; numbering can have gaps).
    pub cpu: u32,
    /// Its time columns.
    pub times: CpuTimes,
}

impl CpuTimes {
    /// Names of the ten known columns, in kernel order (as in the proc docs).
    pub const COLUMNS: [&'static str; 10] =
        ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice"];

    /// Times with the four columns every kernel prints; the rest `None`.
    #[must_use]
    pub fn new(user: u64, nice: u64, system: u64, idle: u64) -> Self {
        CpuTimes { user, nice, system, idle, columns: 4, ..CpuTimes::default() }
    }

    /// Parses the numeric columns of a CPU line (everything after the `cpu`/`cpuN`
    /// key). Fewer than four columns is [`ErrorKind::MissingField`](super::ErrorKind::MissingField). Errors
    /// are located within `columns` (line 1); [`KernelStat`](super::KernelStat)
    /// reports them at their place in the whole file.
    pub fn parse_columns(columns: &[u8]) -> Result<Self> {
        let line = Line { bytes: columns, number: 1, start: 0 };
        Self::parse_rest(Columns::at(line, 0), 0)
    }

    /// Parses the remaining columns of a CPU line in one forward scan;
    /// `key_end` locates a [`ErrorKind::MissingField`](super::ErrorKind::MissingField) error right after the key.
    ///
    /// Columns are read left to right and a missing one is only noticed after
    /// the last, so the first bad column wins, as in a parse of every field.
    #[inline]
    pub(crate) fn parse_rest(mut cols: Columns<'_>, key_end: usize) -> Result<Self> {
        let user = cols.require_u64(key_end)?;
        let nice = cols.require_u64(key_end)?;
        let system = cols.require_u64(key_end)?;
        let idle = cols.require_u64(key_end)?;
        let mut later = [None; 6];
        let mut columns: usize = 4;
        for slot in &mut later {
            let Some(value) = cols.next_u64()? else { break };
            *slot = Some(value);
            columns = columns.saturating_add(1);
        }
        if columns == Self::COLUMNS.len() {
            // Vendor columns after the tenth are counted, not parsed: their
            // format is not ours to judge.
            while cols.next_field().is_some() {
                columns = columns.saturating_add(1);
            }
        }
        let [iowait, irq, softirq, steal, guest, guest_nice] = later;
        Ok(CpuTimes { user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice, columns })
    }

    /// The ten known columns in kernel order (the first four always `Some`).
    #[must_use]
    pub fn as_array(&self) -> [Option<u64>; 10] {
        [
            Some(self.user),
            Some(self.nice),
            Some(self.system),
            Some(self.idle),
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
            self.guest,
            self.guest_nice,
        ]
    }

    /// All time the CPU(s) accounted: every column except `guest` and
    /// `guest_nice`, which are already inside `user` and `nice`. Absent
    /// columns count as nothing. Saturates instead of overflowing.
    #[must_use]
    pub fn total_ticks(&self) -> u64 {
        self.as_array().iter().take(8).flatten().fold(0u64, |sum, v| sum.saturating_add(*v))
    }

    /// Ticks not idle: [`total_ticks`](Self::total_ticks) minus `idle` and `iowait`.
    #[must_use]
    pub fn busy_ticks(&self) -> u64 {
        self.total_ticks().saturating_sub(self.idle).saturating_sub(self.iowait.unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stepmon_cgroupfs_parse::ErrorKind;

    #[test]
    fn column_counts() {
        let ten = CpuTimes::parse_columns(b"1 2 3 4 5 6 7 8 9 10").unwrap();
        assert_eq!(ten.as_array().map(|v| v.unwrap()), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!((ten.columns, ten.total_ticks(), ten.busy_ticks()), (10, 36, 27));
        let vendor = CpuTimes::parse_columns(b"1 2 3 4 5 6 7 8 9 10 11 12").unwrap();
        assert_eq!((vendor.guest_nice, vendor.columns), (Some(10), 12));
        let seven = CpuTimes::parse_columns(b"1 2 3 4 5 6 7").unwrap();
        assert_eq!((seven.softirq, seven.steal, seven.guest), (Some(7), None, None));
        assert_eq!(CpuTimes::parse_columns(b"1 2 3").unwrap_err().kind, ErrorKind::MissingField);
        assert_eq!(CpuTimes::parse_columns(b"").unwrap_err().kind, ErrorKind::MissingField);
        let e = CpuTimes::parse_columns(b"1 2 x 4").unwrap_err();
        assert_eq!((e.kind, e.offset), (ErrorKind::InvalidNumber, 4));
        // Vendor columns are counted, not parsed: their format is not ours to judge.
        assert_eq!(CpuTimes::parse_columns(b"1 2 3 4 5 6 7 8 9 10 -1").unwrap().columns, 11);
    }

    #[test]
    fn totals_saturate() {
        let t = CpuTimes::parse_columns(b"18446744073709551615 1 0 0").unwrap();
        assert_eq!(t.total_ticks(), u64::MAX);
        assert_eq!(CpuTimes::new(1, 2, 3, 4).total_ticks(), 10);
    }
}
