//! One-pass scanning of the blank-separated columns of a procfs line.
//!
//! Why not `stepmon_cgroupfs_parse::lines::Fields` + `parse_u64`: that pair
//! walks every token twice (once to find its end, once to read its digits),
//! which showed in the profile of these parsers (`benches/README.md`,
//! "Figures behind code comments"). Here a blank run is skipped and the
//! digits are accumulated in the same forward loop. A token that is not a
//! plain 1–19 digit number followed by a blank or the end of the line (a sign, a `\r`,
//! 20 or more digits) goes to `parse_u64` on the whole token, so values and
//! errors are exactly those of the general parser.

use stepmon_cgroupfs_parse::lines::{Line, is_blank};
use stepmon_cgroupfs_parse::number::parse_u64;
use stepmon_cgroupfs_parse::scan::leading_u64;
use stepmon_cgroupfs_parse::{ErrorKind, Result};

/// A cursor over the fields of one [`Line`]: fields are separated by runs of
/// spaces or tabs, as for `Fields`; positions are indices within the line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Columns<'a> {
    line: Line<'a>,
    rest: &'a [u8],
}

impl<'a> Columns<'a> {
    /// The fields of `line` from its byte `at` on.
    #[inline]
    pub(crate) fn at(line: Line<'a>, at: usize) -> Self {
        Columns { line, rest: line.bytes.get(at..).unwrap_or_default() }
    }

    /// Index within the line of the first byte not consumed yet.
    #[inline]
    pub(crate) fn position(&self) -> usize {
        self.line.bytes.len().saturating_sub(self.rest.len())
    }

    #[inline(always)]
    fn skip_blanks(&mut self) {
        while let [b' ' | b'\t', tail @ ..] = self.rest {
            self.rest = tail;
        }
    }

    /// The next field and its index in the line; `None` at the end of the line.
    #[inline]
    pub(crate) fn next_field(&mut self) -> Option<(usize, &'a [u8])> {
        self.skip_blanks();
        if self.rest.is_empty() {
            return None;
        }
        let at = self.position();
        let len = self.rest.iter().position(|&b| is_blank(b)).unwrap_or(self.rest.len());
        let (field, rest) = self.rest.split_at_checked(len).unwrap_or((self.rest, &[]));
        self.rest = rest;
        Some((at, field))
    }

    /// The next field as a decimal `u64`; `Ok(None)` at the end of the line,
    /// an error located at the field's first byte if it is not a number.
    #[inline(always)]
    pub(crate) fn next_u64(&mut self) -> Result<Option<u64>> {
        self.skip_blanks();
        if let Some((value, rest)) = leading_u64(self.rest)
            && rest.first().is_none_or(|&b| is_blank(b))
        {
            self.rest = rest;
            return Ok(Some(value));
        }
        self.next_u64_general()
    }

    /// [`next_u64`](Self::next_u64) for everything but a plain short number:
    /// the end of the line, 20 digits, or an error.
    #[cold]
    #[inline(never)]
    fn next_u64_general(&mut self) -> Result<Option<u64>> {
        let Some((at, field)) = self.next_field() else { return Ok(None) };
        parse_u64(field).map(Some).map_err(|kind| self.line.error_at(kind, at))
    }

    /// The next field as a number; [`ErrorKind::MissingField`] at `missing_at`
    /// (an index in the line) if the line has no more fields.
    #[inline(always)]
    pub(crate) fn require_u64(&mut self, missing_at: usize) -> Result<u64> {
        match self.next_u64()? {
            Some(value) => Ok(value),
            None => Err(self.line.error_at(ErrorKind::MissingField, missing_at)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stepmon_cgroupfs_parse::lines::Fields;

    fn line(bytes: &[u8]) -> Line<'_> {
        Line { bytes, number: 3, start: 100 }
    }

    /// What `Fields` + `parse_u64` make of the same line.
    fn reference(bytes: &[u8]) -> Vec<core::result::Result<u64, (ErrorKind, usize)>> {
        Fields::new(bytes).map(|(at, f)| parse_u64(f).map_err(|kind| (kind, at + 100))).collect()
    }

    fn scanned(bytes: &[u8]) -> Vec<core::result::Result<u64, (ErrorKind, usize)>> {
        let mut cols = Columns::at(line(bytes), 0);
        let mut out = Vec::new();
        loop {
            match cols.next_u64() {
                Ok(Some(v)) => out.push(Ok(v)),
                Ok(None) => break,
                Err(e) => {
                    out.push(Err((e.kind, e.offset as usize)));
                    break;
                }
            }
        }
        out
    }

    #[test]
    fn agrees_with_fields_and_parse_u64() {
        for input in [
            &b""[..],
            b"   ",
            b"1",
            b" 1 22\t333  ",
            b"0 007 9999999999999999999",
            b"18446744073709551615 1",
            b"18446744073709551616 1",
            b"99999999999999999999999",
            b"1 -2",
            b"1 2x 3",
            b"1 x",
            b"4\r",
            b"5 \r",
            b"1\x002",
            b"\xff",
        ] {
            let want = reference(input);
            let got = scanned(input);
            // The reference keeps going after an error; the scanner stops there.
            let stop = want.iter().position(Result::is_err).map_or(want.len(), |i| i + 1);
            assert_eq!(got, want[..stop], "{input:?}");
        }
    }

    #[test]
    fn fields_positions_and_missing() {
        let mut cols = Columns::at(line(b"key  1\t2 rest"), 0);
        assert_eq!(cols.next_field(), Some((0, &b"key"[..])));
        assert_eq!(cols.position(), 3);
        assert_eq!(cols.require_u64(3), Ok(1));
        assert_eq!(cols.require_u64(3), Ok(2));
        assert_eq!(cols.next_field(), Some((9, &b"rest"[..])));
        let e = cols.require_u64(3).unwrap_err();
        assert_eq!((e.kind, e.line, e.offset), (ErrorKind::MissingField, 3, 103));
        assert_eq!(Columns::at(line(b"ab"), 7).next_field(), None);
    }
}
