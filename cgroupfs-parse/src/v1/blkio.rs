//! Block IO controller v1 statistics: the `blkio.throttle.io_service_bytes`
//! / `io_serviced` files (and `_recursive`), spec: "Throttling/Upper limit
//! policy files" of
//! <https://docs.kernel.org/admin-guide/cgroup-v1/blkio-controller.html#throttling-upper-limit-policy-files>.

use crate::error::{ErrorKind, Result};
use crate::format::ascii_key;
use crate::io::DeviceId;
use crate::lines::{Line, Lines};
use crate::number::parse_u64;

/// The operations of a `MAJ:MIN <op> N` line, as `__blkg_prfill_rwstat()`
/// (`block/blk-cgroup-rwstat.c`) prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Read,
    Write,
    Sync,
    Async,
    Discard,
    Total,
}

impl Op {
    fn from_name(name: &[u8]) -> Option<Op> {
        Some(match name {
            b"Read" => Op::Read,
            b"Write" => Op::Write,
            b"Sync" => Op::Sync,
            b"Async" => Op::Async,
            b"Discard" => Op::Discard,
            b"Total" => Op::Total,
            _ => return None,
        })
    }
}

/// The counters of one device: its `MAJ:MIN Read N`, `Write`, `Sync`,
/// `Async`, `Discard` and `Total` lines. Bytes in `io_service_bytes*`,
/// IOs (bios) in `io_serviced*`.
///
/// Each IO counts once by direction (`read`, `write` or `discard`) and once
/// by `sync`/`async_`; `total` is `read + write + discard` as the kernel
/// adds it. Kernels before 4.19 (≈) print no `Discard` line, and their
/// `Total` is `Read + Write`.
///
/// ```
/// use stepmon_cgroupfs_parse::v1::BlkioStat;
/// let io = BlkioStat::parse(b"254:0 Read 4096\n254:0 Write 512\n254:0 Total 4608\nTotal 4608\n")?;
/// let dev = io.devices().next().unwrap();
/// assert_eq!((dev.device.major, dev.read, dev.write, dev.discard), (254, Some(4096), Some(512), None));
/// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct BlkioDeviceStat {
    /// The device.
    pub device: DeviceId,
    /// Reads (v2 `io.stat` `rbytes` / `rios`).
    pub read: Option<u64>,
    /// Writes (v2 `wbytes` / `wios`).
    pub write: Option<u64>,
    /// Synchronous IOs, any direction.
    pub sync: Option<u64>,
    /// Asynchronous IOs, any direction (`Async`; `async` is a Rust keyword).
    pub async_: Option<u64>,
    /// Discards (v2 `dbytes` / `dios`). 4.19 (≈).
    pub discard: Option<u64>,
    /// The device's `Total` line.
    pub total: Option<u64>,
}

impl BlkioDeviceStat {
    fn empty(device: DeviceId) -> Self {
        BlkioDeviceStat { device, read: None, write: None, sync: None, async_: None, discard: None, total: None }
    }

    /// Sets one counter; a repeated operation overwrites (the last wins).
    fn set(&mut self, op: Op, value: u64) {
        let field = match op {
            Op::Read => &mut self.read,
            Op::Write => &mut self.write,
            Op::Sync => &mut self.sync,
            Op::Async => &mut self.async_,
            Op::Discard => &mut self.discard,
            Op::Total => &mut self.total,
        };
        *field = Some(value);
    }
}

/// The counters summed over all devices. A field is `Some` once any device
/// printed it, so a file without device lines (`Total 0` alone) gives all
/// `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct BlkioTotals {
    /// Reads.
    pub read: Option<u64>,
    /// Writes.
    pub write: Option<u64>,
    /// Synchronous IOs.
    pub sync: Option<u64>,
    /// Asynchronous IOs.
    pub async_: Option<u64>,
    /// Discards.
    pub discard: Option<u64>,
    /// The devices' `Total` lines.
    pub total: Option<u64>,
}

impl BlkioTotals {
    /// Adds one device; `None` on overflow.
    fn add(&mut self, d: &BlkioDeviceStat) -> Option<()> {
        fn add(total: &mut Option<u64>, value: Option<u64>) -> Option<()> {
            if let Some(value) = value {
                *total = Some(total.unwrap_or(0).checked_add(value)?);
            }
            Some(())
        }
        add(&mut self.read, d.read)?;
        add(&mut self.write, d.write)?;
        add(&mut self.sync, d.sync)?;
        add(&mut self.async_, d.async_)?;
        add(&mut self.discard, d.discard)?;
        add(&mut self.total, d.total)
    }
}

/// A v1 blkio statistics file: `blkio.throttle.io_service_bytes`,
/// `blkio.throttle.io_serviced` and their `_recursive` variants (the same
/// counters of this cgroup and its descendants), spec:
/// <https://docs.kernel.org/admin-guide/cgroup-v1/blkio-controller.html#throttling-upper-limit-policy-files>.
/// The CFQ (`blkio.io_service_bytes`, ...) and BFQ (`blkio.bfq.*`) files
/// print the same layout.
///
/// Lines are `MAJ:MIN <op> N` (`<op>` one of `Read`, `Write`, `Sync`,
/// `Async`, `Discard`, `Total`), a device's lines one after the other, and a
/// last line `Total N` (the sum of the devices' `Total`). An unknown `<op>`
/// is skipped (its value is not parsed); a line after `Total N` is
/// [`ErrorKind::TrailingData`].
///
/// [`BlkioStat::parse`] validates the file and sums the devices;
/// [`BlkioStat::devices`] walks the devices again, borrowing the input.
///
/// ```
/// use stepmon_cgroupfs_parse::v1::BlkioStat;
/// let io = BlkioStat::parse(b"8:0 Read 10\n8:0 Write 2\n8:0 Total 12\n8:16 Read 5\n8:16 Total 5\nTotal 17\n")?;
/// assert_eq!((io.totals().read, io.totals().write, io.device_count(), io.total_line()), (Some(15), Some(2), 2, Some(17)));
/// assert_eq!(BlkioStat::parse(b"Total 0\n")?.device_count(), 0);
/// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlkioStat<'a> {
    input: &'a [u8],
    totals: BlkioTotals,
    devices: usize,
    total_line: Option<u64>,
}

impl<'a> BlkioStat<'a> {
    /// Parses and validates the whole file.
    pub fn parse(input: &'a [u8]) -> Result<BlkioStat<'a>> {
        let mut walk = Walk::new(input);
        let mut totals = BlkioTotals::default();
        let mut devices = 0usize;
        while let Some(device) = walk.next_device() {
            let (device, first_line) = device?;
            totals.add(&device).ok_or(first_line.error(ErrorKind::Overflow))?;
            devices = devices.saturating_add(1);
        }
        Ok(BlkioStat { input, totals, devices, total_line: walk.total_line })
    }

    /// The counters summed over all devices.
    #[must_use]
    pub fn totals(&self) -> BlkioTotals {
        self.totals
    }

    /// The value of the last line, `Total N`, if the file has one.
    #[must_use]
    pub fn total_line(&self) -> Option<u64> {
        self.total_line
    }

    /// Number of devices (runs of lines of one device).
    #[must_use]
    pub fn device_count(&self) -> usize {
        self.devices
    }

    /// The devices in file order.
    #[must_use]
    pub fn devices(&self) -> BlkioDevices<'a> {
        BlkioDevices { walk: Walk::new(self.input) }
    }

    /// The counters of one device (its first run of lines), if present.
    #[must_use]
    pub fn device(&self, device: DeviceId) -> Option<BlkioDeviceStat> {
        self.devices().find(|d| d.device == device)
    }
}

/// Iterator over the devices of a validated [`BlkioStat`], in file order.
#[derive(Debug, Clone)]
pub struct BlkioDevices<'a> {
    walk: Walk<'a>,
}

impl Iterator for BlkioDevices<'_> {
    type Item = BlkioDeviceStat;

    fn next(&mut self) -> Option<BlkioDeviceStat> {
        // The input was validated by `BlkioStat::parse`: no line fails here.
        self.walk.next_device()?.ok().map(|(device, _)| device)
    }
}

impl core::iter::FusedIterator for BlkioDevices<'_> {}

/// One parsed line.
enum Parsed {
    /// `MAJ:MIN <op> N`; `None` for an unknown `<op>`.
    Counter(DeviceId, Option<(Op, u64)>),
    /// The last line, `Total N`.
    Total(u64),
}

/// The line walk shared by validation and iteration: groups the lines of a
/// device into one [`BlkioDeviceStat`].
#[derive(Debug, Clone)]
struct Walk<'a> {
    lines: Lines<'a>,
    /// The device being collected and its first line.
    current: Option<(BlkioDeviceStat, Line<'a>)>,
    total_line: Option<u64>,
}

impl<'a> Walk<'a> {
    fn new(input: &'a [u8]) -> Self {
        Walk { lines: Lines::new(input), current: None, total_line: None }
    }

    /// The next device and its first line, or the first error (after which
    /// the walk ends).
    fn next_device(&mut self) -> Option<Result<(BlkioDeviceStat, Line<'a>)>> {
        loop {
            let Some(line) = self.lines.next() else { return self.current.take().map(Ok) };
            let (device, counter) = match self.parse_line(line) {
                Ok(Parsed::Counter(device, counter)) => (device, counter),
                Ok(Parsed::Total(value)) => {
                    self.total_line = Some(value);
                    continue;
                }
                Err(err) => {
                    self.lines.finish();
                    self.current = None;
                    return Some(Err(err));
                }
            };
            let finished = match &mut self.current {
                Some((stat, _)) if stat.device == device => None,
                _ => self.current.replace((BlkioDeviceStat::empty(device), line)),
            };
            if let (Some((stat, _)), Some((op, value))) = (&mut self.current, counter) {
                stat.set(op, value);
            }
            if let Some(finished) = finished {
                return Some(Ok(finished));
            }
        }
    }

    fn parse_line(&self, line: Line<'a>) -> Result<Parsed> {
        if self.total_line.is_some() {
            return Err(line.error(ErrorKind::TrailingData));
        }
        if line.bytes.is_empty() {
            return Err(line.error(ErrorKind::EmptyLine));
        }
        let (first, rest, rest_at) = line.split_once(b' ').ok_or(line.error(ErrorKind::MissingSeparator))?;
        if first == b"Total" {
            return parse_u64(rest).map(Parsed::Total).map_err(|kind| line.error_at(kind, rest_at));
        }
        let device = DeviceId::parse(first).map_err(|kind| line.error(kind))?;
        let rest_line = Line { bytes: rest, number: line.number, start: line.start.saturating_add(rest_at) };
        let (op, value, value_at) = rest_line.split_once(b' ').ok_or(rest_line.error(ErrorKind::MissingField))?;
        let op_name = ascii_key(op).map_err(|kind| rest_line.error(kind))?;
        if value.is_empty() {
            return Err(rest_line.error_at(ErrorKind::InvalidNumber, value_at));
        }
        let counter = match Op::from_name(op_name.as_bytes()) {
            Some(op) => Some((op, parse_u64(value).map_err(|kind| rest_line.error_at(kind, value_at))?)),
            None => None,
        };
        Ok(Parsed::Counter(device, counter))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ParseError;

    fn loc(e: ParseError) -> (ErrorKind, u32, u32) {
        (e.kind, e.line, e.offset)
    }

    #[test]
    fn devices_totals_and_the_total_line() {
        let input = b"8:0 Read 1\n8:0 Write 2\n8:0 Sync 3\n8:0 Async 0\n8:0 Discard 4\n8:0 Total 7\n\
                      8:16 Read 10\n8:16 Total 10\nTotal 17\n";
        let io = BlkioStat::parse(input).unwrap();
        assert_eq!(io.device_count(), 2);
        assert_eq!(io.total_line(), Some(17));
        let t = io.totals();
        assert_eq!(
            (t.read, t.write, t.sync, t.async_, t.discard, t.total),
            (Some(11), Some(2), Some(3), Some(0), Some(4), Some(17))
        );
        let devices: std::vec::Vec<_> = io.devices().collect();
        assert_eq!(devices.len(), 2);
        assert_eq!(devices[1].device, DeviceId { major: 8, minor: 16 });
        assert_eq!((devices[1].read, devices[1].write), (Some(10), None));
        assert_eq!(io.device(DeviceId { major: 8, minor: 0 }).unwrap().discard, Some(4));
        assert_eq!(io.device(DeviceId { major: 9, minor: 0 }), None);
    }

    #[test]
    fn oddities() {
        // No final Total line, no trailing newline, an unknown op (value not
        // parsed), a repeated op (last wins).
        let io = BlkioStat::parse(b"8:0 Read 1\n8:0 Future x\n8:0 Read 5").unwrap();
        assert_eq!((io.totals().read, io.total_line(), io.device_count()), (Some(5), None, 1));
        // A device that comes back after another is a second entry.
        let io = BlkioStat::parse(b"8:0 Read 1\n8:16 Read 2\n8:0 Read 4\n").unwrap();
        assert_eq!((io.device_count(), io.totals().read), (3, Some(7)));
        assert_eq!(io.device(DeviceId { major: 8, minor: 0 }).unwrap().read, Some(1));
        let empty = BlkioStat::parse(b"").unwrap();
        assert_eq!((empty.device_count(), empty.totals(), empty.total_line()), (0, BlkioTotals::default(), None));
    }

    #[test]
    fn errors_are_located() {
        use ErrorKind::*;
        let parse = |input: &[u8]| BlkioStat::parse(input).map(|_| ()).map_err(loc);
        assert_eq!(parse(b"Total 1\n8:0 Read 1\n"), Err((TrailingData, 2, 8)));
        assert_eq!(parse(b"Total 1\nTotal 1\n"), Err((TrailingData, 2, 8)));
        assert_eq!(parse(b"8:0 Read 1\n\n"), Err((EmptyLine, 2, 11)));
        assert_eq!(parse(b"8:0\n"), Err((MissingSeparator, 1, 0)));
        assert_eq!(parse(b"8:0 Read\n"), Err((MissingField, 1, 4)));
        assert_eq!(parse(b"8:0 Read \n"), Err((InvalidNumber, 1, 9)));
        assert_eq!(parse(b"8:0 Read x\n"), Err((InvalidNumber, 1, 9)));
        assert_eq!(parse(b"8:0  Read 1\n"), Err((InvalidKey, 1, 4)));
        assert_eq!(parse(b"8:0 Read 1\r\n"), Err((InvalidNumber, 1, 9)));
        assert_eq!(parse(b"80 Read 1\n"), Err((InvalidField, 1, 0)));
        assert_eq!(parse(b"8:x Read 1\n"), Err((InvalidNumber, 1, 0)));
        assert_eq!(parse(b"Total x\n"), Err((InvalidNumber, 1, 6)));
        assert_eq!(parse(b"8:0 Read 18446744073709551616\n"), Err((Overflow, 1, 9)));
        let max = u64::MAX;
        let sum = std::format!("8:0 Read {max}\n8:0 Write 1\n8:16 Read 1\n");
        let third_line = u32::try_from(sum.find("8:16").unwrap()).unwrap();
        assert_eq!(parse(sum.as_bytes()), Err((Overflow, 3, third_line)));
    }
}
