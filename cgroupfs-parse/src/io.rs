//! `io.stat`: <https://docs.kernel.org/admin-guide/cgroup-v2.html#io-interface-files>.

use crate::error::{ErrorKind, Result};
use crate::format::nested::{NestedKeyed, NestedLine};
use crate::format::single::Limit;
use crate::number::{Hundredths, parse_i64, parse_u32};

/// A block device number, `MAJ:MIN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeviceId {
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
}

impl DeviceId {
    /// Parses `MAJ:MIN`.
    pub fn parse(token: &[u8]) -> core::result::Result<DeviceId, ErrorKind> {
        let colon = memchr::memchr(b':', token).ok_or(ErrorKind::InvalidField)?;
        let (major, minor) =
            (token.get(..colon).unwrap_or_default(), token.get(colon.saturating_add(1)..).unwrap_or_default());
        Ok(DeviceId { major: parse_u32(major)?, minor: parse_u32(minor)? })
    }
}

impl core::fmt::Display for DeviceId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

/// One device line of `io.stat`, spec:
/// <https://docs.kernel.org/admin-guide/cgroup-v2.html#io-interface-files>.
///
/// The six standard keys are printed only once the device saw reads or
/// writes; the policy keys only with iocost / iolatency / `blkcg_debug_stats`.
/// Unknown tokens are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct IoDeviceStat {
    /// The device.
    pub device: DeviceId,
    /// Bytes read.
    pub rbytes: Option<u64>,
    /// Bytes written.
    pub wbytes: Option<u64>,
    /// Read IOs.
    pub rios: Option<u64>,
    /// Write IOs.
    pub wios: Option<u64>,
    /// Bytes discarded (4.19 ≈).
    pub dbytes: Option<u64>,
    /// Discard IOs (4.19 ≈).
    pub dios: Option<u64>,
    /// iocost `cost.vrate` (percent, root cgroup only). 5.4.
    pub cost_vrate: Option<Hundredths>,
    /// iocost `cost.usage` (µs). 5.4.
    pub cost_usage_usec: Option<u64>,
    /// iocost `cost.wait` (µs, debug stats).
    pub cost_wait_usec: Option<u64>,
    /// iocost `cost.indebt` (µs, debug stats).
    pub cost_indebt_usec: Option<u64>,
    /// iocost `cost.indelay` (µs, debug stats).
    pub cost_indelay_usec: Option<u64>,
    /// `use_delay` (debug stats; a C `int`, may be negative).
    pub use_delay: Option<i64>,
    /// `delay_nsec` (debug stats).
    pub delay_nsec: Option<u64>,
    /// iolatency queue `depth` (`max` when unlimited).
    pub iolat_depth: Option<Limit>,
    /// iolatency `avg_lat` (µs, rotational devices).
    pub iolat_avg_lat_usec: Option<u64>,
    /// iolatency `win` (ms, rotational devices).
    pub iolat_win_msec: Option<u64>,
    /// iolatency `missed` (non-rotational devices).
    pub iolat_missed: Option<u64>,
    /// iolatency `total` (non-rotational devices).
    pub iolat_total: Option<u64>,
}

impl IoDeviceStat {
    fn empty(device: DeviceId) -> Self {
        IoDeviceStat {
            device,
            rbytes: None,
            wbytes: None,
            rios: None,
            wios: None,
            dbytes: None,
            dios: None,
            cost_vrate: None,
            cost_usage_usec: None,
            cost_wait_usec: None,
            cost_indebt_usec: None,
            cost_indelay_usec: None,
            use_delay: None,
            delay_nsec: None,
            iolat_depth: None,
            iolat_avg_lat_usec: None,
            iolat_win_msec: None,
            iolat_missed: None,
            iolat_total: None,
        }
    }

    fn parse_line(line: &NestedLine<'_>) -> Result<IoDeviceStat> {
        let device = DeviceId::parse(line.key.as_bytes()).map_err(|kind| line.error(kind))?;
        let mut out = IoDeviceStat::empty(device);
        for pair in line.pairs() {
            let pair = pair?;
            match pair.key {
                "rbytes" => out.rbytes = Some(pair.value_u64()?),
                "wbytes" => out.wbytes = Some(pair.value_u64()?),
                "rios" => out.rios = Some(pair.value_u64()?),
                "wios" => out.wios = Some(pair.value_u64()?),
                "dbytes" => out.dbytes = Some(pair.value_u64()?),
                "dios" => out.dios = Some(pair.value_u64()?),
                "cost.vrate" => out.cost_vrate = Some(pair.convert(Hundredths::parse)?),
                "cost.usage" => out.cost_usage_usec = Some(pair.value_u64()?),
                "cost.wait" => out.cost_wait_usec = Some(pair.value_u64()?),
                "cost.indebt" => out.cost_indebt_usec = Some(pair.value_u64()?),
                "cost.indelay" => out.cost_indelay_usec = Some(pair.value_u64()?),
                "use_delay" => out.use_delay = Some(pair.convert(parse_i64)?),
                "delay_nsec" => out.delay_nsec = Some(pair.value_u64()?),
                "depth" => out.iolat_depth = Some(pair.convert(Limit::parse_token)?),
                "avg_lat" => out.iolat_avg_lat_usec = Some(pair.value_u64()?),
                "win" => out.iolat_win_msec = Some(pair.value_u64()?),
                "missed" => out.iolat_missed = Some(pair.value_u64()?),
                "total" => out.iolat_total = Some(pair.value_u64()?),
                _ => {}
            }
        }
        Ok(out)
    }
}

/// The standard `io.stat` counters summed over all devices, as BuildKit
/// reports them. A key is `Some` once any device printed it, so an existing
/// but empty `io.stat` (no IO yet) gives all `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct IoTotals {
    /// Bytes read.
    pub rbytes: Option<u64>,
    /// Bytes written.
    pub wbytes: Option<u64>,
    /// Read IOs.
    pub rios: Option<u64>,
    /// Write IOs.
    pub wios: Option<u64>,
    /// Bytes discarded.
    pub dbytes: Option<u64>,
    /// Discard IOs.
    pub dios: Option<u64>,
}

fn add(total: &mut Option<u64>, value: Option<u64>, line: &NestedLine<'_>) -> Result<()> {
    if let Some(value) = value {
        let sum = total.unwrap_or(0).checked_add(value).ok_or(line.error(ErrorKind::Overflow))?;
        *total = Some(sum);
    }
    Ok(())
}

/// `io.stat` (nested keyed by `MAJ:MIN`), spec:
/// <https://docs.kernel.org/admin-guide/cgroup-v2.html#io-interface-files>.
///
/// [`IoStat::parse`] validates every line and sums the standard counters;
/// [`IoStat::devices`] then walks the per-device lines again, borrowing the
/// input. Tolerates bare `MAJ:MIN ` lines, partial lines, the double space
/// before policy stats, and unknown tokens.
///
/// ```
/// use stepmon_cgroupfs_parse::IoStat;
/// let io = IoStat::parse(b"8:0 rbytes=4096 wbytes=512 rios=1 wios=1 dbytes=0 dios=0\n8:16 \n259:0  cost.usage=10\n")?;
/// assert_eq!(io.totals().rbytes, Some(4096));
/// assert_eq!(io.device_count(), 3);
/// let nvme = io.devices().last().unwrap();
/// assert_eq!((nvme.device.major, nvme.cost_usage_usec, nvme.rbytes), (259, Some(10), None));
/// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoStat<'a> {
    input: &'a [u8],
    totals: IoTotals,
    devices: usize,
}

impl<'a> IoStat<'a> {
    /// Parses and validates the whole file.
    pub fn parse(input: &'a [u8]) -> Result<IoStat<'a>> {
        let mut totals = IoTotals::default();
        let mut devices = 0usize;
        for line in NestedKeyed::new(input) {
            let line = line?;
            let d = IoDeviceStat::parse_line(&line)?;
            add(&mut totals.rbytes, d.rbytes, &line)?;
            add(&mut totals.wbytes, d.wbytes, &line)?;
            add(&mut totals.rios, d.rios, &line)?;
            add(&mut totals.wios, d.wios, &line)?;
            add(&mut totals.dbytes, d.dbytes, &line)?;
            add(&mut totals.dios, d.dios, &line)?;
            devices = devices.saturating_add(1);
        }
        Ok(IoStat { input, totals, devices })
    }

    /// The standard counters summed over all devices.
    #[must_use]
    pub fn totals(&self) -> IoTotals {
        self.totals
    }

    /// Number of device lines.
    #[must_use]
    pub fn device_count(&self) -> usize {
        self.devices
    }

    /// The per-device lines, in file order (which the kernel does not define).
    pub fn devices(&self) -> impl Iterator<Item = IoDeviceStat> + 'a {
        // Validated by `parse`, so no line can fail here.
        NestedKeyed::new(self.input).filter_map(|line| IoDeviceStat::parse_line(&line.ok()?).ok())
    }

    /// The line of one device, if present.
    #[must_use]
    pub fn device(&self, device: DeviceId) -> Option<IoDeviceStat> {
        self.devices().find(|d| d.device == device)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_partial_lines() {
        let io = IoStat::parse(
            b"8:16 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=0 dios=0\n\
              8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6 cost.vrate=100.00 cost.usage=7 depth=max avg_lat=3 win=100\n\
              8:32 \n\
              8:48  cost.usage=0 future=abc\n\
              253:0 dbytes=4096 dios=1",
        )
        .unwrap();
        let t = io.totals();
        assert_eq!(
            (t.rbytes, t.wbytes, t.rios, t.wios, t.dbytes, t.dios),
            (Some(1_459_201), Some(314_773_506), Some(195), Some(357), Some(4101), Some(7))
        );
        assert_eq!(io.device_count(), 5);
        let d = io.device(DeviceId { major: 8, minor: 0 }).unwrap();
        assert_eq!(
            (d.cost_vrate, d.iolat_depth, d.iolat_win_msec),
            (Some(Hundredths(10_000)), Some(Limit::Max), Some(100))
        );
        assert_eq!(io.device(DeviceId { major: 8, minor: 32 }).unwrap().rbytes, None);
    }

    #[test]
    fn empty_and_errors() {
        let io = IoStat::parse(b"").unwrap();
        assert_eq!((io.totals(), io.device_count()), (IoTotals::default(), 0));
        assert_eq!(IoStat::parse(b"8:0 rbytes=x\n").unwrap_err().kind, ErrorKind::InvalidNumber);
        assert_eq!(IoStat::parse(b"80 rbytes=1\n").unwrap_err().kind, ErrorKind::InvalidField);
        assert_eq!(IoStat::parse(b"8:0 rbytes\n").unwrap_err().kind, ErrorKind::MissingSeparator);
        let max = u64::MAX;
        let e = IoStat::parse(std::format!("8:0 rbytes={max}\n8:1 rbytes=1\n").as_bytes()).unwrap_err();
        assert_eq!((e.kind, e.line), (ErrorKind::Overflow, 2));
    }
}
