//! Nested keyed files, `KEY SUB=VAL SUB=VAL ...` per line (e.g. `io.stat`,
//! PSI files): <https://docs.kernel.org/admin-guide/cgroup-v2.html#format>.
//!
//! Sub-keys may be missing, added or reordered; empty tokens (the double
//! space `io.stat` prints before policy stats) are skipped.

use crate::error::{ErrorKind, ParseError, Result};
use crate::lines::{Line, Lines};

/// One line of a nested keyed file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NestedLine<'a> {
    /// The line key (`MAJ:MIN`, `some`, `full`, ...).
    pub key: &'a str,
    line: Line<'a>,
    rest_at: usize,
}

impl<'a> NestedLine<'a> {
    /// 1-based line number.
    #[must_use]
    pub fn line(&self) -> usize {
        self.line.number
    }

    /// An error located at the start of this line.
    #[must_use]
    pub fn error(&self, kind: ErrorKind) -> ParseError {
        self.line.error(kind)
    }

    /// The `SUB=VAL` pairs of the line.
    #[must_use]
    pub fn pairs(&self) -> NestedPairs<'a> {
        NestedPairs { line: self.line, pos: self.rest_at }
    }
}

/// One `SUB=VAL` pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NestedPair<'a> {
    /// The sub-key.
    pub key: &'a str,
    /// The raw value bytes.
    pub value: &'a [u8],
    /// 1-based line number.
    pub line: usize,
    /// Byte offset of the value from the start of the input.
    pub value_offset: usize,
}

impl NestedPair<'_> {
    /// The value as a `u64`.
    #[inline]
    pub fn value_u64(&self) -> Result<u64> {
        self.convert(crate::number::parse_u64)
    }

    /// Converts the value with `convert`, locating any error at the value.
    #[inline]
    pub fn convert<T>(&self, convert: impl FnOnce(&[u8]) -> core::result::Result<T, ErrorKind>) -> Result<T> {
        convert(self.value).map_err(|kind| ParseError::new(kind, self.line, self.value_offset))
    }
}

/// Iterator over the `SUB=VAL` pairs of one line. Stops after the first error.
#[derive(Debug, Clone)]
pub struct NestedPairs<'a> {
    line: Line<'a>,
    pos: usize,
}

impl<'a> Iterator for NestedPairs<'a> {
    type Item = Result<NestedPair<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.line.bytes;
        // Skip empty tokens (runs of single spaces).
        while bytes.get(self.pos) == Some(&b' ') {
            self.pos = self.pos.saturating_add(1);
        }
        let rest = bytes.get(self.pos..).filter(|r| !r.is_empty())?;
        let start = self.pos;
        let len = crate::lines::find_byte(b' ', rest).unwrap_or(rest.len());
        let token = rest.get(..len).unwrap_or_default();
        self.pos = start.saturating_add(len);
        let pair = match crate::lines::find_byte(b'=', token) {
            None => Err(self.line.error_at(ErrorKind::MissingSeparator, start)),
            Some(eq) => {
                let (key, value) =
                    (token.get(..eq).unwrap_or_default(), token.get(eq.saturating_add(1)..).unwrap_or_default());
                match super::ascii_key(key) {
                    Err(kind) => Err(self.line.error_at(kind, start)),
                    Ok(key) => {
                        let value_at = start.saturating_add(eq).saturating_add(1);
                        Ok(NestedPair {
                            key,
                            value,
                            line: self.line.number,
                            value_offset: self.line.start.saturating_add(value_at),
                        })
                    }
                }
            }
        };
        if pair.is_err() {
            self.pos = bytes.len();
        }
        Some(pair)
    }
}

impl core::iter::FusedIterator for NestedPairs<'_> {}

/// Iterator over the lines of a nested keyed file. Validates each line's key
/// only; pairs are checked when iterated. Stops after the first error.
///
/// ```
/// use stepmon_cgroupfs_parse::format::nested::NestedKeyed;
/// let line = NestedKeyed::new(b"8:0 rbytes=4096 wbytes=0\n").next().unwrap().unwrap();
/// assert_eq!(line.key, "8:0");
/// let pairs: Vec<_> = line.pairs().map(|p| p.unwrap().key).collect();
/// assert_eq!(pairs, ["rbytes", "wbytes"]);
/// ```
#[derive(Debug, Clone)]
pub struct NestedKeyed<'a> {
    lines: Lines<'a>,
}

impl<'a> NestedKeyed<'a> {
    /// Lines of `input`.
    #[must_use]
    pub fn new(input: &'a [u8]) -> Self {
        NestedKeyed { lines: Lines::new(input) }
    }
}

impl<'a> Iterator for NestedKeyed<'a> {
    type Item = Result<NestedLine<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let line = self.lines.next()?;
        let (key, rest_at) = match line.split_once(b' ') {
            Some((key, _, rest_at)) => (key, rest_at),
            // A key alone on its line: no pairs.
            None => (line.bytes, line.bytes.len()),
        };
        let parsed = if line.bytes.is_empty() {
            Err(line.error(ErrorKind::EmptyLine))
        } else {
            super::ascii_key(key).map(|key| NestedLine { key, line, rest_at }).map_err(|kind| line.error(kind))
        };
        if parsed.is_err() {
            self.lines.finish();
        }
        Some(parsed)
    }
}

impl core::iter::FusedIterator for NestedKeyed<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_tolerate_double_spaces_and_bare_keys() {
        let lines: Vec<_> = NestedKeyed::new(b"8:0 \n8:16  cost.usage=5\n253:0").map(Result::unwrap).collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0].pairs().count(), 0);
        let p: Vec<_> = lines[1].pairs().map(Result::unwrap).collect();
        assert_eq!((p[0].key, p[0].value, p[0].value_offset), ("cost.usage", &b"5"[..], 22));
        assert_eq!(lines[2].key, "253:0");
        assert_eq!(lines[2].pairs().count(), 0);
    }

    #[test]
    fn malformed() {
        let line = NestedKeyed::new(b"8:0 rbytes\n").next().unwrap().unwrap();
        assert_eq!(line.pairs().next().unwrap().unwrap_err().kind, ErrorKind::MissingSeparator);
        let line = NestedKeyed::new(b"8:0 =1\n").next().unwrap().unwrap();
        assert_eq!(line.pairs().next().unwrap().unwrap_err().kind, ErrorKind::InvalidKey);
        assert_eq!(NestedKeyed::new(b"\n").next().unwrap().unwrap_err().kind, ErrorKind::EmptyLine);
        assert_eq!(NestedKeyed::new(b"\r x=1\n").next().unwrap().unwrap_err().kind, ErrorKind::InvalidKey);
    }
}
