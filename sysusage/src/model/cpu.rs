//! `SysCPUStat` (BuildKit: `executor/resources/types/systypes.go`), its
//! per-step delta, and our per-CPU and steal additions.

use std::borrow::Cow;
use std::num::NonZeroU64;

use serde::{Deserialize, Serialize};

use super::float::{go_opt_f64, millis};
use super::missing::{Missing, MissingKind};
use crate::parse::{CpuTimes, PerCpuTimes};
use crate::probe::SysReading;

/// Ticks to seconds, as prometheus/procfs does for BuildKit (`ticks / USER_HZ`).
#[allow(clippy::cast_precision_loss)] // exact below 2^53 ticks (2.8 million years at 100 Hz)
fn seconds(ticks: u64, user_hz: NonZeroU64) -> f64 {
    ticks as f64 / user_hz.get() as f64
}

/// `later - earlier` in seconds, negative if the counter went backwards
/// (BuildKit subtracts its floats the same way; only `iowait` does that).
fn delta_seconds(earlier: Option<u64>, later: Option<u64>, user_hz: NonZeroU64) -> f64 {
    let (earlier, later) = (earlier.unwrap_or(0), later.unwrap_or(0));
    let magnitude = seconds(later.abs_diff(earlier), user_hz);
    if later >= earlier { magnitude } else { -magnitude }
}

/// BuildKit's `SysCPUStat`: the ten `/proc/stat` CPU columns in **seconds**,
/// summed over all CPUs (idle grows by about N_cpu seconds per wall second).
/// Serialized with every field present and rounded to 3 decimals, as
/// BuildKit's custom `MarshalJSON` does. Spec of the source:
/// <https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>.
///
/// Used twice by BuildKit: as absolute since-boot values in each
/// [`SysSample`](super::SysSample) (`cpuStat`), and as the per-step
/// difference (`Samples.sysCPUStat`, see [`SysCPUStat::delta`]).
///
/// ```
/// use std::num::NonZeroU64;
/// use stepmon_sysusage::{model::SysCPUStat, parse::CpuTimes};
/// let hz = NonZeroU64::new(100).unwrap();
/// let t = CpuTimes::parse_columns(b"991 0 1182 38460 93 0 21 7 0 0")?;
/// let s = SysCPUStat::from_ticks(&t, hz);
/// assert_eq!((s.user, s.idle), (9.91, 384.6));
/// assert_eq!(serde_json::to_string(&s).unwrap(),
///     r#"{"user":9.91,"nice":0,"system":11.82,"idle":384.6,"iowait":0.93,"irq":0,"softirq":0.21,"steal":0.07,"guest":0,"guestNice":0}"#);
/// # Ok::<(), stepmon_sysusage::parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
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
    fn from_columns(c: [f64; 10]) -> Self {
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

    /// Absolute seconds from one CPU line. BuildKit's fields are plain
    /// floats, so a column the kernel did not print (pre-2.6 kernels) becomes
    /// 0 here; [`absent_columns`](Self::absent_columns) names them so the
    /// caller can report them (our [`SysSample`](super::SysSample) lists them
    /// in `stepmon.missing`).
    #[must_use]
    pub fn from_ticks(times: &CpuTimes, user_hz: NonZeroU64) -> Self {
        Self::from_columns(times.as_array().map(|t| seconds(t.unwrap_or(0), user_hz)))
    }

    /// The per-step `sysCPUStat`: `later - earlier`, per column, in seconds.
    /// Like BuildKit's float subtraction it can be negative for `iowait`,
    /// which the kernel may move backwards.
    #[must_use]
    pub fn delta(earlier: &CpuTimes, later: &CpuTimes, user_hz: NonZeroU64) -> Self {
        let (e, l) = (earlier.as_array(), later.as_array());
        let mut columns = [0.0; 10];
        for ((out, e), l) in columns.iter_mut().zip(e).zip(l) {
            *out = delta_seconds(e, l, user_hz);
        }
        Self::from_columns(columns)
    }

    /// Kernel names of the columns `times` lacks (written as 0 by
    /// [`from_ticks`](Self::from_ticks) and [`delta`](Self::delta)).
    pub fn absent_columns(times: &CpuTimes) -> impl Iterator<Item = &'static str> + '_ {
        CpuTimes::COLUMNS.into_iter().zip(times.as_array()).filter(|(_, v)| v.is_none()).map(|(name, _)| name)
    }
}

/// Steal as a share of all accounted CPU time between two readings:
/// Δsteal / Δ(user+nice+system+idle+iowait+irq+softirq+steal). `guest` and
/// `guest_nice` are left out of the denominator because they are already
/// inside `user` and `nice`. `None` without a `steal` column or without
/// elapsed ticks.
#[allow(clippy::cast_precision_loss)] // tick deltas stay far below 2^53
pub(crate) fn steal_share(earlier: &CpuTimes, later: &CpuTimes) -> Option<f64> {
    let steal = later.steal?.checked_sub(earlier.steal?)?;
    let total = later.total_ticks().checked_sub(earlier.total_ticks()).filter(|t| *t > 0)?;
    Some(steal as f64 / total as f64)
}

/// One CPU's times, in the [`SysCPUStat`] shape plus its number (stepmon
/// addition `perCpu`; absolute seconds in a sample, a difference in a delta).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
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

    /// Absolute seconds of every CPU line.
    #[must_use]
    pub fn from_ticks(cpus: &[PerCpuTimes], user_hz: NonZeroU64) -> Vec<Self> {
        cpus.iter().map(|c| Self::new(c.cpu, &SysCPUStat::from_ticks(&c.times, user_hz))).collect()
    }

    /// Differences for every CPU present in both readings (CPUs that went
    /// offline or came online in between are left out).
    #[must_use]
    pub fn delta(earlier: &[PerCpuTimes], later: &[PerCpuTimes], user_hz: NonZeroU64) -> Vec<Self> {
        later
            .iter()
            .filter_map(|l| {
                let e = earlier.iter().find(|e| e.cpu == l.cpu)?;
                Some(Self::new(l.cpu, &SysCPUStat::delta(&e.times, &l.times, user_hz)))
            })
            .collect()
    }
}

/// stepmon's additions to the per-step `sysCPUStat` (serialized by the
/// caller under its own key, e.g. `stepmon`, next to BuildKit's field).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
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

/// The per-step CPU delta between two [`SysReading`]s: BuildKit's
/// `sysCPUStat` plus our additions.
///
/// Serializes as `{"sysCPUStat": {...}, "stepmon": {...}}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SysCpuDelta {
    /// BuildKit's `Samples.sysCPUStat`.
    #[serde(rename = "sysCPUStat")]
    pub sys_cpu_stat: SysCPUStat,
    /// stepmon additions.
    pub stepmon: SysCpuDeltaExt,
}

impl SysCpuDelta {
    /// The delta from `earlier` to `later`; `None` when either reading lacks
    /// the aggregate `cpu` line (BuildKit then silently omits `sysCPUStat`).
    /// USER_HZ of `later` is used.
    #[must_use]
    pub fn between(earlier: &SysReading, later: &SysReading) -> Option<Self> {
        let (e, l) = (earlier.stat.as_ref()?, later.stat.as_ref()?);
        let (et, lt) = (e.total?, l.total?);
        let hz = later.user_hz;
        let mut missing = Vec::new();
        for name in SysCPUStat::absent_columns(&et).chain(SysCPUStat::absent_columns(&lt)) {
            let field = Cow::Owned(format!("sysCPUStat.{name}"));
            if !missing.iter().any(|m: &Missing| m.field == field) {
                let reason = format!("/proc/stat has no `{name}` column on this kernel; written as 0");
                missing.push(Missing::new(field, "stat", MissingKind::Absent, reason));
            }
        }
        let wall = later.instant.checked_duration_since(earlier.instant).map(|d| d.as_secs_f64());
        Some(SysCpuDelta {
            sys_cpu_stat: SysCPUStat::delta(&et, &lt, hz),
            stepmon: SysCpuDeltaExt {
                steal_share: steal_share(&et, &lt),
                wall_seconds: wall,
                per_cpu: PerCpuStat::delta(&e.per_cpu, &l.per_cpu, hz),
                missing,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HZ: NonZeroU64 = NonZeroU64::new(100).unwrap();

    #[test]
    fn delta_and_steal_share() {
        let a = CpuTimes::parse_columns(b"100 0 50 1000 10 0 5 5 0 0").unwrap();
        let b = CpuTimes::parse_columns(b"200 10 70 1160 8 0 7 15 3 0").unwrap();
        let d = SysCPUStat::delta(&a, &b, HZ);
        assert_eq!((d.user, d.nice, d.system, d.idle), (1.0, 0.1, 0.2, 1.6));
        assert_eq!((d.iowait, d.steal, d.guest), (-0.02, 0.1, 0.03));
        // Δtotal = 100+10+20+160-2+0+2+10 = 300; Δsteal = 10.
        assert_eq!(steal_share(&a, &b), Some(10.0 / 300.0));
        assert_eq!(steal_share(&a, &a), None);
        let old = CpuTimes::new(1, 2, 3, 4);
        assert_eq!(steal_share(&old, &old), None);
        assert_eq!(SysCPUStat::absent_columns(&old).collect::<Vec<_>>().len(), 6);
        assert_eq!(SysCPUStat::from_ticks(&old, HZ).iowait, 0.0);
    }

    #[test]
    fn per_cpu_delta_matches_by_number() {
        let t = |cpu, user| PerCpuTimes { cpu, times: CpuTimes::new(user, 0, 0, 0) };
        let d = PerCpuStat::delta(&[t(0, 10), t(2, 10)], &[t(0, 30), t(1, 5), t(2, 20)], HZ);
        let got: Vec<_> = d.iter().map(|c| (c.cpu, c.times.user)).collect();
        assert_eq!(got, [(0, 0.2), (2, 0.1)]);
    }
}
