//! `SysCPUStat` (BuildKit: `executor/resources/types/systypes.go`), its
//! per-step delta, and our per-CPU and steal additions.

use serde::{Deserialize, Serialize};

use crate::float::{go_opt_f64, millis};
use crate::missing::Missing;

/// BuildKit's `SysCPUStat`: the ten `/proc/stat` CPU columns in **seconds**,
/// summed over all CPUs (idle grows by about N_cpu seconds per wall second).
/// Serialized with every field present and rounded to 3 decimals, as
/// BuildKit's custom `MarshalJSON` does. Spec of the source:
/// <https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>.
///
/// Used twice by BuildKit: as absolute since-boot values in each
/// [`SysSample`](super::SysSample) (`cpuStat`), and as the per-step
/// difference (`Samples.sysCPUStat`); `stepmon-sysusage` makes both from
/// `/proc/stat` readings.
///
/// ```
/// use stepmon_model::system::SysCPUStat;
/// let s = SysCPUStat::from_columns([9.91, 0.0, 11.82, 384.6, 0.93, 0.0, 0.21, 0.07, 0.0, 0.0]);
/// assert_eq!((s.user, s.idle), (9.91, 384.6));
/// assert_eq!(serde_json::to_string(&s).unwrap(),
///     r#"{"user":9.91,"nice":0,"system":11.82,"idle":384.6,"iowait":0.93,"irq":0,"softirq":0.21,"steal":0.07,"guest":0,"guestNice":0}"#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SysCPUStat {
    /// `user` column, s.
    #[serde(serialize_with = "millis")]
    pub user: f64,
    /// `nice`, s.
    #[serde(serialize_with = "millis")]
    pub nice: f64,
    /// `system`, s.
    #[serde(serialize_with = "millis")]
    pub system: f64,
    /// `idle`, s.
    #[serde(serialize_with = "millis")]
    pub idle: f64,
    /// `iowait`, s.
    #[serde(serialize_with = "millis")]
    pub iowait: f64,
    /// `irq`, s.
    #[serde(serialize_with = "millis")]
    pub irq: f64,
    /// `softirq`, s.
    #[serde(serialize_with = "millis")]
    pub softirq: f64,
    /// `steal`, s.
    #[serde(serialize_with = "millis")]
    pub steal: f64,
    /// `guest`, s (already inside `user`).
    #[serde(serialize_with = "millis")]
    pub guest: f64,
    /// `guest_nice`, s (already inside `nice`).
    #[serde(serialize_with = "millis")]
    pub guest_nice: f64,
}

impl SysCPUStat {
    /// Field values from per-column seconds in kernel column order.
    #[must_use]
    pub fn from_columns(c: [f64; 10]) -> Self {
        let [user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice] = c;
        SysCPUStat { user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice }
    }

    /// The fields in kernel column order.
    #[must_use]
    pub fn as_array(&self) -> [f64; 10] {
        [
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
            self.guest,
            self.guest_nice,
        ]
    }
}

/// One CPU's times, in the [`SysCPUStat`] shape plus its number (stepmon
/// addition `perCpu`; absolute seconds in a sample, a difference in a delta).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct PerCpuStat {
    /// The CPU number `N` of `cpuN`.
    pub cpu: u32,
    /// Its times, serialized inline (`{"cpu":0,"user":...}`).
    #[serde(flatten)]
    pub times: SysCPUStat,
}

impl PerCpuStat {
    /// CPU `cpu` with the values of `stat`.
    #[must_use]
    pub fn new(cpu: u32, stat: &SysCPUStat) -> Self {
        PerCpuStat { cpu, times: *stat }
    }
}

/// stepmon's additions to the per-step `sysCPUStat` (serialized by the
/// caller under its own key, e.g. `stepmon`, next to BuildKit's field).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SysCpuDeltaExt {
    /// Δsteal / Δ(all non-guest columns): the share of CPU time the
    /// hypervisor took away; `null` without a steal column or elapsed ticks.
    #[serde(serialize_with = "go_opt_f64")]
    pub steal_share: Option<f64>,
    /// Wall time between the two readings, s (monotonic clock).
    #[serde(serialize_with = "go_opt_f64")]
    pub wall_seconds: Option<f64>,
    /// Per-CPU differences, for CPUs present in both readings.
    pub per_cpu: Vec<PerCpuStat>,
    /// Columns written as 0 in `sysCPUStat` because the kernel did not print them.
    pub missing: Vec<Missing>,
}

/// The per-step CPU delta between two `/proc/stat` readings: BuildKit's
/// `sysCPUStat` plus our additions.
///
/// Serializes as `{"sysCPUStat": {...}, "stepmon": {...}}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SysCpuDelta {
    /// BuildKit's `Samples.sysCPUStat`.
    #[serde(rename = "sysCPUStat")]
    pub sys_cpu_stat: SysCPUStat,
    /// stepmon additions.
    pub stepmon: SysCpuDeltaExt,
}
