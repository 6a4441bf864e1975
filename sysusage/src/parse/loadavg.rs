//! `/proc/loadavg`: <https://docs.kernel.org/filesystems/proc.html#kernel-data>.

use stepmon_cgroupfs_parse::lines::{Fields, Lines};
use stepmon_cgroupfs_parse::number::{Hundredths, parse_u64};
use stepmon_cgroupfs_parse::{ErrorKind, ParseError, Result};

use stepmon_cgroupfs_parse::scan::{leading_hundredths, leading_u64};

/// `/proc/loadavg`: `L1 L5 L15 R/T P`, spec:
/// <https://docs.kernel.org/filesystems/proc.html#kernel-data>.
///
/// Load averages are exact fixed-point hundredths (the kernel prints two
/// decimals). Fields after the fifth are ignored; a second line is
/// [`ErrorKind::TrailingData`].
///
/// ```
/// use stepmon_sysusage::parse::LoadAvg;
/// let l = LoadAvg::parse(b"0.18 0.07 0.02 1/89 4687\n")?;
/// assert_eq!(l.load1.to_string(), "0.18");
/// assert_eq!((l.runnable, l.threads, l.last_pid), (1, 89, 4687));
/// # Ok::<(), stepmon_sysusage::parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct LoadAvg {
    /// 1-minute load average (runnable + uninterruptible threads).
    pub load1: Hundredths,
    /// 5-minute load average.
    pub load5: Hundredths,
    /// 15-minute load average.
    pub load15: Hundredths,
    /// Runnable threads right now (`R` of `R/T`).
    pub runnable: u64,
    /// All threads (`T` of `R/T`).
    pub threads: u64,
    /// The most recently allocated PID in the reader's PID namespace.
    pub last_pid: u64,
}

impl LoadAvg {
    /// A reading from its fields.
    #[must_use]
    pub fn new(load: [Hundredths; 3], runnable: u64, threads: u64, last_pid: u64) -> Self {
        let [load1, load5, load15] = load;
        LoadAvg { load1, load5, load15, runnable, threads, last_pid }
    }

    /// Parses the file. Never allocates.
    #[inline]
    pub fn parse(input: &[u8]) -> Result<Self> {
        match Self::parse_fast(input) {
            Some(parsed) => Ok(parsed),
            None => Self::parse_general(input),
        }
    }

    /// The line exactly as `loadavg_proc_show()` (`fs/proc/loadavg.c`) prints
    /// it, `"%lu.%02lu %lu.%02lu %lu.%02lu %u/%d %d\n"`, read in one forward
    /// pass; `None` for anything else, which [`parse_general`](Self::parse_general)
    /// decides (the fast path accepts only what it accepts, with the same values).
    #[inline(always)]
    fn parse_fast(input: &[u8]) -> Option<Self> {
        let (load1, rest) = leading_hundredths(input)?;
        let (load5, rest) = leading_hundredths(rest.strip_prefix(b" ")?)?;
        let (load15, rest) = leading_hundredths(rest.strip_prefix(b" ")?)?;
        let (runnable, rest) = leading_u64(rest.strip_prefix(b" ")?)?;
        let (threads, rest) = leading_u64(rest.strip_prefix(b"/")?)?;
        let (last_pid, rest) = leading_u64(rest.strip_prefix(b" ")?)?;
        matches!(rest, b"" | b"\n").then(|| LoadAvg::new([load1, load5, load15], runnable, threads, last_pid))
    }

    /// Any shape: lines and fields; decides every value and error.
    #[inline(never)]
    fn parse_general(input: &[u8]) -> Result<Self> {
        let mut lines = Lines::new(input);
        let line = lines.next().ok_or(ParseError::new(ErrorKind::Empty, 1, 0))?;
        if let Some(extra) = lines.next() {
            return Err(extra.error(ErrorKind::TrailingData));
        }
        let mut fields = Fields::new(line.bytes);
        let mut next = || fields.next().ok_or_else(|| line.error_at(ErrorKind::MissingField, line.bytes.len()));
        let mut load = [Hundredths(0); 3];
        for slot in &mut load {
            let (at, field) = next()?;
            *slot = Hundredths::parse(field).map_err(|kind| line.error_at(kind, at))?;
        }
        let (at, tasks) = next()?;
        let slash = stepmon_cgroupfs_parse::lines::find_byte(b'/', tasks)
            .ok_or_else(|| line.error_at(ErrorKind::MissingSeparator, at))?;
        let (runnable, threads) = tasks.split_at(slash);
        let runnable = parse_u64(runnable).map_err(|kind| line.error_at(kind, at))?;
        let threads_at = at.saturating_add(slash).saturating_add(1);
        let threads =
            parse_u64(threads.get(1..).unwrap_or_default()).map_err(|kind| line.error_at(kind, threads_at))?;
        let (at, pid) = next()?;
        let last_pid = parse_u64(pid).map_err(|kind| line.error_at(kind, at))?;
        Ok(LoadAvg::new(load, runnable, threads, last_pid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_locates_errors() {
        let l = LoadAvg::parse(b"12.50 7.00 100.01 4/1203 99 extra\n").unwrap();
        assert_eq!(l, LoadAvg::new([Hundredths(1250), Hundredths(700), Hundredths(10_001)], 4, 1203, 99));
        let err = |i: &[u8]| {
            let e = LoadAvg::parse(i).unwrap_err();
            (e.kind, e.line, e.offset)
        };
        assert_eq!(err(b""), (ErrorKind::Empty, 1, 0));
        assert_eq!(err(b"0.18 0.07"), (ErrorKind::MissingField, 1, 9));
        assert_eq!(err(b"0.18 0.07 0.02 189 4687\n"), (ErrorKind::MissingSeparator, 1, 15));
        assert_eq!(err(b"0.18 0.07 0.02 1/ 4687\n"), (ErrorKind::InvalidNumber, 1, 17));
        assert_eq!(err(b"0.18 0.07 0.02 1/89\n"), (ErrorKind::MissingField, 1, 19));
        assert_eq!(err(b"0.18 0.07 0.0x 1/89 1\n"), (ErrorKind::InvalidNumber, 1, 10));
        assert_eq!(err(b"0.18 0.07 0.02 1/89 1\nmore\n"), (ErrorKind::TrailingData, 2, 22));
    }

    #[test]
    fn fast_path_agrees_with_the_general_path() {
        let base = b"12.50 7.00 100.01 4/1203 99\n";
        let check = |input: &[u8]| assert_eq!(LoadAvg::parse(input), LoadAvg::parse_general(input), "{input:?}");
        check(b"9999999999999999.99 0.00 0.00 1/1 1");
        check(b"99999999999999999.99 0.00 0.00 1/1 1");
        check(b"184467440737095516.15 0.00 0.00 1/1 1");
        // The second has only `D.DD` loads, which the fast path reads as one pattern.
        for base in [&base[..], b"0.18 0.07 0.02 1/89 4687\n"] {
            stepmon_cgroupfs_parse::testing::for_each_damaged(&mut base.to_vec(), b" \t\n09x./\r", check);
            assert!(LoadAvg::parse_fast(base).is_some(), "the kernel's layout takes the fast path");
        }
    }
}
