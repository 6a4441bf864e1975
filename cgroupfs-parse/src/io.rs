//! `io.stat`: <https://docs.kernel.org/admin-guide/cgroup-v2.html#io-interface-files>.

use crate::error::{ErrorKind, ParseError, Result};
use crate::format::is_key_byte;
use crate::format::nested::{NestedKeyed, NestedLine};
use crate::format::single::Limit;
use crate::lines::{find_byte, find_either, split_line};
use crate::number::{Hundredths, parse_i64, parse_u32, parse_u64};
use crate::scan::{after_literal, terminated_u64};

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
        let colon = find_byte(b':', token).ok_or(ErrorKind::InvalidField)?;
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
            out.set(pair.key.as_bytes(), pair.value)
                .map_err(|kind| ParseError::new(kind, pair.line, pair.value_offset))?;
        }
        Ok(out)
    }

    /// `parse_line` without error positions, for [`IoStat::parse_with`]: the
    /// line at the start of `input`, and the input after its `\n`. The line
    /// is `MAJ:MIN`, then `KEY=VALUE` tokens separated by runs of spaces,
    /// split and checked as [`NestedKeyed`] does, so this is `None` exactly
    /// where `parse_line` (or `NestedKeyed`) fails and the same value
    /// otherwise. Tokens are found straight in the input (a space or `\n`
    /// ends them), which saves a separate pass to find the line end.
    ///
    /// The device number and then the six standard counters in the order
    /// `blkcg_print_one_stat()` (`block/blk-cgroup.c`) prints them are read
    /// as one pattern with [`terminated_u64`]; other lines, and whatever
    /// follows the six, go through the token loop.
    #[inline]
    fn parse_line_fast(input: &[u8]) -> Option<(IoDeviceStat, &[u8])> {
        let (major, Some(b':'), rest) = terminated_u64(input)? else { return None };
        let (minor, end, after) = terminated_u64(rest)?;
        let device = DeviceId { major: u32::try_from(major).ok()?, minor: u32::try_from(minor).ok()? };
        let mut out = IoDeviceStat::empty(device);
        // `rest` follows a separating space.
        let mut rest = match end {
            None | Some(b'\n') => return Some((out, after)),
            Some(b' ') => after,
            Some(_) => return None,
        };
        if let Some((counters, end, after)) = standard_counters(rest) {
            [out.rbytes, out.wbytes, out.rios, out.wios, out.dbytes, out.dios] = counters.map(Some);
            rest = match end {
                None | Some(b'\n') => return Some((out, after)),
                Some(b' ') => after,
                Some(_) => return None,
            };
        }
        loop {
            while let Some((b' ', next)) = rest.split_first() {
                rest = next;
            }
            match rest.split_first() {
                None => return Some((out, rest)),
                Some((b'\n', next)) => return Some((out, next)),
                Some(_) => {}
            }
            let (token, next) = rest.split_at_checked(token_end(rest))?;
            let eq = find_byte(b'=', token)?;
            let (key, value) = (token.get(..eq)?, token.get(eq.saturating_add(1)..)?);
            if key.is_empty() || !key.iter().all(|&b| is_key_byte(b)) {
                return None;
            }
            out.set(key, value).ok()?;
            // `next` starts at the byte that ended the token.
            rest = match next.split_first() {
                None => return Some((out, next)),
                Some((b'\n', after)) => return Some((out, after)),
                Some((_space, after)) => after,
            };
        }
    }

    /// Sets the field of sub-key `key` from `value`; unknown keys are
    /// ignored. Shared by the general and the fast path, so both convert
    /// every value the same way.
    #[inline]
    fn set(&mut self, key: &[u8], value: &[u8]) -> core::result::Result<(), ErrorKind> {
        match key {
            b"rbytes" => self.rbytes = Some(parse_u64(value)?),
            b"wbytes" => self.wbytes = Some(parse_u64(value)?),
            b"rios" => self.rios = Some(parse_u64(value)?),
            b"wios" => self.wios = Some(parse_u64(value)?),
            b"dbytes" => self.dbytes = Some(parse_u64(value)?),
            b"dios" => self.dios = Some(parse_u64(value)?),
            b"cost.vrate" => self.cost_vrate = Some(Hundredths::parse(value)?),
            b"cost.usage" => self.cost_usage_usec = Some(parse_u64(value)?),
            b"cost.wait" => self.cost_wait_usec = Some(parse_u64(value)?),
            b"cost.indebt" => self.cost_indebt_usec = Some(parse_u64(value)?),
            b"cost.indelay" => self.cost_indelay_usec = Some(parse_u64(value)?),
            b"use_delay" => self.use_delay = Some(parse_i64(value)?),
            b"delay_nsec" => self.delay_nsec = Some(parse_u64(value)?),
            b"depth" => self.iolat_depth = Some(Limit::parse_token(value)?),
            b"avg_lat" => self.iolat_avg_lat_usec = Some(parse_u64(value)?),
            b"win" => self.iolat_win_msec = Some(parse_u64(value)?),
            b"missed" => self.iolat_missed = Some(parse_u64(value)?),
            b"total" => self.iolat_total = Some(parse_u64(value)?),
            _ => {}
        }
        Ok(())
    }
}

/// `rbytes=N wbytes=N rios=N wios=N dbytes=N dios=N` at the start of
/// `bytes`, each value 1–19 plain digits (what `parse_u64` of the same token
/// gives), the byte that ended the last value and the input after it.
#[inline(always)]
fn standard_counters(bytes: &[u8]) -> Option<([u64; 6], Option<u8>, &[u8])> {
    // One value and the space after it.
    fn spaced(bytes: &[u8]) -> Option<(u64, &[u8])> {
        match terminated_u64(bytes)? {
            (value, Some(b' '), rest) => Some((value, rest)),
            _ => None,
        }
    }
    let (rbytes, rest) = spaced(after_literal(bytes, b"rbytes=")?)?;
    let (wbytes, rest) = spaced(after_literal(rest, b"wbytes=")?)?;
    let (rios, rest) = spaced(after_literal(rest, b"rios=")?)?;
    let (wios, rest) = spaced(after_literal(rest, b"wios=")?)?;
    let (dbytes, rest) = spaced(after_literal(rest, b"dbytes=")?)?;
    let (dios, end, rest) = terminated_u64(after_literal(rest, b"dios=")?)?;
    Some(([rbytes, wbytes, rios, wios, dbytes, dios], end, rest))
}

/// The length of the token at the start of `bytes`: up to a space or `\n`.
#[inline]
fn token_end(bytes: &[u8]) -> usize {
    find_either(b' ', b'\n', bytes).unwrap_or(bytes.len())
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

impl IoTotals {
    /// Adds the standard counters of one device; `None` on overflow.
    #[inline]
    fn add(&mut self, d: &IoDeviceStat) -> Option<()> {
        fn add(total: &mut Option<u64>, value: Option<u64>) -> Option<()> {
            if let Some(value) = value {
                *total = Some(total.unwrap_or(0).checked_add(value)?);
            }
            Some(())
        }
        add(&mut self.rbytes, d.rbytes)?;
        add(&mut self.wbytes, d.wbytes)?;
        add(&mut self.rios, d.rios)?;
        add(&mut self.wios, d.wios)?;
        add(&mut self.dbytes, d.dbytes)?;
        add(&mut self.dios, d.dios)
    }
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
        IoStat::parse_with(input, |_| {})
    }

    /// [`parse`](Self::parse), handing each device line to `each_device`
    /// as it is parsed (file order): the totals and every device in one
    /// pass, where `parse` + [`devices`](Self::devices) reads the file
    /// twice. On an error `each_device` may already have seen the lines
    /// before it; discard what it collected then.
    ///
    /// ```
    /// use stepmon_cgroupfs_parse::IoStat;
    /// let mut written = Vec::new();
    /// let io = IoStat::parse_with(b"8:0 rbytes=1 wbytes=2\n8:16 wbytes=5\n", |d| written.push(d.wbytes))?;
    /// assert_eq!((written, io.totals().wbytes), (vec![Some(2), Some(5)], Some(7)));
    /// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
    /// ```
    pub fn parse_with(input: &'a [u8], mut each_device: impl FnMut(IoDeviceStat)) -> Result<IoStat<'a>> {
        let mut totals = IoTotals::default();
        let mut devices = 0usize;
        let mut rest = input;
        // Line by line on the fast path; at the first line it declines (or
        // whose sum overflows), the general parser takes over from that line
        // and decides its value or says what is wrong where.
        while !rest.is_empty() {
            let Some((device, next)) = IoDeviceStat::parse_line_fast(rest) else { break };
            let mut sum = totals;
            if sum.add(&device).is_none() {
                break;
            }
            totals = sum;
            each_device(device);
            devices = devices.saturating_add(1);
            rest = next;
        }
        if !rest.is_empty() {
            // The lines the fast path took are lines the general parser takes too.
            for line in NestedKeyed::new(input).skip(devices) {
                let line = line?;
                let device = IoDeviceStat::parse_line(&line)?;
                totals.add(&device).ok_or(line.error(ErrorKind::Overflow))?;
                each_device(device);
                devices = devices.saturating_add(1);
            }
        }
        Ok(IoStat { input, totals, devices })
    }

    /// `parse` without error positions: `None` where `parse_general` fails,
    /// the same value where it succeeds (the fast path alone, for tests).
    #[cfg(test)]
    fn parse_fast(input: &'a [u8]) -> Option<IoStat<'a>> {
        let mut totals = IoTotals::default();
        let mut devices = 0usize;
        let mut rest = input;
        while !rest.is_empty() {
            let (device, next) = IoDeviceStat::parse_line_fast(rest)?;
            totals.add(&device)?;
            devices = devices.saturating_add(1);
            rest = next;
        }
        Some(IoStat { input, totals, devices })
    }

    /// The general parser alone (the reference in tests).
    #[cfg(test)]
    fn parse_general(input: &'a [u8]) -> Result<IoStat<'a>> {
        let mut totals = IoTotals::default();
        let mut devices = 0usize;
        for line in NestedKeyed::new(input) {
            let line = line?;
            totals.add(&IoDeviceStat::parse_line(&line)?).ok_or(line.error(ErrorKind::Overflow))?;
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
        // Validated by `parse`, so no line can fail here: each line takes
        // the fast path, or the general one where the fast path declines.
        let mut rest = self.input;
        core::iter::from_fn(move || {
            while !rest.is_empty() {
                if let Some((device, next)) = IoDeviceStat::parse_line_fast(rest) {
                    rest = next;
                    return Some(device);
                }
                let (line, next) = split_line(rest);
                rest = next;
                let general = NestedKeyed::new(line).next().and_then(|line| IoDeviceStat::parse_line(&line.ok()?).ok());
                if general.is_some() {
                    return general;
                }
            }
            None
        })
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
    fn fast_path_agrees_with_the_general_parser() {
        let inputs: [&[u8]; 14] = [
            b"8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6\n8:16 \n8:32  cost.usage=0\n",
            b"8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6 cost.vrate=100.00 depth=max use_delay=-1",
            b"8:0\n8:16 future=x\t\r x.y=-7  \n",
            b"8:0 rbytes=1\n\n8:16 \n",
            b"8:0 rbytes=18446744073709551615\n8:1 rbytes=1\n",
            b"8:0 rbytes=1\r\n",
            b"8:0 rbytes\n",
            b"8:0 =1\n",
            b"8:0 rb\xc3\xa4tes=1\n",
            b"8:0\trbytes=1\n",
            b"8:0 rbytes=1 rbytes=2\n",
            b"80 rbytes=1\n",
            b"8:0 cost.vrate=1.234\n",
            b"8:0 rbytes=1=2 \n",
        ];
        for input in inputs {
            let general = IoStat::parse_general(input);
            assert_eq!(IoStat::parse(input), general, "{}", String::from_utf8_lossy(input));
            if let Some(fast) = IoStat::parse_fast(input) {
                assert_eq!(Ok(fast), general, "{}", String::from_utf8_lossy(input));
            }
        }
        for i in [0, 1, 2, 10] {
            assert!(IoStat::parse_fast(inputs[i]).is_some(), "{}", String::from_utf8_lossy(inputs[i]));
        }
        // The kernel's layout (the six counters read as one pattern), cut
        // anywhere and with any byte replaced.
        let kernel: &[u8] = b"8:0 rbytes=1048576 wbytes=33554432 rios=16 wios=256 dbytes=0 dios=0\n8:16 \n\
            259:0 rbytes=2 wbytes=10000000000000000000 rios=4 wios=5 dbytes=6 dios=7\n\
            259:1 rbytes=2 wbytes=3 rios=4 wios=5 dbytes=6 dios=7 cost.usage=9\n";
        assert!(IoStat::parse_fast(kernel).is_some());
        // Miri interprets each of the ~2,000 parses; there the first line
        // and one substitute keep the run short.
        let (kernel, substitutes) = match kernel.iter().position(|&b| b == b'\n') {
            Some(end) if cfg!(miri) => (&kernel[..=end], &b"x"[..]),
            _ => (kernel, &b"09 \n\t=:x"[..]),
        };
        crate::testing::for_each_damaged(&mut kernel.to_vec(), substitutes, |input| {
            let general = IoStat::parse_general(input);
            assert_eq!(IoStat::parse(input), general, "{}", String::from_utf8_lossy(input));
            if let Some(fast) = IoStat::parse_fast(input) {
                assert_eq!(Ok(fast), general, "{}", String::from_utf8_lossy(input));
            }
        });
        // One pass hands over the same devices as the general parser, also
        // when the fast path gives up half-way (a tab, an overflow, a blank
        // line) and the general one takes over.
        let mixed: &[&[u8]] = &[
            b"8:0 rbytes=1\n8:16\trbytes=2\n8:32 rbytes=3\n",
            b"8:0 rbytes=18446744073709551615\n8:1 rbytes=1\n",
            b"8:0 rbytes=1\n\n8:16 wbytes=2\n",
            b"8:0 rbytes=1\n8:16 rbytes=x\n",
        ];
        for input in inputs.iter().chain(mixed) {
            let mut seen = Vec::new();
            let one_pass = IoStat::parse_with(input, |d| seen.push(d));
            let general = IoStat::parse_general(input);
            assert_eq!(one_pass, general, "{}", String::from_utf8_lossy(input));
            if let Ok(io) = general {
                assert_eq!(seen, io.devices().collect::<Vec<_>>(), "{}", String::from_utf8_lossy(input));
            }
        }
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
