//! `/proc/stat` CPU lines as BuildKit's `SysCPUStat`
//! (<https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat>),
//! its per-step delta, and stepmon's per-CPU and steal additions.

use std::borrow::Cow;
use std::num::NonZeroU64;

use stepmon_model::missing::{Missing, MissingKind};
use stepmon_model::system::{PerCpuStat, SysCPUStat, SysCpuDelta, SysCpuDeltaExt};

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

/// Absolute seconds from one CPU line. BuildKit's fields are plain floats,
/// so a column the kernel did not print (pre-2.6 kernels) becomes 0 here;
/// [`absent_columns`] names them so the caller can report them (a
/// [`SysSample`](stepmon_model::system::SysSample) lists them in
/// `stepmon.missing`).
///
/// ```
/// use std::num::NonZeroU64;
/// use stepmon_sysusage::{model::cpu_stat, parse::CpuTimes};
/// let hz = NonZeroU64::new(100).unwrap();
/// let t = CpuTimes::parse_columns(b"991 0 1182 38460 93 0 21 7 0 0")?;
/// let s = cpu_stat(&t, hz);
/// assert_eq!((s.user, s.idle), (9.91, 384.6));
/// assert_eq!(serde_json::to_string(&s).unwrap(),
///     r#"{"user":9.91,"nice":0,"system":11.82,"idle":384.6,"iowait":0.93,"irq":0,"softirq":0.21,"steal":0.07,"guest":0,"guestNice":0}"#);
/// # Ok::<(), stepmon_sysusage::parse::ParseError>(())
/// ```
#[must_use]
pub fn cpu_stat(times: &CpuTimes, user_hz: NonZeroU64) -> SysCPUStat {
    SysCPUStat::from_columns(times.as_array().map(|t| seconds(t.unwrap_or(0), user_hz)))
}

/// The per-step `sysCPUStat`: `later - earlier`, per column, in seconds.
/// Like BuildKit's float subtraction it can be negative for `iowait`,
/// which the kernel may move backwards.
#[must_use]
pub fn cpu_stat_delta(earlier: &CpuTimes, later: &CpuTimes, user_hz: NonZeroU64) -> SysCPUStat {
    let (e, l) = (earlier.as_array(), later.as_array());
    let mut columns = [0.0; 10];
    for ((out, e), l) in columns.iter_mut().zip(e).zip(l) {
        *out = delta_seconds(e, l, user_hz);
    }
    SysCPUStat::from_columns(columns)
}

/// Kernel names of the columns `times` lacks (written as 0 by [`cpu_stat`]
/// and [`cpu_stat_delta`]).
pub fn absent_columns(times: &CpuTimes) -> impl Iterator<Item = &'static str> + '_ {
    CpuTimes::COLUMNS.into_iter().zip(times.as_array()).filter(|(_, v)| v.is_none()).map(|(name, _)| name)
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

/// Absolute seconds of every CPU line.
#[must_use]
pub fn per_cpu_stats(cpus: &[PerCpuTimes], user_hz: NonZeroU64) -> Vec<PerCpuStat> {
    cpus.iter().map(|c| PerCpuStat::new(c.cpu, &cpu_stat(&c.times, user_hz))).collect()
}

/// Differences for every CPU present in both readings (CPUs that went
/// offline or came online in between are left out).
#[must_use]
pub fn per_cpu_deltas(earlier: &[PerCpuTimes], later: &[PerCpuTimes], user_hz: NonZeroU64) -> Vec<PerCpuStat> {
    later
        .iter()
        .filter_map(|l| {
            let e = earlier.iter().find(|e| e.cpu == l.cpu)?;
            Some(PerCpuStat::new(l.cpu, &cpu_stat_delta(&e.times, &l.times, user_hz)))
        })
        .collect()
}

/// The per-step CPU delta from `earlier` to `later`: BuildKit's
/// `sysCPUStat` plus stepmon's additions; `None` when either reading lacks
/// the aggregate `cpu` line (BuildKit then silently omits `sysCPUStat`).
/// USER_HZ of `later` is used.
#[must_use]
pub fn sys_cpu_delta(earlier: &SysReading, later: &SysReading) -> Option<SysCpuDelta> {
    let (e, l) = (earlier.stat.as_ref()?, later.stat.as_ref()?);
    let (et, lt) = (e.total?, l.total?);
    let hz = later.user_hz;
    let mut missing = Vec::new();
    for name in absent_columns(&et).chain(absent_columns(&lt)) {
        let field = Cow::Owned(format!("sysCPUStat.{name}"));
        if !missing.iter().any(|m: &Missing| m.field == field) {
            let reason = format!("/proc/stat has no `{name}` column on this kernel; written as 0");
            missing.push(Missing::new(field, "stat", MissingKind::Absent, reason));
        }
    }
    let wall = later.instant.checked_duration_since(earlier.instant).map(|d| d.as_secs_f64());
    Some(SysCpuDelta {
        sys_cpu_stat: cpu_stat_delta(&et, &lt, hz),
        stepmon: SysCpuDeltaExt {
            steal_share: steal_share(&et, &lt),
            wall_seconds: wall,
            per_cpu: per_cpu_deltas(&e.per_cpu, &l.per_cpu, hz),
            missing,
        },
    })
}
#[cfg(test)]
mod tests {
    use super::*;

    const HZ: NonZeroU64 = NonZeroU64::new(100).unwrap();

    #[test]
    fn delta_and_steal_share() {
        let a = CpuTimes::parse_columns(b"100 0 50 1000 10 0 5 5 0 0").unwrap();
        let b = CpuTimes::parse_columns(b"200 10 70 1160 8 0 7 15 3 0").unwrap();
        let d = cpu_stat_delta(&a, &b, HZ);
        assert_eq!((d.user, d.nice, d.system, d.idle), (1.0, 0.1, 0.2, 1.6));
        assert_eq!((d.iowait, d.steal, d.guest), (-0.02, 0.1, 0.03));
        // Δtotal = 100+10+20+160-2+0+2+10 = 300; Δsteal = 10.
        assert_eq!(steal_share(&a, &b), Some(10.0 / 300.0));
        assert_eq!(steal_share(&a, &a), None);
        let old = CpuTimes::new(1, 2, 3, 4);
        assert_eq!(steal_share(&old, &old), None);
        assert_eq!(absent_columns(&old).collect::<Vec<_>>().len(), 6);
        assert_eq!(cpu_stat(&old, HZ).iowait, 0.0);
    }

    #[test]
    fn per_cpu_delta_matches_by_number() {
        let t = |cpu, user| PerCpuTimes { cpu, times: CpuTimes::new(user, 0, 0, 0) };
        let d = per_cpu_deltas(&[t(0, 10), t(2, 10)], &[t(0, 30), t(1, 5), t(2, 20)], HZ);
        let got: Vec<_> = d.iter().map(|c| (c.cpu, c.times.user)).collect();
        assert_eq!(got, [(0, 0.2), (2, 0.1)]);
    }
}
