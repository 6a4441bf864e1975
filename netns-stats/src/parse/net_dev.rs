//! `/proc/net/dev`: <https://docs.kernel.org/filesystems/proc.html#networking-info-in-proc-net>.
//!
//! Two header lines, then one line per device of the reader's network
//! namespace, printed by `dev_seq_printf_stats()` (`net/core/net-procfs.c`)
//! as `"%6s: %7llu %7llu ..."`:
//!
//! ```text
//! Inter-|   Receive                                                |  Transmit
//!  face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
//!     lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0       0          0
//! ```
//!
//! * The header text is not a contract (a 2021 change that renamed and widened
//!   it was reverted before release), so only the presence of two non-blank
//!   header lines is checked.
//! * Names are right-aligned in 6 columns; longer names (up to 15 bytes)
//!   push the line right and leave no leading blank.
//! * Very old kernels printed `"%6s:%8lu"`, so a long counter touches the
//!   colon (`ppp0:15475140`): the line is split at the **first** `:` (names
//!   cannot contain one) and then on runs of blanks.
//! * Columns after the 16th are ignored (none exist today; a future kernel
//!   adding some should not break readers).

use stepmon_cgroupfs_parse::lines::{Fields, Line, is_blank, split_line};
use stepmon_cgroupfs_parse::number::parse_u64;
use stepmon_cgroupfs_parse::{ErrorKind, ParseError, Result};

use super::counters::DevCounters;
use super::ifname::{MAX_NAME_LEN, validate_name};
use stepmon_cgroupfs_parse::scan::terminated_u64;

/// One device line of `/proc/net/dev`
/// (<https://docs.kernel.org/filesystems/proc.html#networking-info-in-proc-net>):
/// the name (borrowed from the input) and its counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Interface<'a> {
    /// Interface name without the alignment blanks and the `:`. Valid per
    /// the kernel's `dev_valid_name()` (see [`validate_name`]) but not
    /// necessarily UTF-8: the kernel accepts any other byte.
    pub name: &'a [u8],
    /// The 16 counters.
    pub counters: DevCounters,
}

impl<'a> Interface<'a> {
    /// The name as `&str`, or `None` if it is not UTF-8.
    #[must_use]
    pub fn name_str(&self) -> Option<&'a str> {
        core::str::from_utf8(self.name).ok()
    }

    /// Whether this is the loopback device. Every network namespace has one
    /// and the kernel names it `lo` (`loopback_net_init()`); it can be
    /// renamed, which nobody does in practice, so the name is what we go by.
    #[must_use]
    pub fn is_loopback(&self) -> bool {
        self.name == b"lo"
    }
}

/// Lazy, fallible iteration over the device lines of `/proc/net/dev`, spec:
/// <https://docs.kernel.org/filesystems/proc.html#networking-info-in-proc-net>.
///
/// [`NetDevLines::new`] checks the two header lines; each item is then one
/// device line or the first error (after which the iterator ends). Nothing
/// is allocated. Use [`NetDev::parse`] to validate everything up front.
///
/// ```
/// use stepmon_netns_stats::NetDevLines;
/// let input = b"h1\nh2\n  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n  bad:\n";
/// let mut lines = NetDevLines::new(input)?;
/// assert_eq!(lines.next().unwrap()?.counters.tx_compressed, 16);
/// let err = lines.next().unwrap().unwrap_err();
/// assert_eq!((err.kind, err.line), (stepmon_netns_stats::ErrorKind::MissingField, 4));
/// assert!(lines.next().is_none());
/// # Ok::<(), stepmon_netns_stats::ParseError>(())
/// ```
#[derive(Debug, Clone)]
pub struct NetDevLines<'a> {
    input: &'a [u8],
    /// The input after the last line read.
    rest: &'a [u8],
    /// Number of the last line read.
    number: usize,
}

impl<'a> NetDevLines<'a> {
    /// Checks that `input` starts with two non-blank header lines.
    ///
    /// An empty input is [`ErrorKind::Empty`]; fewer than two header lines,
    /// or a blank one, is [`ErrorKind::MissingHeader`] (a file cut short
    /// inside its header).
    pub fn new(input: &'a [u8]) -> Result<Self> {
        if input.is_empty() {
            return Err(ParseError::new(ErrorKind::Empty, 1, 0));
        }
        let mut rest = input;
        for number in 1..=2 {
            // Header lines are long: a vector scan rather than `split_line`,
            // whose SWAR scan of the first 64 bytes suits short lines.
            let (bytes, next) = match stepmon_cgroupfs_parse::lines::long_find_byte(b'\n', rest) {
                Some(at) => (rest.get(..at).unwrap_or_default(), rest.get(at.wrapping_add(1)..).unwrap_or_default()),
                None => (rest, &[][..]),
            };
            if rest.is_empty() {
                return Err(ParseError::new(ErrorKind::MissingHeader, number, input.len()));
            }
            if bytes.iter().all(|&b| is_blank(b)) {
                let start = input.len().saturating_sub(rest.len());
                return Err(ParseError::new(ErrorKind::MissingHeader, number, start));
            }
            rest = next;
        }
        Ok(NetDevLines { input, rest, number: 2 })
    }
}

impl<'a> Iterator for NetDevLines<'a> {
    type Item = Result<Interface<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        self.number = self.number.saturating_add(1);
        if let Some((interface, next)) = fast_line(self.rest) {
            self.rest = next;
            return Some(Ok(interface));
        }
        let start = self.input.len().saturating_sub(self.rest.len());
        let (bytes, next) = split_line(self.rest);
        let parsed = parse_line(&Line { bytes, number: self.number, start });
        // After an error the iteration ends (fused).
        self.rest = if parsed.is_ok() { next } else { &[] };
        Some(parsed)
    }
}

impl core::iter::FusedIterator for NetDevLines<'_> {}

/// The fast path (see `stepmon_cgroupfs_parse::scan`): one device line
/// exactly as `dev_seq_printf_stats()` prints it — right-aligned name, `:`,
/// 16 numbers padded with spaces, `\n` — and the input after it; `None`
/// for anything else, which [`parse_line`] then decides.
#[inline(always)]
fn fast_line(input: &[u8]) -> Option<(Interface<'_>, &[u8])> {
    let (name, mut rest) = fast_name(input)?;
    let mut columns = [0u64; DevCounters::COLUMNS];
    let (last, before) = columns.split_last_mut()?;
    // Each number hands over the byte that ended it: a space before the
    // next column, the line end after the 16th. No blank is needed after
    // the `:` (old kernels' `"%6s:%8lu"`).
    for column in before {
        let (value, end, after) = terminated_u64(skip_spaces(rest))?;
        *column = value;
        if end != Some(b' ') {
            return None;
        }
        rest = after;
    }
    let (value, end, after) = terminated_u64(skip_spaces(rest))?;
    *last = value;
    match end {
        Some(b'\n') | None => Some((Interface { name, counters: DevCounters::from_array(columns) }, after)),
        Some(_) => None,
    }
}

/// The right-aligned name at the start of a line and the input after its
/// `:`, or `None` for anything [`validate_name`] might refuse.
///
/// `"%6s:"` pads names shorter than 6 bytes and names have at most
/// [`MAX_NAME_LEN`] bytes, so the `:` is always among the line's first 16
/// bytes: they are read as one fixed window (no bounds check per byte).
/// The fast path takes only names of printable ASCII other than `/` (a
/// subset of what the kernel allows); any other byte goes to the general path.
#[inline(always)]
fn fast_name(input: &[u8]) -> Option<(&[u8], &[u8])> {
    let window = input.first_chunk::<{ MAX_NAME_LEN + 1 }>()?;
    let pad = window.iter().take_while(|&&b| b == b' ').count();
    let mut len: usize = 0;
    for &b in window.get(pad..)? {
        if b == b':' {
            let colon = pad.wrapping_add(len);
            let name = input.get(pad..colon)?;
            if len == 0 || name == b"." || name == b".." {
                return None;
            }
            return Some((name, input.get(colon.wrapping_add(1)..)?));
        }
        if !(b'!'..=b'~').contains(&b) || b == b'/' {
            return None;
        }
        len = len.wrapping_add(1);
    }
    None
}

/// `input` after its leading spaces (the column padding).
///
/// Up to seven spaces are counted at once in an eight-byte word (xor with
/// spaces, trailing zeros); longer runs (a `"%10llu"` column holding one
/// digit) and the last bytes of the input take the byte loop. Measured
/// against alternatives: the byte loop alone mispredicts more often; a
/// second word instead of the loop, a 64-byte space mask read once per
/// 48 bytes, and classifying whole 64-byte windows into digit masks were
/// all slower (more instructions, or a longer chain from one column's
/// position to the next).
#[inline(always)]
fn skip_spaces(mut input: &[u8]) -> &[u8] {
    if let Some(chunk) = input.first_chunk::<8>() {
        let spaces = (u64::from_le_bytes(*chunk) ^ 0x2020_2020_2020_2020).trailing_zeros() / 8;
        if spaces < 8 {
            return input.get(spaces as usize..).unwrap_or_default();
        }
    }
    while let [b' ', tail @ ..] = input {
        input = tail;
    }
    input
}

/// Parses one device line: `NAME: c1 c2 ... c16`.
fn parse_line<'a>(line: &Line<'a>) -> Result<Interface<'a>> {
    if line.bytes.is_empty() {
        return Err(line.error(ErrorKind::EmptyLine));
    }
    let (head, tail, tail_at) = line.split_once(b':').ok_or(line.error(ErrorKind::MissingSeparator))?;
    // Right-aligned name: skip the padding.
    let pad = head.iter().take_while(|&&b| is_blank(b)).count();
    let name = head.get(pad..).unwrap_or_default();
    validate_name(name).map_err(|(kind, at)| line.error_at(kind, pad.saturating_add(at)))?;

    let mut columns = [0u64; DevCounters::COLUMNS];
    let mut fields = Fields::new(tail);
    for column in &mut columns {
        let (at, token) = fields.next().ok_or(line.error_at(ErrorKind::MissingField, line.bytes.len()))?;
        *column = parse_u64(token).map_err(|kind| line.error_at(kind, tail_at.saturating_add(at)))?;
    }
    Ok(Interface { name, counters: DevCounters::from_array(columns) })
}

/// A validated `/proc/net/dev`, spec:
/// <https://docs.kernel.org/filesystems/proc.html#networking-info-in-proc-net>.
///
/// [`NetDev::parse`] checks every line (headers present, names valid per
/// `dev_valid_name()`, 16 decimal `u64` counters); afterwards
/// [`NetDev::interfaces`] walks the lines again, borrowing the input, without
/// any error to handle. Never allocates.
///
/// ```
/// use stepmon_netns_stats::NetDev;
/// // A 15-byte name pushes the line; an old kernel left no blank after ':'.
/// let dev = NetDev::parse(
///     b"Inter-|\n face |\nverylongname015: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n  ppp0:15475140 1 0 0 0 0 0 0 9 1 0 0 0 0 0 0\n",
/// )?;
/// let names: Vec<_> = dev.interfaces().map(|i| i.name_str().unwrap()).collect();
/// assert_eq!(names, ["verylongname015", "ppp0"]);
/// assert_eq!(dev.get(b"ppp0").unwrap().rx_bytes, 15_475_140);
/// # Ok::<(), stepmon_netns_stats::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetDev<'a> {
    input: &'a [u8],
    count: usize,
}

impl<'a> NetDev<'a> {
    /// Parses and validates the whole file.
    pub fn parse(input: &'a [u8]) -> Result<NetDev<'a>> {
        let mut count = 0usize;
        for interface in NetDevLines::new(input)? {
            interface?;
            count = count.saturating_add(1);
        }
        Ok(NetDev { input, count })
    }

    /// Number of device lines.
    #[must_use]
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there is no device line (never the case for a real file: every
    /// namespace has `lo`).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The device lines in file order (the kernel's device list order).
    #[must_use]
    pub fn interfaces(&self) -> Interfaces<'a> {
        Interfaces { lines: NetDevLines::new(self.input).ok() }
    }

    /// The counters of the first device named `name`.
    #[must_use]
    pub fn get(&self, name: &[u8]) -> Option<DevCounters> {
        self.interfaces().find(|i| i.name == name).map(|i| i.counters)
    }

    /// The input this was parsed from.
    #[must_use]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.input
    }
}

/// Iterator over the devices of a validated [`NetDev`].
#[derive(Debug, Clone)]
pub struct Interfaces<'a> {
    lines: Option<NetDevLines<'a>>,
}

impl<'a> Iterator for Interfaces<'a> {
    type Item = Interface<'a>;

    fn next(&mut self) -> Option<Interface<'a>> {
        // Validated by `NetDev::parse`, so no line can fail; stop if one did.
        self.lines.as_mut()?.next()?.ok()
    }
}

impl core::iter::FusedIterator for Interfaces<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n";

    fn err(input: &[u8]) -> (ErrorKind, u32, u32) {
        let e = NetDev::parse(input).unwrap_err();
        (e.kind, e.line, e.offset)
    }

    #[test]
    fn kernel_layout() {
        let input = format!(
            "{HEADER}    lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0       0          0\n"
        );
        let dev = NetDev::parse(input.as_bytes()).unwrap();
        let lo = dev.interfaces().next().unwrap();
        assert!(lo.is_loopback());
        assert_eq!(lo.counters.to_array(), [3193, 29, 0, 0, 0, 0, 0, 0, 3193, 29, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn header_errors() {
        assert_eq!(err(b""), (ErrorKind::Empty, 1, 0));
        assert_eq!(err(b"Inter-|   Rece"), (ErrorKind::MissingHeader, 2, 14));
        assert_eq!(err(b"Inter-|\n"), (ErrorKind::MissingHeader, 2, 8));
        assert_eq!(err(b"Inter-|\n  \n"), (ErrorKind::MissingHeader, 2, 8));
        assert_eq!(err(b"\nface\n"), (ErrorKind::MissingHeader, 1, 0));
        assert_eq!(NetDev::parse(b"h1\nh2").unwrap().len(), 0);
    }

    #[test]
    fn line_errors_carry_positions() {
        let h = HEADER.len() as u32;
        let body = |s: &str| format!("{HEADER}{s}");
        assert_eq!(err(body("  eth0: 4746").as_bytes()), (ErrorKind::MissingField, 3, h + 12));
        assert_eq!(err(body("  et").as_bytes()), (ErrorKind::MissingSeparator, 3, h));
        assert_eq!(err(body("\n").as_bytes()), (ErrorKind::EmptyLine, 3, h));
        assert_eq!(err(body("  e/0: 1").as_bytes()), (ErrorKind::InvalidKey, 3, h + 3));
        assert_eq!(err(body("    : 1").as_bytes()), (ErrorKind::InvalidKey, 3, h + 4));
        assert_eq!(
            err(body("  a b: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16").as_bytes()),
            (ErrorKind::InvalidKey, 3, h + 3)
        );
        assert_eq!(
            err(body("  a: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 -1").as_bytes()),
            (ErrorKind::InvalidNumber, 3, h + 41)
        );
        assert_eq!(
            err(body("  a: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 18446744073709551616").as_bytes()),
            (ErrorKind::Overflow, 3, h + 41)
        );
        assert_eq!(
            err(body("  a: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\r\n").as_bytes()),
            (ErrorKind::InvalidNumber, 3, h + 41)
        );
    }

    /// The device lines by the general path only (the specification).
    fn general(input: &[u8]) -> Vec<Result<Interface<'_>>> {
        let mut out = Vec::new();
        let mut rest = input;
        let mut number = 0;
        while !rest.is_empty() {
            number += 1;
            let (bytes, next) = split_line(rest);
            if number > 2 {
                let parsed = parse_line(&Line { bytes, number, start: input.len() - rest.len() });
                let stop = parsed.is_err();
                out.push(parsed);
                if stop {
                    break;
                }
            }
            rest = next;
        }
        out
    }

    #[test]
    fn fast_path_agrees_with_the_general_path() {
        let base = format!(
            "{HEADER}    lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0       0          0\n\
             verylongname015:18446744073709551615 1 0 0 0 0 0 0 9 1 0 0 0 0 0 0\n  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n\
             \x20\x20wg0: 99999999999999999999 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n     .: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n\
             \x20\x20\x20\x20..: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n    .x:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 1234567890123456789\n\
             \x20\x20a:b: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16"
        );
        let base = base.as_bytes();
        let body = HEADER.len();
        let check = |input: &[u8]| {
            if let Ok(lines) = NetDevLines::new(input) {
                assert_eq!(lines.collect::<Vec<_>>(), general(input), "{:?}", String::from_utf8_lossy(input));
            }
        };
        let substitutes =
            [b' ', b'\t', b'\n', b'0', b'9', b'x', b'\r', b'-', b':', b'/', 0, b'.', b'!', b'~', 0x7f, 0xa0];
        stepmon_cgroupfs_parse::testing::for_each_damaged_after(&mut base.to_vec(), body, &substitutes, check);
    }

    /// The kernel's layouts take the fast path (the differential test above
    /// would also pass if it never did).
    #[test]
    fn kernel_layouts_take_the_fast_path() {
        for line in [
            &b"    lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0       0          0\n"[..],
            b"  eth0: 176607927160 263201083    1   41    0     0          0      2433 86956161762 70984621    4    8    0     1       1          0",
            b"verylongname015:9999999999999999999 1 0 0 0 0 0 0 9 1 0 0 0 0 0 0\n",
            b"  ppp0:15475140 1 0 0 0 0 0 0 9 1 0 0 0 0 0 0\n",
        ] {
            let (fast, rest) = fast_line(line).unwrap_or_else(|| panic!("{:?}", String::from_utf8_lossy(line)));
            let general = parse_line(&Line { bytes: line.strip_suffix(b"\n").unwrap_or(line), number: 3, start: 0 });
            assert_eq!((Ok(fast), rest), (general, &b""[..]));
        }
    }

    #[test]
    fn extra_columns_are_ignored_and_lines_fuse() {
        let dev = NetDev::parse(b"h\nh\n a: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 x\n").unwrap();
        assert_eq!(dev.get(b"a").unwrap().tx_compressed, 16);
        let mut lines = NetDevLines::new(b"h\nh\nbad\n a: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n").unwrap();
        assert!(lines.next().unwrap().is_err());
        assert!(lines.next().is_none());
    }
}
