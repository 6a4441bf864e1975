//! One reading of all files, owned.

use std::num::NonZeroU64;
use std::time::Instant;

use crate::parse::{CpuTimes, KernelStat, LoadAvg, MemInfo, ParseError, PerCpuTimes, Pressure, Softirqs, StatCounters};
use stepmon_model::missing::Missing;

/// `/proc/stat`, owned (the parser's [`KernelStat`] borrows the read buffer).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct StatSnapshot {
    /// The aggregate `cpu` line.
    pub total: Option<CpuTimes>,
    /// Every `cpuN` line, in file order.
    pub per_cpu: Vec<PerCpuTimes>,
    /// `intr` total, `ctxt`, `btime`, `processes`, `procs_running`, `procs_blocked`.
    pub counters: StatCounters,
    /// The `softirq` line.
    pub softirq: Option<Softirqs>,
}

impl StatSnapshot {
    /// Parses `/proc/stat` into an owned snapshot in one pass
    /// ([`KernelStat::parse_with`]); `cpus` is the capacity to reserve for
    /// the per-CPU list (e.g. the count of the previous reading).
    pub fn parse(bytes: &[u8], cpus: usize) -> Result<Self, ParseError> {
        let mut per_cpu = Vec::with_capacity(cpus);
        let s = KernelStat::parse_with(bytes, |cpu| per_cpu.push(cpu))?;
        Ok(StatSnapshot { total: s.total, per_cpu, counters: s.counters, softirq: s.softirq })
    }
}

impl From<&KernelStat<'_>> for StatSnapshot {
    fn from(s: &KernelStat<'_>) -> Self {
        StatSnapshot { total: s.total, per_cpu: s.per_cpu().collect(), counters: s.counters, softirq: s.softirq }
    }
}

/// Everything one [`SysProbe::read`](super::SysProbe::read) got, and what it did not.
///
/// Each part is `None` exactly when [`missing`](Self::missing) has an entry
/// for it. Fields are public so tests and replay tools can build readings
/// from captured files ([`SysReading::new`] + field assignment).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SysReading {
    /// Wall-clock time when the reading started.
    pub timestamp: jiff::Timestamp,
    /// Monotonic time when the reading started (for wall-time deltas).
    pub instant: Instant,
    /// Clock ticks per second of the CPU times (USER_HZ).
    pub user_hz: NonZeroU64,
    /// `/proc/stat`.
    pub stat: Option<StatSnapshot>,
    /// `/proc/meminfo`.
    pub meminfo: Option<MemInfo>,
    /// `/proc/loadavg`.
    pub loadavg: Option<LoadAvg>,
    /// `/proc/pressure/cpu`.
    pub cpu_pressure: Option<Pressure>,
    /// `/proc/pressure/memory`.
    pub memory_pressure: Option<Pressure>,
    /// `/proc/pressure/io`.
    pub io_pressure: Option<Pressure>,
    /// `/proc/pressure/irq`.
    pub irq_pressure: Option<Pressure>,
    /// What could not be read or parsed, one entry per file.
    pub missing: Vec<Missing>,
}

impl SysReading {
    /// An empty reading taken at `timestamp` (and now, monotonically).
    #[must_use]
    pub fn new(timestamp: jiff::Timestamp, user_hz: NonZeroU64) -> Self {
        SysReading {
            timestamp,
            instant: Instant::now(),
            user_hz,
            stat: None,
            meminfo: None,
            loadavg: None,
            cpu_pressure: None,
            memory_pressure: None,
            io_pressure: None,
            irq_pressure: None,
            missing: Vec::new(),
        }
    }
}
