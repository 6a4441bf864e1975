//! The PSI line format: <https://docs.kernel.org/accounting/psi.html#pressure-interface>.

use stepmon_cgroupfs_parse::Result;
use stepmon_cgroupfs_parse::format::nested::NestedKeyed;
use stepmon_cgroupfs_parse::number::{Hundredths, parse_u64};
use stepmon_cgroupfs_parse::scan::{after_literal, leading_hundredths, terminated_u64};

/// One `some` or `full` line, spec:
/// <https://docs.kernel.org/accounting/psi.html#pressure-interface>.
///
/// Each field is `None` only if the kernel did not print it (it always
/// prints all four today).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct PressureLine {
    /// Share of the last 10 s with stalls, percent (may slightly exceed 100).
    pub avg10: Option<Hundredths>,
    /// Share of the last 60 s, percent.
    pub avg60: Option<Hundredths>,
    /// Share of the last 300 s, percent.
    pub avg300: Option<Hundredths>,
    /// Cumulative stall time, µs (monotonic, except after `cgroup.pressure` 0→1).
    pub total_usec: Option<u64>,
}

impl PressureLine {
    /// A line with every field set.
    #[must_use]
    pub fn new(avg10: Hundredths, avg60: Hundredths, avg300: Hundredths, total_usec: u64) -> Self {
        PressureLine { avg10: Some(avg10), avg60: Some(avg60), avg300: Some(avg300), total_usec: Some(total_usec) }
    }
}

/// A whole PSI file, spec: <https://docs.kernel.org/accounting/psi.html#pressure-interface>
/// (cgroup files: <https://docs.kernel.org/accounting/psi.html#cgroup2-interface>).
///
/// `some` and `full` are each optional: cpu files had no `full` line before
/// 5.13, `irq` files have only `full`. Unknown line prefixes and unknown
/// `key=value` tokens are ignored; malformed values are errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct Pressure {
    /// At least one task stalled.
    pub some: Option<PressureLine>,
    /// All non-idle tasks stalled at once.
    pub full: Option<PressureLine>,
}

impl Pressure {
    /// A reading from its two lines.
    #[must_use]
    pub fn new(some: Option<PressureLine>, full: Option<PressureLine>) -> Self {
        Pressure { some, full }
    }

    /// Parses a PSI file. Never allocates.
    pub fn parse(input: &[u8]) -> Result<Pressure> {
        // The fast path takes files exactly as the kernel prints them; on
        // anything else (every error included) the general parser runs and
        // says what is wrong where.
        match Pressure::parse_kernel_layout(input) {
            Some(out) => Ok(out),
            None => Pressure::parse_general(input),
        }
    }

    /// `parse` for the layout the kernel prints (`psi_show()` in
    /// `kernel/sched/psi.c`): lines of exactly
    /// `some|full avg10=A avg60=A avg300=A total=N`, single spaces, ending
    /// in `\n` or the end of the input. `None` on any deviation, even a
    /// valid one (other keys, order or spacing); the general parser then
    /// decides. Where it returns a value, the general parser returns the
    /// same: each value is the whole token between `=` and the next space
    /// (or line end) and goes through the same conversion.
    #[inline]
    fn parse_kernel_layout(input: &[u8]) -> Option<Pressure> {
        let mut out = Pressure::default();
        let mut rest = input;
        while !rest.is_empty() {
            let (slot, pairs) = match rest.split_at_checked(5)? {
                (b"some ", pairs) => (&mut out.some, pairs),
                (b"full ", pairs) => (&mut out.full, pairs),
                _ => return None,
            };
            let (line, next) = kernel_layout_line(pairs)?;
            *slot = Some(line);
            rest = next;
        }
        Some(out)
    }

    /// The general parser, the one that reports errors.
    fn parse_general(input: &[u8]) -> Result<Pressure> {
        let mut out = Pressure::default();
        for line in NestedKeyed::new(input) {
            let line = line?;
            let slot = match line.key {
                "some" => &mut out.some,
                "full" => &mut out.full,
                _ => continue,
            };
            let mut values = PressureLine::default();
            for pair in line.pairs() {
                let pair = pair?;
                match pair.key {
                    "avg10" => values.avg10 = Some(pair.convert(Hundredths::parse)?),
                    "avg60" => values.avg60 = Some(pair.convert(Hundredths::parse)?),
                    "avg300" => values.avg300 = Some(pair.convert(Hundredths::parse)?),
                    "total" => values.total_usec = Some(pair.convert(parse_u64)?),
                    _ => {}
                }
            }
            *slot = Some(values);
        }
        Ok(out)
    }
}

/// The pairs of a kernel-printed line, `avg10=A avg60=A avg300=A total=N`,
/// at the start of `pairs`, and the input after the line: read in one
/// forward pass with the scanners of [`stepmon_cgroupfs_parse::scan`]. Each
/// value it accepts is a whole token (followed by the single space or the
/// line's end) that the general parser converts to the same number.
#[inline]
fn kernel_layout_line(pairs: &[u8]) -> Option<(PressureLine, &[u8])> {
    let (avg10, rest) = leading_hundredths(after_literal(pairs, b"avg10=")?)?;
    let (avg60, rest) = leading_hundredths(after_literal(rest, b" avg60=")?)?;
    let (avg300, rest) = leading_hundredths(after_literal(rest, b" avg300=")?)?;
    let (total, end, next) = terminated_u64(after_literal(rest, b" total=")?)?;
    matches!(end, None | Some(b'\n')).then_some((PressureLine::new(avg10, avg60, avg300, total), next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use stepmon_cgroupfs_parse::ErrorKind;

    #[test]
    fn line_variants() {
        let cpu_old = Pressure::parse(b"some avg10=0.12 avg60=0.00 avg300=0.00 total=5\n").unwrap();
        assert!(cpu_old.some.is_some() && cpu_old.full.is_none());
        let irq = Pressure::parse(b"full avg10=0.00 avg60=0.00 avg300=0.00 total=9").unwrap();
        assert_eq!((irq.some, irq.full.unwrap().total_usec), (None, Some(9)));
        let partial = Pressure::parse(b"some total=7 future=1.5\n").unwrap().some.unwrap();
        assert_eq!((partial.avg10, partial.total_usec), (None, Some(7)));
        assert_eq!(Pressure::parse(b"").unwrap(), Pressure::default());
        let swapped = Pressure::parse(
            b"full avg10=1.00 avg60=0.00 avg300=0.00 total=2\nsome avg10=2.00 avg60=0.00 avg300=0.00 total=3\n",
        )
        .unwrap();
        assert_eq!(swapped.some.unwrap().total_usec, Some(3));
        assert_eq!(Pressure::parse(b"other x=y\n").unwrap(), Pressure::default());
    }

    #[test]
    fn fast_path_agrees_with_the_general_parser() {
        let inputs: [&[u8]; 14] = [
            b"some avg10=3.00 avg60=1.16 avg300=0.60 total=3220079\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
            b"some avg10=100.00 avg60=12.34 avg300=1.5 total=18446744073709551615",
            b"some avg10=1 2  avg60=0.00 avg300=0.00 total=1\n",
            b"some avg10=1.0 avg60=1 1 avg300=0.00 total=1\n",
            b"some avg10=0.00 avg60=0.00 avg300=0.00 total=1 \n",
            b"some avg10=0.00 avg60=0.00 avg300=0.00 total=1\r\n",
            b"some avg10=0.00\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",
            b"some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n\n",
            b"some avg10=0.00 avg60=0.00 avg300=0.00 total=\n",
            b"some  avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",
            b"full avg10=0.00 avg60=0.00 avg300=0.00 total=2\nsome avg10=0.00 avg60=0.00 avg300=0.00 total=1",
            b"some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nsome avg10=0.01 avg60=0.00 avg300=0.00 total=2\n",
            b"some avg10=184467440737095516.16 avg60=0.00 avg300=0.00 total=1\n",
            b"some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551616\n",
        ];
        for input in inputs {
            let general = Pressure::parse_general(input);
            assert_eq!(Pressure::parse(input), general, "{}", String::from_utf8_lossy(input));
            if let Some(fast) = Pressure::parse_kernel_layout(input) {
                assert_eq!(Ok(fast), general);
            }
        }
        assert!(Pressure::parse_kernel_layout(inputs[0]).is_some(), "the kernel's layout takes the fast path");
    }

    #[test]
    fn errors() {
        let kind = |i: &[u8]| Pressure::parse(i).unwrap_err().kind;
        assert_eq!(kind(b"some avg10=1.234 total=1\n"), ErrorKind::InvalidNumber);
        assert_eq!(kind(b"some avg10=0.00 total=-1\n"), ErrorKind::InvalidNumber);
        assert_eq!(kind(b"some total=18446744073709551616\n"), ErrorKind::Overflow);
        assert_eq!(kind(b"some avg10\n"), ErrorKind::MissingSeparator);
        assert_eq!(kind(b"some total=1\r\n"), ErrorKind::InvalidNumber);
        assert_eq!(kind(b"\n"), ErrorKind::EmptyLine);
        let e = Pressure::parse(b"some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nfull avg10=x").unwrap_err();
        assert_eq!((e.line, e.offset), (2, 58));
    }
}
