//! CPU controller files: <https://docs.kernel.org/admin-guide/cgroup-v2.html#cpu-interface-files>.

use crate::error::{ErrorKind, Result};
use crate::format::flat::{CIntCounter, U64, flat_u64_struct};
use crate::format::single::Limit;
use crate::number::parse_u64;

flat_u64_struct! {
    /// `cpu.stat` (flat keyed), spec:
    /// <https://docs.kernel.org/admin-guide/cgroup-v2.html#cpu-interface-files>.
    ///
    /// The first keys are accounted by the cgroup core and exist in every
    /// cgroup (4.15+, root 5.8+); the bandwidth keys only when the cpu
    /// controller is enabled for the cgroup. Times are µs.
    ///
    /// ```
    /// let s = stepmon_cgroupfs_parse::CpuStat::parse(b"usage_usec 10\nuser_usec 6\nsystem_usec 4\nnr_periods 3\n").unwrap();
    /// assert_eq!((s.usage_usec, s.nr_periods, s.burst_usec), (Some(10), Some(3), None));
    /// ```
    pub struct CpuStat {
        /// Total CPU time (µs). 4.15.
        usage_usec = "usage_usec" via U64,
        /// User CPU time (µs). 4.15.
        user_usec = "user_usec" via U64,
        /// System CPU time incl. irq/softirq (µs). 4.15.
        system_usec = "system_usec" via U64,
        /// Niced user time, part of `user_usec` (µs). 6.13.
        nice_usec = "nice_usec" via U64,
        /// Forced-idle time under core scheduling (µs). 6.0, `CONFIG_SCHED_CORE`.
        core_sched_force_idle_usec = "core_sched.force_idle_usec" via U64,
        /// Elapsed bandwidth periods (C `int`, wraps). Needs the cpu controller.
        nr_periods = "nr_periods" via CIntCounter,
        /// Periods in which this cgroup was throttled by its own `cpu.max`.
        nr_throttled = "nr_throttled" via CIntCounter,
        /// Time throttled by its own `cpu.max` (µs).
        throttled_usec = "throttled_usec" via U64,
        /// Periods in which burst was used. 5.16.
        nr_bursts = "nr_bursts" via CIntCounter,
        /// Burst time used (µs). 5.16.
        burst_usec = "burst_usec" via U64,
    }
}

flat_u64_struct! {
    /// `cpu.stat.local` (flat keyed, 6.6+), spec:
    /// <https://docs.kernel.org/admin-guide/cgroup-v2.html#cpu-interface-files>.
    /// Empty (0 bytes) when the cpu controller is not enabled.
    pub struct CpuStatLocal {
        /// Time this cgroup's run queues were throttled, including by
        /// ancestors' limits (µs).
        throttled_usec = "throttled_usec" via U64,
    }
}

/// `cpu.max`: `$MAX $PERIOD`, spec:
/// <https://docs.kernel.org/admin-guide/cgroup-v2.html#cpu-interface-files>.
///
/// ```
/// use stepmon_cgroupfs_parse::{CpuMax, Limit};
/// assert_eq!(CpuMax::parse(b"max 100000\n").unwrap(), CpuMax { quota_usec: Limit::Max, period_usec: 100_000 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CpuMax {
    /// Allowed run time per period (µs), or `max`.
    pub quota_usec: Limit,
    /// Period length (µs).
    pub period_usec: u64,
}

impl CpuMax {
    /// Parses `cpu.max`.
    pub fn parse(input: &[u8]) -> Result<CpuMax> {
        match CpuMax::parse_kernel_layout(input) {
            Some(max) => Ok(max),
            None => CpuMax::parse_general(input),
        }
    }

    /// The file exactly as `cpu_max_show()` (`kernel/sched/core.c`) prints
    /// it, `max PERIOD\n` or `QUOTA PERIOD\n`, numbers of 1–19 digits, read in
    /// one pass; `None` for anything else, which the general parser decides.
    #[inline]
    fn parse_kernel_layout(input: &[u8]) -> Option<CpuMax> {
        let (quota_usec, rest) = match input.strip_prefix(b"max ") {
            Some(rest) => (Limit::Max, rest),
            None => match crate::scan::terminated_u64(input)? {
                (quota, Some(b' '), rest) => (Limit::Value(quota), rest),
                _ => return None,
            },
        };
        let (period_usec, end, rest) = crate::scan::terminated_u64(rest)?;
        (end == Some(b'\n') && rest.is_empty()).then_some(CpuMax { quota_usec, period_usec })
    }

    /// One line of two tokens in any form: decides every value and error.
    fn parse_general(input: &[u8]) -> Result<CpuMax> {
        let line = crate::format::single::only_line(input)?;
        let (quota, period, period_at) = line.split_once(b' ').ok_or(line.error(ErrorKind::MissingField))?;
        Ok(CpuMax {
            quota_usec: Limit::parse_token(quota).map_err(|k| line.error(k))?,
            period_usec: parse_u64(period).map_err(|k| line.error_at(k, period_at))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass read agrees with the general parser on the kernel's
    /// output cut anywhere and with any byte replaced.
    #[test]
    fn cpu_max_fast_path_agrees_with_the_general_path() {
        for kernel in [&b"max 100000\n"[..], b"50000 100000\n"] {
            assert!(CpuMax::parse_kernel_layout(kernel).is_some(), "the kernel's layout takes the fast path");
            let check = |input: &[u8]| {
                if let Some(fast) = CpuMax::parse_kernel_layout(input) {
                    assert_eq!(Ok(fast), CpuMax::parse_general(input), "{:?}", String::from_utf8_lossy(input));
                }
                assert_eq!(CpuMax::parse(input), CpuMax::parse_general(input));
            };
            crate::testing::for_each_damaged(&mut kernel.to_vec(), b"09 \n\tmx", check);
            check(b"max 18446744073709551615\n");
            check(b"max 100000\n\n");
        }
    }

    #[test]
    fn pure_v2_full_cpu_stat() {
        let input = b"usage_usec 4000\nuser_usec 3000\nsystem_usec 1000\nnice_usec 0\ncore_sched.force_idle_usec 0\n\
nr_periods 20\nnr_throttled 5\nthrottled_usec 123456\nnr_bursts 1\nburst_usec 99\n";
        let s = CpuStat::parse(input).unwrap();
        assert_eq!(s.iter().filter(|(_, v)| v.is_some()).count(), CpuStat::KEYS.len());
        assert_eq!((s.nr_throttled, s.throttled_usec, s.core_sched_force_idle_usec), (Some(5), Some(123_456), Some(0)));
        assert_eq!(s.get("burst_usec"), Some(99));
        assert_eq!(s.get("nope"), None);
    }

    #[test]
    fn cpu_stat_errors_and_oddities() {
        assert_eq!(CpuStat::parse(b"").unwrap(), CpuStat::default());
        let s = CpuStat::parse(b"system_usec 1\nfuture_key x\nusage_usec 2").unwrap();
        assert_eq!((s.usage_usec, s.system_usec), (Some(2), Some(1)));
        assert_eq!(CpuStat::parse(b"nr_periods -1\n").unwrap().nr_periods, Some(u64::from(u32::MAX)));
        let e = CpuStat::parse(b"usage_usec 1\nuser_usec 18446744073709551616\n").unwrap_err();
        assert_eq!((e.kind, e.line, e.offset), (ErrorKind::Overflow, 2, 23));
        assert_eq!(CpuStat::parse(b"usage_usec 1\r\n").unwrap_err().kind, ErrorKind::InvalidNumber);
        assert_eq!(CpuStatLocal::parse(b"").unwrap().throttled_usec, None);
        assert_eq!(CpuStatLocal::parse(b"throttled_usec 7\n").unwrap().throttled_usec, Some(7));
    }

    #[test]
    fn fast_path_agrees_with_the_general_parser() {
        let inputs: [&[u8]; 14] = [
            b"usage_usec 10\nuser_usec 6\nsystem_usec 4\nnr_periods 3\nnr_throttled 1\n",
            b"nr_periods 4294967295\nnr_throttled 4294967296\n",
            b"nr_periods -1\n",
            b"usage_usec 18446744073709551615\n",
            b"usage_usec 99999999999999999999\n",
            b"usage_usec 1 \n",
            b"usage_usec 1\r\n",
            b"usage_usec  1\n",
            b"usage_usec\t1\n",
            b"future_key x y\nusage_usec 1",
            b"future_key \nusage_usec 1",
            b"usage_usec 1\n\n",
            b"system_usec 1\nusage_usec 2\nusage_usec 3\nuser_usec 4\n",
            b"usage_usec=1 2\nus\xc3\xa4ge 1\n",
        ];
        for input in inputs {
            let general = CpuStat::parse_general(input);
            assert_eq!(CpuStat::parse(input), general, "{}", String::from_utf8_lossy(input));
            if let Some(fast) = CpuStat::parse_fast(input) {
                assert_eq!(Ok(fast), general, "{}", String::from_utf8_lossy(input));
            }
        }
        assert!(CpuStat::parse_fast(inputs[0]).is_some(), "the kernel's layout takes the fast path");
        assert!(CpuStat::parse_fast(inputs[9]).is_some(), "unknown keys are skipped on the fast path");
    }

    #[test]
    fn cpu_max() {
        assert_eq!(
            CpuMax::parse(b"50000 100000").unwrap(),
            CpuMax { quota_usec: Limit::Value(50_000), period_usec: 100_000 }
        );
        assert!(CpuMax::parse(b"max").is_err());
        assert!(CpuMax::parse(b"").is_err());
        assert!(CpuMax::parse(b"max 100000 1\n").is_err());
    }
}
