//! Line and field splitting shared by every parser: positions are tracked so
//! errors can say where they happened.

use crate::error::{ErrorKind, ParseError};

/// One line of input, without its `\n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// The bytes of the line, without the terminating `\n`.
    pub bytes: &'a [u8],
    /// 1-based line number.
    pub number: usize,
    /// Byte offset of the line's first byte from the start of the input.
    pub start: usize,
}

impl<'a> Line<'a> {
    /// An error located at byte `index` of this line.
    #[must_use]
    pub fn error_at(&self, kind: ErrorKind, index: usize) -> ParseError {
        ParseError::new(kind, self.number, self.start.saturating_add(index))
    }

    /// An error located at the start of this line.
    #[must_use]
    pub fn error(&self, kind: ErrorKind) -> ParseError {
        self.error_at(kind, 0)
    }

    /// Splits the line at the first `sep`, returning the part before it, the
    /// part after it and the index (within the line) where the part after starts.
    #[must_use]
    pub fn split_once(&self, sep: u8) -> Option<(&'a [u8], &'a [u8], usize)> {
        let at = memchr::memchr(sep, self.bytes)?;
        let (head, tail) = self.bytes.split_at(at);
        // `tail` starts with `sep`; skipping it cannot fail.
        let tail = tail.get(1..).unwrap_or_default();
        Some((head, tail, at.saturating_add(1)))
    }
}

/// Iterator over the `\n`-terminated lines of an input. A final line without
/// `\n` is yielded as well (captures and test data often lack it); an empty
/// input yields no line at all.
#[derive(Debug, Clone)]
pub struct Lines<'a> {
    rest: &'a [u8],
    start: usize,
    number: usize,
}

impl<'a> Lines<'a> {
    /// Lines of `input`.
    #[must_use]
    pub fn new(input: &'a [u8]) -> Self {
        Lines { rest: input, start: 0, number: 0 }
    }

    /// Stops the iteration (used after an error so iterators are fused).
    pub fn finish(&mut self) {
        self.rest = &[];
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    fn next(&mut self) -> Option<Line<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        let (bytes, consumed) = match memchr::memchr(b'\n', self.rest) {
            Some(at) => (self.rest.get(..at).unwrap_or_default(), at.saturating_add(1)),
            None => (self.rest, self.rest.len()),
        };
        self.rest = self.rest.get(consumed..).unwrap_or_default();
        self.number = self.number.saturating_add(1);
        let line = Line { bytes, number: self.number, start: self.start };
        self.start = self.start.saturating_add(consumed);
        Some(line)
    }
}

impl core::iter::FusedIterator for Lines<'_> {}

/// Iterator over the fields of a line separated by runs of ASCII spaces or
/// tabs (procfs pads columns for alignment). Yields `(index_in_line, field)`.
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    /// Fields of `bytes`.
    #[must_use]
    pub fn new(bytes: &'a [u8]) -> Self {
        Fields { bytes, pos: 0 }
    }

    /// The not yet consumed part of the input, starting at a field (leading
    /// blanks skipped) and its index.
    #[must_use]
    pub fn remainder(&self) -> (usize, &'a [u8]) {
        let mut pos = self.pos;
        while let Some(&b) = self.bytes.get(pos) {
            if !is_blank(b) {
                break;
            }
            pos = pos.saturating_add(1);
        }
        (pos, self.bytes.get(pos..).unwrap_or_default())
    }
}

/// Space or tab: the only field separators in the files we parse.
#[inline]
#[must_use]
pub fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

impl<'a> Iterator for Fields<'a> {
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<(usize, &'a [u8])> {
        let (start, rest) = self.remainder();
        if rest.is_empty() {
            self.pos = self.bytes.len();
            return None;
        }
        let len = rest.iter().position(|&b| is_blank(b)).unwrap_or(rest.len());
        let field = rest.get(..len).unwrap_or_default();
        self.pos = start.saturating_add(len);
        Some((start, field))
    }
}

impl core::iter::FusedIterator for Fields<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_track_numbers_and_offsets() {
        let lines: Vec<_> = Lines::new(b"a 1\nbb 2\nc").collect();
        assert_eq!(lines.len(), 3);
        assert_eq!((lines[1].bytes, lines[1].number, lines[1].start), (&b"bb 2"[..], 2, 4));
        assert_eq!((lines[2].bytes, lines[2].number, lines[2].start), (&b"c"[..], 3, 9));
        assert_eq!(Lines::new(b"").count(), 0);
        assert_eq!(Lines::new(b"\n").map(|l| l.bytes.len()).collect::<Vec<_>>(), [0]);
    }

    #[test]
    fn fields_skip_runs_of_blanks() {
        let f: Vec<_> = Fields::new(b"  cpu  1\t 22 ").collect();
        assert_eq!(f, [(2, &b"cpu"[..]), (7, &b"1"[..]), (10, &b"22"[..])]);
        assert_eq!(Fields::new(b"   ").count(), 0);
    }
}
