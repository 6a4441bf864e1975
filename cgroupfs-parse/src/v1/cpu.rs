//! CPU and CPU accounting controller v1 files:
//! <https://docs.kernel.org/admin-guide/cgroup-v1/cpuacct.html> and the CFS
//! bandwidth control of <https://docs.kernel.org/scheduler/sched-bwc.html>.

use crate::error::{ErrorKind, Result};
use crate::format::flat::{CIntCounter, U64, flat_u64_struct};
use crate::format::single::{Limit, only_line};
use crate::number::parse_i64;

flat_u64_struct! {
    /// `cpuacct.stat` (flat keyed), spec:
    /// <https://docs.kernel.org/admin-guide/cgroup-v1/cpuacct.html>.
    ///
    /// The CPU time of the cgroup's tasks (descendants included) split into
    /// user and system time, **in `USER_HZ` ticks** (`sysconf(_SC_CLK_TCK)`,
    /// 100 on every mainstream architecture), so at 10 ms resolution. For
    /// nanoseconds read `cpuacct.usage` (total), `cpuacct.usage_user` and
    /// `cpuacct.usage_sys` with [`single::parse_u64`](crate::single::parse_u64).
    /// The v2 counterparts are `cpu.stat` `user_usec`/`system_usec`.
    ///
    /// ```
    /// use stepmon_cgroupfs_parse::v1::CpuacctStat;
    /// let s = CpuacctStat::parse(b"user 90\nsystem 32\n")?;
    /// assert_eq!((s.user, s.system), (Some(90), Some(32)));
    /// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
    /// ```
    pub struct CpuacctStat {
        /// Time in user mode (`USER_HZ` ticks).
        user = "user" via U64,
        /// Time in kernel mode (`USER_HZ` ticks).
        system = "system" via U64,
    }
}

flat_u64_struct! {
    /// v1 `cpu.stat` (flat keyed), spec: "Statistics" of
    /// <https://docs.kernel.org/scheduler/sched-bwc.html#statistics>.
    ///
    /// The CFS bandwidth statistics; times are **nanoseconds** (v2 prints
    /// µs: `throttled_usec`, `burst_usec`). v1 `cpu.stat` has no CPU usage;
    /// that is [`CpuacctStat`] / `cpuacct.usage` of the cpuacct controller.
    ///
    /// ```
    /// use stepmon_cgroupfs_parse::v1::CpuStatV1;
    /// let s = CpuStatV1::parse(b"nr_periods 26\nnr_throttled 22\nthrottled_time 707401244\nnr_bursts 0\nburst_time 0\n")?;
    /// assert_eq!((s.nr_throttled, s.throttled_time, s.wait_sum), (Some(22), Some(707_401_244), None));
    /// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
    /// ```
    pub struct CpuStatV1 {
        /// Elapsed enforcement periods (C `int`, wraps).
        nr_periods = "nr_periods" via CIntCounter,
        /// Periods in which the group was throttled (C `int`, wraps).
        nr_throttled = "nr_throttled" via CIntCounter,
        /// Total time the group's entities were throttled (ns).
        throttled_time = "throttled_time" via U64,
        /// Total time the group's tasks waited on a run queue (ns); only with
        /// schedstats enabled (`kernel.sched_schedstats`), not in the root
        /// cgroup. Not in the sched-bwc doc: printed by
        /// `cpu_cfs_stat_show()` in `kernel/sched/core.c`.
        wait_sum = "wait_sum" via U64,
        /// Periods in which burst was used (C `int`, wraps). 5.14 (≈).
        nr_bursts = "nr_bursts" via CIntCounter,
        /// Burst time used (ns). 5.14 (≈).
        burst_time = "burst_time" via U64,
    }
}

flat_u64_struct! {
    /// v1 `cpu.stat.local` (flat keyed, 6.6 ≈), printed by
    /// `cpu_cfs_local_stat_show()` in `kernel/sched/core.c`; the v1 form of
    /// v2 `cpu.stat.local`
    /// (<https://docs.kernel.org/admin-guide/cgroup-v2.html#cpu-interface-files>).
    ///
    /// ```
    /// use stepmon_cgroupfs_parse::v1::CpuStatLocalV1;
    /// assert_eq!(CpuStatLocalV1::parse(b"throttled_time 7\n")?.throttled_time, Some(7));
    /// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
    /// ```
    pub struct CpuStatLocalV1 {
        /// Time this group's run queues were throttled, by its own or an
        /// ancestor's quota (ns).
        throttled_time = "throttled_time" via U64,
    }
}

/// Parses `cpu.cfs_quota_us`: the run time allowed per period in µs, or
/// `-1` for "no bandwidth restriction" ([`Limit::Max`]). Spec: "Management"
/// of <https://docs.kernel.org/scheduler/sched-bwc.html#management>. The
/// kernel prints only `-1` or a non-negative number (a negative write sets
/// "unlimited"), so any other negative value is [`ErrorKind::InvalidField`].
/// The period, `cpu.cfs_period_us`, is a plain
/// [`single::parse_u64`](crate::single::parse_u64).
///
/// ```
/// use stepmon_cgroupfs_parse::{Limit, v1::cfs_quota_us};
/// assert_eq!(cfs_quota_us(b"-1\n")?, Limit::Max);
/// assert_eq!(cfs_quota_us(b"50000\n")?, Limit::Value(50_000));
/// assert!(cfs_quota_us(b"-2\n").is_err());
/// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
/// ```
pub fn cfs_quota_us(input: &[u8]) -> Result<Limit> {
    let line = only_line(input)?;
    match parse_i64(line.bytes).map_err(|kind| line.error(kind))? {
        -1 => Ok(Limit::Max),
        quota => u64::try_from(quota).map(Limit::Value).map_err(|_| line.error(ErrorKind::InvalidField)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_valid_and_the_kernel_layout_takes_the_fast_path() {
        for keys in [CpuacctStat::KEYS, CpuStatV1::KEYS, CpuStatLocalV1::KEYS] {
            for key in keys {
                assert_eq!(crate::format::ascii_key(key.as_bytes()), Ok(*key));
            }
        }
        let cpu_stat = include_bytes!("../../tests/data/hybrid-6.18-v1/cpu/cpu.stat");
        assert!(CpuStatV1::parse_fast(cpu_stat).is_some());
        let with_wait_sum = b"nr_periods 1\nnr_throttled 0\nthrottled_time 0\nwait_sum 5\nnr_bursts 0\nburst_time 0\n";
        assert_eq!(CpuStatV1::parse_fast(with_wait_sum).and_then(|s| s.wait_sum), Some(5));
        let cpuacct = include_bytes!("../../tests/data/hybrid-6.18-v1/cpuacct/cpuacct.stat");
        assert!(CpuacctStat::parse_fast(cpuacct).is_some());
    }

    #[test]
    fn fast_path_agrees_with_the_general_parser() {
        let mut input = b"nr_periods 26\nnr_throttled -1\nthrottled_time 707401244\nwait_sum 1\nnr_bursts 0\n".to_vec();
        let substitutes: &[u8] = if cfg!(miri) { b"x" } else { b"09 \n\t-x" };
        crate::testing::for_each_damaged(&mut input, substitutes, |input| {
            let general = CpuStatV1::parse_general(input);
            assert_eq!(CpuStatV1::parse(input), general, "{}", String::from_utf8_lossy(input));
            if let Some(fast) = CpuStatV1::parse_fast(input) {
                assert_eq!(Ok(fast), general, "{}", String::from_utf8_lossy(input));
            }
        });
    }

    #[test]
    fn quota_edges() {
        assert_eq!(cfs_quota_us(b"-1"), Ok(Limit::Max));
        assert_eq!(cfs_quota_us(b"0\n"), Ok(Limit::Value(0)));
        assert_eq!(cfs_quota_us(b"9223372036854775807\n"), Ok(Limit::Value(i64::MAX as u64)));
        assert_eq!(cfs_quota_us(b"9223372036854775808\n").map_err(|e| e.kind), Err(ErrorKind::Overflow));
        assert_eq!(cfs_quota_us(b"-9223372036854775808\n").map_err(|e| e.kind), Err(ErrorKind::InvalidField));
        assert_eq!(cfs_quota_us(b"-0\n"), Ok(Limit::Value(0)), "parse_i64 reads -0 as 0");
        assert_eq!(cfs_quota_us(b"").map_err(|e| e.kind), Err(ErrorKind::Empty));
        assert_eq!(cfs_quota_us(b"max\n").map_err(|e| e.kind), Err(ErrorKind::InvalidNumber));
        assert_eq!(cfs_quota_us(b"-1\n-1\n").map_err(|e| (e.kind, e.line)), Err((ErrorKind::TrailingData, 2)));
    }
}
