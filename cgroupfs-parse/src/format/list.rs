//! Space separated (e.g. `cgroup.controllers`) and newline separated (e.g.
//! `cgroup.procs`) lists: <https://docs.kernel.org/admin-guide/cgroup-v2.html#format>.
//! An empty list is an empty (0-byte) file.

use crate::error::{ErrorKind, Result};
use crate::lines::{Line, Lines};

/// Iterator over the items of a space separated list: one line of items
/// separated by spaces. Items are validated as printable ASCII; a second line
/// is [`ErrorKind::TrailingData`]. Stops after the first error.
///
/// ```
/// use stepmon_cgroupfs_parse::format::list::SpaceList;
/// let items: Result<Vec<_>, _> = SpaceList::new(b"cpu io memory pids\n").collect();
/// assert_eq!(items.unwrap(), ["cpu", "io", "memory", "pids"]);
/// assert_eq!(SpaceList::new(b"").count(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct SpaceList<'a> {
    line: Option<Line<'a>>,
    second_line: Option<Line<'a>>,
    pos: usize,
}

impl<'a> SpaceList<'a> {
    /// Items of `input`.
    #[must_use]
    pub fn new(input: &'a [u8]) -> Self {
        let mut lines = Lines::new(input);
        SpaceList { line: lines.next(), second_line: lines.next(), pos: 0 }
    }
}

impl<'a> Iterator for SpaceList<'a> {
    type Item = Result<&'a str>;

    fn next(&mut self) -> Option<Self::Item> {
        let Some(line) = self.line else {
            return self.second_line.take().map(|l| Err(l.error(ErrorKind::TrailingData)));
        };
        let bytes = line.bytes;
        while bytes.get(self.pos) == Some(&b' ') {
            self.pos = self.pos.saturating_add(1);
        }
        let Some(rest) = bytes.get(self.pos..).filter(|r| !r.is_empty()) else {
            self.line = None;
            return self.next();
        };
        let start = self.pos;
        let len = crate::lines::find_byte(b' ', rest).unwrap_or(rest.len());
        self.pos = start.saturating_add(len);
        let item = super::ascii_key(rest.get(..len).unwrap_or_default()).map_err(|kind| line.error_at(kind, start));
        if item.is_err() {
            self.line = None;
            self.second_line = None;
        }
        Some(item)
    }
}

impl core::iter::FusedIterator for SpaceList<'_> {}

/// Iterator over a newline separated list: one item per line, no empty
/// lines. Yields each item's bytes (validated as printable ASCII) and line.
/// Stops after the first error.
///
/// ```
/// use stepmon_cgroupfs_parse::format::list::NewlineList;
/// let items: Result<Vec<_>, _> = NewlineList::new(b"1\n42\n").map(|i| i.map(|l| l.bytes)).collect();
/// assert_eq!(items.unwrap(), [&b"1"[..], b"42"]);
/// ```
#[derive(Debug, Clone)]
pub struct NewlineList<'a> {
    lines: Lines<'a>,
}

impl<'a> NewlineList<'a> {
    /// Items of `input`.
    #[must_use]
    pub fn new(input: &'a [u8]) -> Self {
        NewlineList { lines: Lines::new(input) }
    }
}

impl<'a> Iterator for NewlineList<'a> {
    type Item = Result<Line<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let line = self.lines.next()?;
        let item = if line.bytes.is_empty() {
            Err(line.error(ErrorKind::EmptyLine))
        } else {
            super::ascii_text(line.bytes).map(|_| line).map_err(|kind| line.error(kind))
        };
        if item.is_err() {
            self.lines.finish();
        }
        Some(item)
    }
}

impl core::iter::FusedIterator for NewlineList<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn space_list_edges() {
        fn all(i: &[u8]) -> Vec<core::result::Result<&str, (ErrorKind, u32, u32)>> {
            SpaceList::new(i).map(|r| r.map_err(|e| (e.kind, e.line, e.offset))).collect()
        }
        assert_eq!(all(b"hugetlb\n"), [Ok("hugetlb")]);
        assert_eq!(all(b"cpu io"), [Ok("cpu"), Ok("io")]);
        assert_eq!(all(b"cpu  io \n"), [Ok("cpu"), Ok("io")]);
        assert_eq!(all(b"cpu\nio\n"), [Ok("cpu"), Err((ErrorKind::TrailingData, 2, 4))]);
        assert_eq!(all(b"cpu\r\n"), [Err((ErrorKind::InvalidKey, 1, 0))]);
        assert_eq!(all(b"\n"), []);
    }

    #[test]
    fn newline_list_edges() {
        fn all(i: &[u8]) -> Vec<core::result::Result<&[u8], ErrorKind>> {
            NewlineList::new(i).map(|r| r.map(|l| l.bytes).map_err(|e| e.kind)).collect()
        }
        assert_eq!(all(b""), Vec::<core::result::Result<&[u8], _>>::new());
        assert_eq!(all(b"1\n\n2\n"), [Ok(&b"1"[..]), Err(ErrorKind::EmptyLine)]);
    }
}
