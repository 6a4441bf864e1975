//! Flat keyed files, `KEY VAL` per line (e.g. `cpu.stat`, `memory.stat`,
//! `memory.events`): <https://docs.kernel.org/admin-guide/cgroup-v2.html#format>.
//!
//! Keys are looked up by name, never by position; unknown keys are skipped
//! (their values are not even parsed), missing keys stay `None`.

use crate::error::{ErrorKind, ParseError, Result};
use crate::lines::Lines;

/// One `KEY VAL` line, borrowed from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlatEntry<'a> {
    /// The key, validated as printable ASCII.
    pub key: &'a str,
    /// The raw value bytes (everything after the first space).
    pub value: &'a [u8],
    /// 1-based line number.
    pub line: usize,
    /// Byte offset of `value` from the start of the input.
    pub value_offset: usize,
}

impl FlatEntry<'_> {
    /// The value as a `u64`.
    pub fn value_u64(&self) -> Result<u64> {
        self.convert(crate::number::parse_u64)
    }

    /// Converts the value with `convert`, locating any error at the value.
    pub fn convert<T>(&self, convert: impl FnOnce(&[u8]) -> core::result::Result<T, ErrorKind>) -> Result<T> {
        convert(self.value).map_err(|kind| ParseError::new(kind, self.line, self.value_offset))
    }
}

/// Iterator over the entries of a flat keyed file. Stops after the first error.
///
/// ```
/// use stepmon_cgroupfs_parse::format::flat::FlatKeyed;
/// let mut it = FlatKeyed::new(b"usage_usec 10\nuser_usec 7\n");
/// let first = it.next().unwrap().unwrap();
/// assert_eq!((first.key, first.value_u64().unwrap()), ("usage_usec", 10));
/// assert_eq!(it.count(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct FlatKeyed<'a> {
    lines: Lines<'a>,
}

impl<'a> FlatKeyed<'a> {
    /// Entries of `input`. An empty input has none (e.g. `cpu.stat.local`
    /// without the cpu controller).
    #[must_use]
    pub fn new(input: &'a [u8]) -> Self {
        FlatKeyed { lines: Lines::new(input) }
    }
}

impl<'a> Iterator for FlatKeyed<'a> {
    type Item = Result<FlatEntry<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let line = self.lines.next()?;
        let entry = (|| {
            if line.bytes.is_empty() {
                return Err(line.error(ErrorKind::EmptyLine));
            }
            let (key, value, value_at) = line.split_once(b' ').ok_or(line.error(ErrorKind::MissingSeparator))?;
            let key = super::ascii_key(key).map_err(|kind| line.error(kind))?;
            if value.is_empty() {
                return Err(line.error_at(ErrorKind::InvalidNumber, value_at));
            }
            Ok(FlatEntry { key, value, line: line.number, value_offset: line.start.saturating_add(value_at) })
        })();
        if entry.is_err() {
            self.lines.finish();
        }
        Some(entry)
    }
}

impl core::iter::FusedIterator for FlatKeyed<'_> {}

/// Runs `visit` on every entry of a flat keyed file, stopping at the first error.
pub fn for_each<'a>(input: &'a [u8], mut visit: impl FnMut(FlatEntry<'a>) -> Result<()>) -> Result<()> {
    FlatKeyed::new(input).try_for_each(|entry| visit(entry?))
}

/// Declares a `Copy` struct of `Option<u64>` fields filled from a flat keyed
/// file, with `parse`, `get` and `iter`. Each field names its kernel key and
/// the value conversion (`number::parse_u64` or `number::parse_c_int_counter`).
macro_rules! flat_u64_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident = $key:literal via $conv:path, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[non_exhaustive]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: Option<u64>, )*
        }

        impl $name {
            /// The kernel keys this type knows, in the kernel's print order.
            pub const KEYS: &'static [&'static str] = &[$($key),*];

            /// Parses the whole file. Unknown keys are ignored, missing keys
            /// stay `None`, the last of duplicate keys wins; any malformed line
            /// is an error. Never allocates.
            pub fn parse(input: &[u8]) -> $crate::error::Result<Self> {
                let mut out = Self::default();
                $crate::format::flat::for_each(input, |entry| {
                    match entry.key {
                        $( $key => out.$field = Some(entry.convert($conv)?), )*
                        _ => {}
                    }
                    Ok(())
                })?;
                Ok(out)
            }

            /// The value of a kernel key, `None` if absent or unknown.
            #[must_use]
            pub fn get(&self, key: &str) -> Option<u64> {
                match key {
                    $( $key => self.$field, )*
                    _ => None,
                }
            }

            /// Every known key with its value (present or not), in print order.
            pub fn iter(&self) -> impl Iterator<Item = (&'static str, Option<u64>)> + '_ {
                [$( ($key, self.$field) ),*].into_iter()
            }
        }
    };
}
pub(crate) use flat_u64_struct;

#[cfg(test)]
mod tests {
    use super::*;

    type Outcome = core::result::Result<(String, u64), (ErrorKind, u32, u32)>;

    fn kinds(input: &[u8]) -> Vec<Outcome> {
        FlatKeyed::new(input)
            .map(|e| e.and_then(|e| Ok((e.key.to_owned(), e.value_u64()?))).map_err(|e| (e.kind, e.line, e.offset)))
            .collect()
    }

    #[test]
    fn entries_and_errors() {
        assert_eq!(kinds(b"a 1\nb 2"), [Ok(("a".into(), 1)), Ok(("b".into(), 2))]);
        assert_eq!(kinds(b""), []);
        assert_eq!(kinds(b"a 1\nb\n"), [Ok(("a".into(), 1)), Err((ErrorKind::MissingSeparator, 2, 4))]);
        assert_eq!(kinds(b"a 1\n\nb 2\n"), [Ok(("a".into(), 1)), Err((ErrorKind::EmptyLine, 2, 4))]);
        assert_eq!(kinds(b"a \n"), [Err((ErrorKind::InvalidNumber, 1, 2))]);
        assert_eq!(kinds(b"a  1\n"), [Err((ErrorKind::InvalidNumber, 1, 2))]);
        assert_eq!(kinds(b"a 1\r\n"), [Err((ErrorKind::InvalidNumber, 1, 2))]);
        assert_eq!(kinds(b"\xc3\xa4 1\n"), [Err((ErrorKind::InvalidKey, 1, 0))]);
        assert_eq!(kinds(b" 1\n"), [Err((ErrorKind::InvalidKey, 1, 0))]);
    }
}
