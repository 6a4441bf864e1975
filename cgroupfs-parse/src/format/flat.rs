//! Flat keyed files, `KEY VAL` per line (e.g. `cpu.stat`, `memory.stat`,
//! `memory.events`): <https://docs.kernel.org/admin-guide/cgroup-v2.html#format>.
//!
//! Keys are looked up by name, never by position; unknown keys are skipped
//! (their values are not even parsed), missing keys stay `None`.

use crate::error::{ErrorKind, ParseError, Result};
use crate::lines::{Line, Lines};

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

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let line = self.lines.next()?;
        let entry = entry(line);
        if entry.is_err() {
            self.lines.finish();
        }
        Some(entry)
    }
}

/// One line as an entry: the key before the first space (validated), the
/// value after it (non-empty).
#[inline]
fn entry(line: Line<'_>) -> Result<FlatEntry<'_>> {
    let invalid_key = |kind| line.error(kind);
    let (key, value, value_at) = match key_len(line.bytes) {
        // Usually the line starts with key bytes up to the space: one scan
        // finds and validates the key, and only the `&str` conversion is left.
        Some(len) => {
            let (key, rest) = line.bytes.split_at_checked(len).unwrap_or_default();
            let key = core::str::from_utf8(key).map_err(|_| invalid_key(ErrorKind::InvalidKey))?;
            (key, rest.get(1..).unwrap_or_default(), len.saturating_add(1))
        }
        // Otherwise these steps, in the order that decides which error a bad
        // line gets.
        None => {
            if line.bytes.is_empty() {
                return Err(line.error(ErrorKind::EmptyLine));
            }
            let (key, value, value_at) = line.split_once(b' ').ok_or(line.error(ErrorKind::MissingSeparator))?;
            (super::ascii_key(key).map_err(invalid_key)?, value, value_at)
        }
    };
    if value.is_empty() {
        return Err(line.error_at(ErrorKind::InvalidNumber, value_at));
    }
    Ok(FlatEntry { key, value, line: line.number, value_offset: line.start.saturating_add(value_at) })
}

impl core::iter::FusedIterator for FlatKeyed<'_> {}

/// Runs `visit` on every entry of a flat keyed file, stopping at the first error.
pub fn for_each<'a>(input: &'a [u8], mut visit: impl FnMut(FlatEntry<'a>) -> Result<()>) -> Result<()> {
    FlatKeyed::new(input).try_for_each(|entry| visit(entry?))
}

/// How a typed flat struct ([`flat_u64_struct!`]) reads a field's value.
pub(crate) trait Convert {
    /// The conversion of the raw value, used by the general parser.
    fn parse(value: &[u8]) -> core::result::Result<u64, ErrorKind>;
    /// The same conversion for a value the fast path already read as 1 to
    /// 19 plain digits: `None` where `parse` fails on those digits.
    fn from_digits(value: u64) -> Option<u64>;
}

/// A plain `u64` ([`number::parse_u64`](crate::number::parse_u64)).
pub(crate) struct U64;

impl Convert for U64 {
    #[inline]
    fn parse(value: &[u8]) -> core::result::Result<u64, ErrorKind> {
        crate::number::parse_u64(value)
    }
    #[inline]
    fn from_digits(value: u64) -> Option<u64> {
        Some(value)
    }
}

/// A counter of a C `int`
/// ([`number::parse_c_int_counter`](crate::number::parse_c_int_counter)).
pub(crate) struct CIntCounter;

impl Convert for CIntCounter {
    #[inline]
    fn parse(value: &[u8]) -> core::result::Result<u64, ErrorKind> {
        crate::number::parse_c_int_counter(value)
    }
    #[inline]
    fn from_digits(value: u64) -> Option<u64> {
        // A digits-only value is in range up to `u32::MAX`; negative
        // (wrapped) values have a `-` and take the general path.
        (value <= u64::from(u32::MAX)).then_some(value)
    }
}

/// The fast path of the typed flat parsers ([`flat_u64_struct!`]): walks the
/// `KEY VALUE` lines of `input` and calls `visit(index, value)` for each line
/// whose key is `keys[index]` and whose value is 1 to 19 plain digits
/// (unknown keys are skipped, as in the general parser). It reports no
/// errors: it returns `None` at the first line the general parser
/// ([`FlatKeyed`] and a conversion) might reject, or when `visit` does, and
/// the caller then runs the general parser, the one place that locates
/// errors. So it checks no less than [`FlatKeyed`]: a non-empty key of
/// printable ASCII other than `=`, a space, a non-empty value up to `\n`
/// or the end.
///
/// Three things make it cheaper than [`FlatKeyed`] plus a `match` on
/// `&str`: no line numbers, offsets or `&str` conversion; a known key's
/// value is read as a number in the same pass that finds the line end; and
/// the key of a line is first compared with the keys listed after the
/// previous known one ([`LOOK_AHEAD`] of them; `keys` follows the order
/// recent kernels print), so `index_of` (a match by name) runs only on a
/// miss: an unknown key, or a place where this kernel's order differs.
/// Keys are still found by name; a miss only costs time.
#[inline]
pub(crate) fn for_each_known(
    input: &[u8],
    keys: &[&str],
    index_of: impl Fn(&[u8]) -> Option<usize>,
    mut visit: impl FnMut(usize, u64) -> Option<()>,
) -> Option<()> {
    let mut rest = input;
    let mut expected = 0usize;
    while !rest.is_empty() {
        let (index, key_len) = match keys.get(expected).map(|key| key.as_bytes()) {
            Some(key) if starts_with_key(rest, key) => (Some(expected), key.len()),
            _ => match look_ahead(rest, keys, expected) {
                Some((index, len)) => (Some(index), len),
                None => {
                    let len = key_len(rest)?;
                    (index_of(rest.get(..len).unwrap_or_default()), len)
                }
            },
        };
        // `key_len` is followed by the space, so this skips key and space.
        let value = rest.get(key_len.saturating_add(1)..).unwrap_or_default();
        rest = match index {
            Some(index) => {
                let (number, end, next) = crate::scan::terminated_u64(value)?;
                visit(index, number)?;
                expected = index.saturating_add(1);
                match end {
                    None | Some(b'\n') => next,
                    Some(_) => return None,
                }
            }
            None => {
                let (value, next) = crate::lines::split_line(value);
                if value.is_empty() {
                    return None;
                }
                next
            }
        };
    }
    Some(())
}

/// How many keys of the list [`for_each_known`] tries, from the one after
/// the previous line's, before a match by name: keys this kernel does not
/// print (a config option off, a key newer than the kernel) are skipped
/// over. That covers the gaps in the `memory.stat` files we have (6.1
/// captured in the VM tier, the largest gap five keys: `pgdemote_*` and
/// `pgpromote_success` before `pgscan`; a hand-made 6.8-like file). A key
/// that is not among them costs five or six compares of a length and one
/// word, most failing at the length, then the match by name.
const LOOK_AHEAD: usize = 6;

/// The index and length of the key among the [`LOOK_AHEAD`] after
/// `keys[expected]` that `line` starts with. Out of line: the common case,
/// `keys[expected]` itself, stays a single compare.
#[inline(never)]
fn look_ahead(line: &[u8], keys: &[&str], expected: usize) -> Option<(usize, usize)> {
    let after = expected.saturating_add(1);
    let ahead = keys.get(after..)?.iter().take(LOOK_AHEAD.saturating_sub(1)).zip(after..);
    ahead
        .map(|(key, index)| (index, key.as_bytes()))
        .find_map(|(index, key)| starts_with_key(line, key).then_some((index, key.len())))
}

/// Whether `line` starts with `key` followed by the separating space.
#[inline]
fn starts_with_key(line: &[u8], key: &[u8]) -> bool {
    line.get(key.len()) == Some(&b' ') && line.get(..key.len()).is_some_and(|head| same_short(head, key))
}

/// `a == b` for two slices of equal length, compared in (overlapping) words:
/// a slice `==` is a `memcmp` call, which costs more than the compare for
/// keys of 4 to 30 bytes and showed in the profile of parsing `memory.stat`
/// (benches/README.md, "Figures behind code comments").
#[inline]
fn same_short(a: &[u8], b: &[u8]) -> bool {
    fn word<const N: usize>(s: &[u8], at: usize) -> Option<[u8; N]> {
        s.get(at..at.checked_add(N)?)?.try_into().ok()
    }
    let len = a.len();
    if len != b.len() {
        return false;
    }
    if len < 4 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    if len < 8 {
        let last = len.saturating_sub(4);
        return word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, last) == word::<4>(b, last);
    }
    // Words at 0, 8, ... and one ending at the last byte, which may overlap.
    let last = len.saturating_sub(8);
    let mut at = 0;
    while at < last {
        if word::<8>(a, at) != word::<8>(b, at) {
            return false;
        }
        at = at.saturating_add(8);
    }
    word::<8>(a, last) == word::<8>(b, last)
}

/// Length of the key at the start of `line` if it is followed by a space
/// and valid as [`super::ascii_key`] checks it, else `None`.
#[inline]
fn key_len(line: &[u8]) -> Option<usize> {
    let len = line.iter().position(|&b| !super::is_key_byte(b))?;
    (len > 0 && line.get(len) == Some(&b' ')).then_some(len)
}

/// Declares a `Copy` struct of `Option<u64>` fields filled from a flat keyed
/// file, with `parse`, `get` and `iter`. Each field names its kernel key and
/// the value conversion (a [`Convert`]: [`U64`] or [`CIntCounter`]).
macro_rules! flat_u64_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident = $key:literal via $conv:ty, )*
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
                out.parse_into(input)?;
                Ok(out)
            }

            /// [`parse`](Self::parse) into `self`, which is overwritten
            /// (left at the default on error): for callers that re-read the
            /// file on every sample, so a large value (`memory.stat` has 72
            /// keys, 1,152 bytes) is filled where it lives instead of being
            /// built and then moved.
            ///
            /// ```
            #[doc = concat!("let mut value = stepmon_cgroupfs_parse::", stringify!($name), "::default();")]
            /// // One line of the kernel's output for every key this type knows.
            #[doc = concat!("let text: String = stepmon_cgroupfs_parse::", stringify!($name), "::KEYS.iter().map(|k| format!(\"{k} 7\\n\")).collect();")]
            /// value.parse_into(text.as_bytes())?;
            /// assert!(value.iter().all(|(_, v)| v == Some(7)));
            /// assert!(value.parse_into(b"key not-a-number\n").is_ok(), "unknown keys are skipped");
            /// assert!(value.iter().all(|(_, v)| v.is_none()), "and the earlier values are gone");
            /// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
            /// ```
            pub fn parse_into(&mut self, input: &[u8]) -> $crate::error::Result<()> {
                // The fast path takes files as the kernel prints them; on
                // anything else (every error included) the general parser
                // runs and says what is wrong where.
                *self = Self::default();
                if self.fill_fast(input).is_some() {
                    return Ok(());
                }
                *self = Self::default();
                let result = self.fill_general(input);
                if result.is_err() {
                    *self = Self::default();
                }
                result
            }

            /// The fast path (see `format::flat::for_each_known`) on a
            /// default `self`: `None` where `fill_general` fails, the same
            /// values where it succeeds.
            #[inline]
            fn fill_fast(&mut self, input: &[u8]) -> Option<()> {
                /// The fields, numbered as `KEYS`.
                #[allow(non_camel_case_types)]
                #[derive(Clone, Copy)]
                enum Field { $( $field, )* }
                const FIELDS: &[Field] = &[$( Field::$field, )*];
                fn index_of(key: &[u8]) -> Option<usize> {
                    // LLVM turns this chain into a jump on the length and
                    // word compares (no `memcmp` calls).
                    $( if key == $key.as_bytes() { return Some(Field::$field as usize); } )*
                    None
                }
                $crate::format::flat::for_each_known(input, Self::KEYS, index_of, |index, value| {
                    match FIELDS.get(index)? {
                        $( Field::$field => {
                            self.$field = Some(<$conv as $crate::format::flat::Convert>::from_digits(value)?);
                        } )*
                    }
                    Some(())
                })
            }

            /// The general parser, the one that reports errors, on a default `self`.
            fn fill_general(&mut self, input: &[u8]) -> $crate::error::Result<()> {
                $crate::format::flat::for_each(input, |entry| {
                    match entry.key {
                        $( $key => self.$field = Some(entry.convert(<$conv as $crate::format::flat::Convert>::parse)?), )*
                        _ => {}
                    }
                    Ok(())
                })
            }

            /// The fast path alone (tests compare it with the general one).
            #[cfg(test)]
            #[allow(dead_code)]
            fn parse_fast(input: &[u8]) -> Option<Self> {
                let mut out = Self::default();
                out.fill_fast(input).map(|()| out)
            }

            /// The general parser alone.
            #[cfg(test)]
            #[allow(dead_code)]
            fn parse_general(input: &[u8]) -> $crate::error::Result<Self> {
                let mut out = Self::default();
                out.fill_general(input).map(|()| out)
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
    fn same_short_is_slice_equality() {
        let text = b"workingset_activate_anon workingset_activate_file_x";
        for len in 0..=30 {
            for (i, j) in [(0, 0), (0, 25), (2, 27), (25, 0)] {
                let (a, b) = (&text[i..][..len.min(text.len() - i)], &text[j..][..len.min(text.len() - j)]);
                assert_eq!(same_short(a, b), a == b, "{a:?} {b:?}");
            }
        }
        assert!(!same_short(b"abc", b"abcd"));
    }

    #[test]
    fn typed_keys_are_valid_keys() {
        // The fast path trusts a predicted key without checking its bytes.
        let all = [crate::CpuStat::KEYS, crate::CpuStatLocal::KEYS, crate::MemoryStat::KEYS];
        let all = all.iter().chain([crate::MemoryEvents::KEYS, crate::PidsEvents::KEYS].iter());
        for key in all.flat_map(|keys| keys.iter()) {
            assert_eq!(super::super::ascii_key(key.as_bytes()), Ok(*key));
        }
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
