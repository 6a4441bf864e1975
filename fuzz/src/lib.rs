//! Invariant checks shared by the fuzz targets in `fuzz_targets/`.
//!
//! The parsers promise (cgroupfs-parse `lib.rs`): no input makes them panic,
//! unknown keys are ignored, missing keys are `None`, the last of duplicate
//! keys wins, and malformed input is a `ParseError` whose `line` is 1-based
//! and whose `offset` points into that line. The helpers here check those
//! promises against small independent models built from the format-class
//! iterators, so a target fails on wrong answers, not only on panics.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use stepmon_cgroupfs_parse::format::flat::FlatKeyed;
use stepmon_cgroupfs_parse::{ErrorKind, ParseError};

/// A value converter as used by the typed flat structs (`via` in their macro).
pub type Converter = fn(&[u8]) -> Result<u64, ErrorKind>;

/// The byte span `[start, end]` of 1-based line `number` of `input` (`end`
/// is the index of its `\n`, or the input length for a last line without
/// one). An empty input has one empty line 1 at `[0, 0]`.
#[must_use]
pub fn line_span(input: &[u8], number: usize) -> Option<(usize, usize)> {
    if input.is_empty() {
        return (number == 1).then_some((0, 0));
    }
    let mut start = 0usize;
    let mut current = 1usize;
    loop {
        let end = input[start..].iter().position(|&b| b == b'\n').map_or(input.len(), |at| start + at);
        if current == number {
            return Some((start, end));
        }
        if end + 1 >= input.len() {
            // No further line: the input ended here (with or without `\n`).
            return None;
        }
        start = end + 1;
        current += 1;
    }
}

/// Checks what the error type documents: `line` is a line of the input and
/// `offset` lies inside that line (at most at its end). Also renders it.
pub fn check_error(input: &[u8], err: &ParseError) {
    let mut text = String::new();
    write!(text, "{err}").expect("writing to a String cannot fail");
    assert!(!text.is_empty());
    let line = usize::try_from(err.line).expect("u32 fits usize");
    let offset = usize::try_from(err.offset).expect("u32 fits usize");
    let (start, end) =
        line_span(input, line).unwrap_or_else(|| panic!("error {err:?} names a line the input does not have"));
    assert!(
        (start..=end).contains(&offset),
        "error {err:?}: offset outside its line, which spans bytes {start}..={end}"
    );
}

/// The common shape of the typed flat structs (`CpuStat`, `MemoryStat`, ...).
pub trait FlatStruct: Sized + PartialEq + std::fmt::Debug {
    /// `Self::KEYS`.
    const KEYS: &'static [&'static str];
    /// `Self::parse`.
    fn parse(input: &[u8]) -> stepmon_cgroupfs_parse::Result<Self>;
    /// `Self::get`.
    fn get(&self, key: &str) -> Option<u64>;
    /// `Self::iter`, collected.
    fn pairs(&self) -> Vec<(&'static str, Option<u64>)>;
    /// The converter the struct uses for `key`.
    fn converter(key: &str) -> Converter;
}

/// Implements [`FlatStruct`] for a typed flat struct; keys listed after
/// `c_int:` use `parse_c_int_counter` (as the struct declares), all others
/// `parse_u64`.
macro_rules! impl_flat {
    ($ty:ty $(, c_int: [$($ckey:literal),* $(,)?])?) => {
        impl FlatStruct for $ty {
            const KEYS: &'static [&'static str] = <$ty>::KEYS;
            fn parse(input: &[u8]) -> stepmon_cgroupfs_parse::Result<Self> {
                <$ty>::parse(input)
            }
            fn get(&self, key: &str) -> Option<u64> {
                <$ty>::get(self, key)
            }
            fn pairs(&self) -> Vec<(&'static str, Option<u64>)> {
                <$ty>::iter(self).collect()
            }
            fn converter(key: &str) -> Converter {
                match key {
                    $($($ckey => stepmon_cgroupfs_parse::number::parse_c_int_counter,)*)?
                    _ => stepmon_cgroupfs_parse::number::parse_u64,
                }
            }
        }
    };
}

impl_flat!(stepmon_cgroupfs_parse::CpuStat, c_int: ["nr_periods", "nr_throttled", "nr_bursts"]);
impl_flat!(stepmon_cgroupfs_parse::CpuStatLocal);
impl_flat!(stepmon_cgroupfs_parse::MemoryStat);
impl_flat!(stepmon_cgroupfs_parse::MemoryEvents);
impl_flat!(stepmon_cgroupfs_parse::PidsEvents);

/// Parses `input` with `T` and checks the result against a model built
/// from [`FlatKeyed`]: the same error (first malformed line, or first known
/// key whose value does not convert), or on success `get(key)` equal to the
/// last value printed for `key` (`None` when absent), `iter()` listing
/// exactly `KEYS` in order with the same values as `get`, and unknown keys
/// giving `None`. Returns the parsed value.
pub fn check_flat<T: FlatStruct>(input: &[u8]) -> Option<T> {
    let result = T::parse(input);
    let mut model: BTreeMap<&str, u64> = BTreeMap::new();
    let mut model_err = None;
    let mut entries = 0usize;
    for entry in FlatKeyed::new(input) {
        entries += 1;
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                model_err = Some(err);
                break;
            }
        };
        if T::KEYS.contains(&entry.key) {
            match entry.convert(T::converter(entry.key)) {
                Ok(value) => {
                    model.insert(entry.key, value);
                }
                Err(err) => {
                    model_err = Some(err);
                    break;
                }
            }
        }
    }
    assert!(entries <= input.len(), "more entries than bytes");
    match (result, model_err) {
        (Ok(parsed), None) => {
            for key in T::KEYS {
                assert_eq!(parsed.get(key), model.get(key).copied(), "key {key}");
            }
            let pairs = parsed.pairs();
            assert_eq!(pairs.iter().map(|(k, _)| *k).collect::<Vec<_>>(), T::KEYS, "iter() keys != KEYS");
            for (key, value) in pairs {
                assert_eq!(parsed.get(key), value, "get({key}) != iter() value");
            }
            assert_eq!(parsed.get("no_such_key"), None);
            assert_eq!(parsed.get(""), None);
            // Parsing is deterministic.
            assert_eq!(T::parse(input).ok().as_ref(), Some(&parsed));
            Some(parsed)
        }
        (Err(err), Some(expected)) => {
            assert_eq!(err, expected, "error differs from the FlatKeyed model");
            check_error(input, &err);
            None
        }
        (result, expected) => panic!("parse gave {result:?}, FlatKeyed model expected error {expected:?}"),
    }
}

/// Splits `data` at its first NUL byte (for targets that need two inputs).
/// Without a NUL both halves are the whole input.
#[must_use]
pub fn split_nul(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, data),
    }
}

/// Independent model of mountinfo unescaping (proc(5), `show_mountinfo`):
/// `\` plus three octal digits whose value fits a byte is that byte; any
/// other byte, including a lone backslash, stands for itself.
#[must_use]
pub fn unescape_model(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'\\'
            && let Some(digits) = raw.get(i + 1..i + 4)
            && digits.iter().all(|d| (b'0'..=b'7').contains(d))
        {
            let value = digits.iter().fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
            if let Ok(byte) = u8::try_from(value) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(raw[i]);
        i += 1;
    }
    out
}

/// Exercises every accessor of an `Escaped` and checks they agree with each
/// other and with [`unescape_model`]. Returns the unescaped bytes.
pub fn check_escaped(e: stepmon_cgroupfs_parse::mountinfo::Escaped<'_>) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    use stepmon_cgroupfs_parse::mountinfo::Escaped;

    let bytes: Vec<u8> = e.bytes().collect();
    assert_eq!(bytes, unescape_model(e.raw()), "unescaping differs from the model for {:?}", e.raw());
    assert_eq!(Escaped::new(e.raw()), e);
    assert_eq!(e.unescaped_len(), bytes.len());
    assert!(bytes.len() <= e.raw().len());
    assert!(e.eq_unescaped(&bytes));
    let mut longer = bytes.clone();
    longer.push(b'x');
    assert!(!e.eq_unescaped(&longer));
    assert!(!e.starts_with_unescaped(&longer));
    for cut in [0, bytes.len() / 2, bytes.len()] {
        assert!(e.starts_with_unescaped(&bytes[..cut]));
    }
    let mut buf = vec![0u8; bytes.len() + 8];
    let filled = e.unescape_into(&mut buf).expect("a big enough buffer is filled");
    assert_eq!(filled.len(), e.unescaped_len());
    assert_eq!(filled, &bytes[..]);
    if !bytes.is_empty() {
        let mut small = vec![0u8; bytes.len() - 1];
        assert_eq!(e.unescape_into(&mut small), None, "a too small buffer must give None");
    }
    let mut exact = vec![0u8; bytes.len()];
    assert_eq!(e.unescape_into(&mut exact), Some(&bytes[..]));
    assert_eq!(e.to_path_buf().as_os_str().as_bytes(), &bytes[..]);
    bytes
}
