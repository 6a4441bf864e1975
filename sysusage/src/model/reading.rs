//! One [`SysReading`] as BuildKit's `SysSample`, and the parts it is made of.

use stepmon_model::missing::{Missing, MissingKind};
use stepmon_model::system::{
    LoadAvgJson, PressureJson, PressureValues, ProcStat, SysMemoryStat, SysSample, SysSampleExt,
};
use stepmon_psi::{Pressure, PressureLine};

use super::cpu::{absent_columns, cpu_stat, per_cpu_stats, steal_share};
use crate::parse::{LoadAvg, MemInfo, StatCounters};
use crate::probe::SysReading;

/// The BuildKit fields of a parsed `/proc/meminfo`
/// (<https://docs.kernel.org/filesystems/proc.html#meminfo>).
///
/// ```
/// use stepmon_sysusage::{model::memory_stat, parse::MemInfo};
/// let m = MemInfo::parse(b"MemTotal: 100 kB\nSwapTotal: 0 kB\n")?;
/// let json = serde_json::to_string(&memory_stat(&m)).unwrap();
/// assert_eq!(json, r#"{"total":100,"free":null,"available":null,"buffers":null,"cached":null,"active":null,"inactive":null,"swap":0,"dirty":null,"writeback":null,"slab":null}"#);
/// # Ok::<(), stepmon_sysusage::parse::ParseError>(())
/// ```
#[must_use]
pub fn memory_stat(m: &MemInfo) -> SysMemoryStat {
    SysMemoryStat {
        total: m.mem_total,
        free: m.mem_free,
        available: m.mem_available,
        buffers: m.buffers,
        cached: m.cached,
        active: m.active,
        inactive: m.inactive,
        swap: m.swap_total,
        dirty: m.dirty,
        writeback: m.writeback,
        slab: m.slab,
    }
}

/// The three counters, or `None` if any of their lines is absent (the
/// fields are plain integers: writing 0 would invent a value).
#[must_use]
pub fn proc_stat(c: &StatCounters) -> Option<ProcStat> {
    Some(ProcStat { context_switches: c.ctxt?, process_created: c.processes?, processes_running: c.procs_running? })
}

/// One PSI line in BuildKit's shape
/// (<https://docs.kernel.org/accounting/psi.html#pressure-interface>).
#[must_use]
pub fn pressure_values(line: &PressureLine) -> PressureValues {
    // `Hundredths::as_f64` is the nearest double to the printed decimal,
    // the same value Go's ParseFloat gives BuildKit.
    PressureValues {
        avg10: line.avg10.map(|h| h.as_f64()),
        avg60: line.avg60.map(|h| h.as_f64()),
        avg300: line.avg300.map(|h| h.as_f64()),
        total: line.total_usec,
    }
}

/// A pressure file in BuildKit's `Pressure` shape: `some` and `full`, each
/// `null` when its line is absent (e.g. `some` of `/proc/pressure/irq`).
///
/// ```
/// use stepmon_sysusage::model::pressure;
/// let p = stepmon_psi::Pressure::parse(b"some avg10=3.00 avg60=1.16 avg300=0.60 total=3220079\n")?;
/// assert_eq!(serde_json::to_string(&pressure(&p)).unwrap(),
///     r#"{"some":{"avg10":3,"avg60":1.16,"avg300":0.6,"total":3220079},"full":null}"#);
/// # Ok::<(), stepmon_psi::ParseError>(())
/// ```
#[must_use]
pub fn pressure(p: &Pressure) -> PressureJson {
    PressureJson { some: p.some.as_ref().map(pressure_values), full: p.full.as_ref().map(pressure_values) }
}

/// `/proc/loadavg` in stepmon's `loadAvg` shape.
#[must_use]
pub fn load_avg(l: &LoadAvg) -> LoadAvgJson {
    LoadAvgJson {
        load1: l.load1.as_f64(),
        load5: l.load5.as_f64(),
        load15: l.load15.as_f64(),
        runnable: l.runnable,
        threads: l.threads,
        last_pid: l.last_pid,
    }
}

/// The sample for `reading`. `previous` (the reading of the sample before,
/// if any) only feeds `stepmon.stealShare`.
#[must_use]
pub fn sys_sample(reading: &SysReading, previous: Option<&SysReading>) -> SysSample {
    let mut missing = reading.missing.clone();
    let hz = reading.user_hz;
    let stat = reading.stat.as_ref();
    let total = stat.and_then(|s| s.total);
    if let Some(stat) = stat {
        match stat.total {
            None => missing.push(Missing::new("cpuStat", "stat", MissingKind::Absent, "no aggregate `cpu` line")),
            Some(t) => missing.extend(absent_columns(&t).map(|name| {
                let reason = format!("/proc/stat has no `{name}` column on this kernel; written as 0");
                Missing::new(format!("cpuStat.{name}"), "stat", MissingKind::Absent, reason)
            })),
        }
        let c = &stat.counters;
        let absent: Vec<&str> = [("ctxt", c.ctxt), ("processes", c.processes), ("procs_running", c.procs_running)]
            .into_iter()
            .filter_map(|(name, v)| v.is_none().then_some(name))
            .collect();
        if !absent.is_empty() {
            let reason = format!("/proc/stat has no `{}` line", absent.join("`, `"));
            missing.push(Missing::new("procStat", "stat", MissingKind::Absent, reason));
        }
    }
    let previous_total = previous.and_then(|p| p.stat.as_ref()).and_then(|s| s.total);
    let ext = SysSampleExt {
        swap_free: reading.meminfo.as_ref().and_then(|m| m.swap_free),
        procs_blocked: stat.and_then(|s| s.counters.procs_blocked),
        steal_share: previous_total.zip(total).and_then(|(e, l)| steal_share(&e, &l)),
        irq_pressure: reading.irq_pressure.as_ref().map(pressure),
        load_avg: reading.loadavg.as_ref().map(load_avg),
        per_cpu: stat.map(|s| per_cpu_stats(&s.per_cpu, hz)).unwrap_or_default(),
        missing,
    };
    SysSample {
        timestamp: reading.timestamp,
        cpu_stat: total.map(|t| cpu_stat(&t, hz)),
        proc_stat: stat.and_then(|s| proc_stat(&s.counters)),
        memory_stat: reading.meminfo.as_ref().map(memory_stat),
        cpu_pressure: reading.cpu_pressure.as_ref().map(pressure),
        memory_pressure: reading.memory_pressure.as_ref().map(pressure),
        io_pressure: reading.io_pressure.as_ref().map(pressure),
        stepmon: Some(ext),
    }
}
