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
    #[inline]
    #[must_use]
    pub fn split_once(&self, sep: u8) -> Option<(&'a [u8], &'a [u8], usize)> {
        let at = find_byte(sep, self.bytes)?;
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

    #[inline]
    fn next(&mut self) -> Option<Line<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        let (bytes, consumed) = match find_byte(b'\n', self.rest) {
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

/// How many leading bytes [`find_byte`] scans itself before handing the rest
/// to `memchr`: kernel lines and tokens are mostly shorter than this, and for
/// them the setup of a `memchr` call (runtime CPU dispatch, vector prologue)
/// costs more than the scan (the profile of parsing short files:
/// benches/README.md, "Figures behind code comments").
const SHORT_SCAN: usize = 64;

/// Index of the first `needle` in `haystack`, like `memchr::memchr`, but fast
/// on short distances: the first 64 bytes are scanned eight at a
/// time in a `u64` (the classic "has zero byte" bit trick), and only a longer
/// haystack without an early match goes to `memchr` (e.g. the many-KiB
/// `intr` line of `/proc/stat`).
///
/// ```
/// use stepmon_cgroupfs_parse::lines::find_byte;
/// assert_eq!(find_byte(b'\n', b"anon 4096\nfile 0\n"), Some(9));
/// assert_eq!(find_byte(b'=', b"rbytes"), None);
/// ```
#[inline]
#[must_use]
pub fn find_byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    find_any([needle], haystack)
}

/// Index of the first byte of `haystack` that is `a` or `b`, like
/// `memchr::memchr2`, and fast on short distances like [`find_byte`] (e.g. the
/// end of a `KEY=VALUE` token: a space, or the `\n` ending the line).
///
/// ```
/// use stepmon_cgroupfs_parse::lines::find_either;
/// assert_eq!(find_either(b' ', b'\n', b"rbytes=4096\n8:16 rbytes=0"), Some(11));
/// assert_eq!(find_either(b' ', b'\n', b"dios=0"), None);
/// ```
#[inline]
#[must_use]
pub fn find_either(a: u8, b: u8, haystack: &[u8]) -> Option<usize> {
    find_any([a, b], haystack)
}

/// [`find_byte`] and [`find_either`]: the first byte of `haystack` that is
/// one of `needles`.
#[inline(always)]
fn find_any<const N: usize>(needles: [u8; N], haystack: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let patterns = needles.map(|needle| ONES.wrapping_mul(u64::from(needle)));
    let mut words = haystack.chunks_exact(8);
    let mut offset = 0usize;
    for chunk in words.by_ref().take(SHORT_SCAN / 8) {
        let Ok(bytes) = <[u8; 8]>::try_from(chunk) else { break };
        let word = u64::from_le_bytes(bytes);
        // Bytes equal to a needle become zero in `x`; the lowest flagged byte
        // is the first zero byte (a borrow only ever flags bytes above it).
        let found = patterns.iter().fold(0, |found, pattern| {
            let x = word ^ pattern;
            found | (x.wrapping_sub(ONES) & !x & HIGHS)
        });
        if found != 0 {
            let index = usize::try_from(found.trailing_zeros() / 8).unwrap_or_default();
            return Some(offset.saturating_add(index));
        }
        offset = offset.saturating_add(8);
    }
    let rest = haystack.get(offset..).unwrap_or_default();
    let found = match needles.as_slice() {
        _ if rest.len() < 8 => rest.iter().position(|b| needles.contains(b)),
        [needle] => long_find_byte(*needle, rest),
        [a, b] => long_find_either(*a, *b, rest),
        _ => rest.iter().position(|b| needles.contains(b)),
    };
    found.map(|index| offset.saturating_add(index))
}

/// `memchr::memchr` without its run-time choice of vector width: on x86-64
/// always SSE2, which every such CPU has. Kernel files are a few KiB at most,
/// where SSE2 scans as fast as AVX2, and the choice asks the CPU (`cpuid`,
/// once a process), which traps to the hypervisor in a VM: more than all
/// the parsing of a `stepmon run` there (benches/README.md, "Results:
/// `stepmon run` overhead").
#[must_use]
pub fn long_find_byte(needle: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(one) = memchr::arch::x86_64::sse2::memchr::One::new(needle) {
        return one.find(haystack);
    }
    memchr::memchr(needle, haystack)
}

/// [`long_find_byte`] for either of two bytes (`memchr::memchr2`).
#[must_use]
pub fn long_find_either(a: u8, b: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if let Some(two) = memchr::arch::x86_64::sse2::memchr::Two::new(a, b) {
        return two.find(haystack);
    }
    memchr::memchr2(a, b, haystack)
}

/// Splits `input` at its first `\n`: the line without it, and what follows
/// it (empty after a last line with or without `\n`).
#[inline(always)]
#[must_use]
pub fn split_line(input: &[u8]) -> (&[u8], &[u8]) {
    match find_byte(b'\n', input) {
        Some(at) => (input.get(..at).unwrap_or_default(), input.get(at.saturating_add(1)..).unwrap_or_default()),
        None => (input, &[]),
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
    fn find_byte_agrees_with_memchr() {
        let mut hay = std::vec::Vec::new();
        for len in 0..200usize {
            hay.clear();
            hay.extend((0..len).map(|i| b"ab \n=\xff\x00\x01"[i % 8].wrapping_add((i / 8) as u8 % 3)));
            for needle in [b'\n', b' ', b'=', 0, 1, 0xff, 0x80, b'z'] {
                assert_eq!(find_byte(needle, &hay), memchr::memchr(needle, &hay), "{needle} in {hay:?}");
                for other in [b'\n', b'=', 0xff, b'z'] {
                    assert_eq!(find_either(needle, other, &hay), memchr::memchr2(needle, other, &hay));
                }
                for at in [0, len / 2, len.saturating_sub(1)] {
                    let mut h = hay.clone();
                    if let Some(b) = h.get_mut(at) {
                        *b = needle;
                    }
                    assert_eq!(find_byte(needle, &h), memchr::memchr(needle, &h), "{needle} in {h:?}");
                }
            }
        }
        assert_eq!(split_line(b"a 1\nb"), (&b"a 1"[..], &b"b"[..]));
        assert_eq!(split_line(b"a 1"), (&b"a 1"[..], &b""[..]));
        assert_eq!(split_line(b"\n"), (&b""[..], &b""[..]));
    }

    #[test]
    fn fields_skip_runs_of_blanks() {
        let f: Vec<_> = Fields::new(b"  cpu  1\t 22 ").collect();
        assert_eq!(f, [(2, &b"cpu"[..]), (7, &b"1"[..]), (10, &b"22"[..])]);
        assert_eq!(Fields::new(b"   ").count(), 0);
    }
}
