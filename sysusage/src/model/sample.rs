//! `SysSample` (BuildKit: `executor/resources/types/systypes.go`) and
//! stepmon's additions to it.

use serde::{Deserialize, Serialize};

use super::cpu::{PerCpuStat, SysCPUStat, steal_share};
use super::float::{go_f64, go_opt_f64};
use super::memory::SysMemoryStat;
use super::missing::{Missing, MissingKind};
use super::pressure::PressureJson;
use super::proc_stat::ProcStat;
use crate::parse::LoadAvg;
use crate::probe::SysReading;

/// `/proc/loadavg` in JSON (stepmon addition `loadAvg`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LoadAvgJson {
    /// 1-minute load average.
    #[serde(serialize_with = "go_f64")]
    pub load1: f64,
    /// 5-minute load average.
    #[serde(serialize_with = "go_f64")]
    pub load5: f64,
    /// 15-minute load average.
    #[serde(serialize_with = "go_f64")]
    pub load15: f64,
    /// Runnable threads now.
    pub runnable: u64,
    /// All threads.
    pub threads: u64,
    /// Most recently allocated PID.
    pub last_pid: u64,
}

impl From<&LoadAvg> for LoadAvgJson {
    fn from(l: &LoadAvg) -> Self {
        LoadAvgJson {
            load1: l.load1.as_f64(),
            load5: l.load5.as_f64(),
            load15: l.load15.as_f64(),
            runnable: l.runnable,
            threads: l.threads,
            last_pid: l.last_pid,
        }
    }
}

/// stepmon's additions to a [`SysSample`], serialized under `"stepmon"` so
/// no name can clash with BuildKit's fields (BuildKit consumers ignore the
/// unknown key). Absent values are `null`, never a made-up 0.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SysSampleExt {
    /// `SwapFree`, kB (BuildKit keeps only `SwapTotal`, as `swap`).
    pub swap_free: Option<u64>,
    /// `procs_blocked`: threads blocked on I/O now.
    pub procs_blocked: Option<u64>,
    /// Δsteal / Δ(all non-guest CPU time) since the previous sample; `null`
    /// for the first sample or without a steal column.
    #[serde(serialize_with = "go_opt_f64")]
    pub steal_share: Option<f64>,
    /// `/proc/pressure/irq` (6.1+, needs IRQ time accounting).
    pub irq_pressure: Option<PressureJson>,
    /// `/proc/loadavg`.
    pub load_avg: Option<LoadAvgJson>,
    /// Absolute seconds per online CPU, in the `cpuStat` shape plus `cpu`.
    #[serde(default)]
    pub per_cpu: Vec<PerCpuStat>,
    /// Everything that could not be read or was not printed.
    #[serde(default)]
    pub missing: Vec<Missing>,
}

/// BuildKit's `SysSample` (one element of `sysUsage`): `timestamp` always,
/// every other field omitted when absent (Go pointers with omitempty), plus
/// our [`SysSampleExt`] under `stepmon`.
///
/// `timestamp` is RFC 3339 with nanoseconds in UTC (BuildKit writes the
/// daemon's local offset; both denote the same instant). Deserializing
/// accepts any offset, so BuildKit's own `sysUsage` can be read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SysSample {
    /// When the reading was taken.
    pub timestamp: jiff::Timestamp,
    /// The aggregate `/proc/stat` cpu line, absolute seconds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu_stat: Option<SysCPUStat>,
    /// `ctxt`, `processes`, `procs_running`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub proc_stat: Option<ProcStat>,
    /// `/proc/meminfo`, kB.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub memory_stat: Option<SysMemoryStat>,
    /// `/proc/pressure/cpu`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu_pressure: Option<PressureJson>,
    /// `/proc/pressure/memory`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub memory_pressure: Option<PressureJson>,
    /// `/proc/pressure/io`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub io_pressure: Option<PressureJson>,
    /// stepmon additions; `None` drops them for byte-for-byte BuildKit output.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stepmon: Option<SysSampleExt>,
}

impl SysSample {
    /// A sample with only a timestamp (what BuildKit writes when every read failed).
    #[must_use]
    pub fn new(timestamp: jiff::Timestamp) -> Self {
        SysSample {
            timestamp,
            cpu_stat: None,
            proc_stat: None,
            memory_stat: None,
            cpu_pressure: None,
            memory_pressure: None,
            io_pressure: None,
            stepmon: None,
        }
    }

    /// The sample for `reading`. `previous` (the reading of the sample
    /// before, if any) only feeds `stepmon.stealShare`.
    #[must_use]
    pub fn from_reading(reading: &SysReading, previous: Option<&SysReading>) -> Self {
        let mut missing = reading.missing.clone();
        let hz = reading.user_hz;
        let stat = reading.stat.as_ref();
        let total = stat.and_then(|s| s.total);
        if let Some(stat) = stat {
            match stat.total {
                None => missing.push(Missing::new("cpuStat", "stat", MissingKind::Absent, "no aggregate `cpu` line")),
                Some(t) => missing.extend(SysCPUStat::absent_columns(&t).map(|name| {
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
            irq_pressure: reading.irq_pressure.as_ref().map(PressureJson::from),
            load_avg: reading.loadavg.as_ref().map(LoadAvgJson::from),
            per_cpu: stat.map(|s| PerCpuStat::from_ticks(&s.per_cpu, hz)).unwrap_or_default(),
            missing,
        };
        SysSample {
            timestamp: reading.timestamp,
            cpu_stat: total.map(|t| SysCPUStat::from_ticks(&t, hz)),
            proc_stat: stat.and_then(|s| ProcStat::from_counters(&s.counters)),
            memory_stat: reading.meminfo.as_ref().map(SysMemoryStat::from_meminfo),
            cpu_pressure: reading.cpu_pressure.as_ref().map(PressureJson::from),
            memory_pressure: reading.memory_pressure.as_ref().map(PressureJson::from),
            io_pressure: reading.io_pressure.as_ref().map(PressureJson::from),
            stepmon: Some(ext),
        }
    }
}
