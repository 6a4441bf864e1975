//! `SysSample` (BuildKit: `executor/resources/types/systypes.go`) and
//! stepmon's additions to it.

use serde::{Deserialize, Serialize};

use super::cpu::{PerCpuStat, SysCPUStat};
use super::memory::SysMemoryStat;
use super::pressure::PressureJson;
use super::proc_stat::ProcStat;
use crate::float::{go_f64, go_opt_f64};
use crate::missing::Missing;

/// `/proc/loadavg` in JSON (stepmon addition `loadAvg`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// stepmon's additions to a [`SysSample`], serialized under `"stepmon"` so
/// no name can clash with BuildKit's fields (BuildKit consumers ignore the
/// unknown key). Absent values are `null`, never a made-up 0.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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
}
