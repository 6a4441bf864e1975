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
pub trait FlatStruct: Sized + PartialEq + std::fmt::Debug + Default {
    /// `Self::KEYS`.
    const KEYS: &'static [&'static str];
    /// `Self::parse`.
    fn parse(input: &[u8]) -> stepmon_cgroupfs_parse::Result<Self>;
    /// `Self::parse_into`.
    fn parse_into(&mut self, input: &[u8]) -> stepmon_cgroupfs_parse::Result<()>;
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
            fn parse_into(&mut self, input: &[u8]) -> stepmon_cgroupfs_parse::Result<()> {
                <$ty>::parse_into(self, input)
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
impl_flat!(stepmon_cgroupfs_parse::v1::MemoryStatV1);
impl_flat!(stepmon_cgroupfs_parse::v1::OomControl);
impl_flat!(stepmon_cgroupfs_parse::v1::CpuacctStat);
impl_flat!(stepmon_cgroupfs_parse::v1::CpuStatV1, c_int: ["nr_periods", "nr_throttled", "nr_bursts"]);
impl_flat!(stepmon_cgroupfs_parse::v1::CpuStatLocalV1);

/// Parses `input` with `T` and checks the result against a model built
/// from [`FlatKeyed`]: the same error (first malformed line, or first known
/// key whose value does not convert), or on success `get(key)` equal to the
/// last value printed for `key` (`None` when absent), `iter()` listing
/// exactly `KEYS` in order with the same values as `get`, and unknown keys
/// giving `None`; and `parse_into` on a value holding every key gives the
/// same (on error: the same error and the default). Returns the parsed value.
pub fn check_flat<T: FlatStruct>(input: &[u8]) -> Option<T> {
    let result = T::parse(input);
    let every_key: String = T::KEYS.iter().map(|key| format!("{key} 7\n")).collect();
    let mut reused = T::parse(every_key.as_bytes()).expect("every key with a plain value parses");
    match (reused.parse_into(input), &result) {
        (Ok(()), Ok(parsed)) => assert_eq!(&reused, parsed, "parse_into differs from parse"),
        (Err(into), Err(parse)) => {
            assert_eq!(&into, parse, "parse_into's error differs from parse's");
            assert_eq!(reused, T::default(), "parse_into left values behind after an error");
        }
        (into, parse) => panic!("parse_into gave {into:?}, parse {parse:?}"),
    }
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

/// The sum of the present values, `None` if none is present: how the
/// parsers total a counter over devices. Panics on overflow (a successful
/// parse has checked the sums).
pub fn sum_present(values: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    values.flatten().fold(None, |acc: Option<u64>, v| {
        Some(acc.unwrap_or(0).checked_add(v).expect("parse succeeded, so the totals cannot overflow"))
    })
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

/// Independent model of `number::parse_u64` built on `str::parse`: ASCII
/// digits only. The parser reads left to right and reports the first
/// problem, so a run of digits that already exceeds `u64::MAX` is
/// `Overflow` even if a bad byte follows it.
pub fn model_u64(token: &[u8]) -> Result<u64, ErrorKind> {
    let digits = |t: &[u8]| -> Option<String> {
        (!t.is_empty() && t.iter().all(u8::is_ascii_digit)).then(|| String::from_utf8_lossy(t).into_owned())
    };
    let run = token.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits(&token[..run]).is_some_and(|p| p.parse::<u64>().is_err()) {
        return Err(ErrorKind::Overflow);
    }
    let all = digits(token).ok_or(ErrorKind::InvalidNumber)?;
    all.parse::<u64>().map_err(|_| ErrorKind::Overflow)
}

/// Independent model of the line split every procfs parser uses: lines end
/// at `\n`, a last line without `\n` counts, nothing follows a final `\n`,
/// and an empty input has no line. Returns `(start offset, bytes)` per line.
#[must_use]
pub fn model_lines(input: &[u8]) -> Vec<(usize, &[u8])> {
    let mut out = Vec::new();
    let mut start = 0;
    for piece in input.split(|&b| b == b'\n') {
        if start == input.len() && piece.is_empty() {
            break; // after a final `\n` (or an empty input): no further line
        }
        out.push((start, piece));
        start += piece.len() + 1;
    }
    out
}

/// Independent model of the field split: maximal runs of bytes other than
/// space and tab, with the index where each starts.
#[must_use]
pub fn model_fields(bytes: &[u8]) -> Vec<(usize, &[u8])> {
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if blank(&bytes[i]) {
            i += 1;
            continue;
        }
        let len = bytes[i..].iter().position(blank).unwrap_or(bytes.len() - i);
        out.push((i, &bytes[i..i + len]));
        i += len;
    }
    out
}

/// Independent model of `format::single::parse_u64` (one `u64` and an
/// optional `\n`): an empty file or empty line is `Empty`, a second line
/// `TrailingData` at its start, a bad number is located at the line start.
pub fn model_single_u64(input: &[u8]) -> Result<u64, ParseError> {
    let lines = model_lines(input);
    let Some(&(_, bytes)) = lines.first() else {
        return Err(ParseError::new(ErrorKind::Empty, 1, 0));
    };
    if let Some(&(start, _)) = lines.get(1) {
        return Err(ParseError::new(ErrorKind::TrailingData, 2, start));
    }
    if bytes.is_empty() {
        return Err(ParseError::new(ErrorKind::Empty, 1, 0));
    }
    model_u64(bytes).map_err(|kind| ParseError::new(kind, 1, 0))
}

/// Like [`check_error`], but also accepts the one error that names a line
/// the input does not have: a required line (the `/proc/net/dev` header)
/// that is missing altogether, located at the end of the input on the line
/// after the last one.
pub fn check_error_or_missing_line(input: &[u8], err: &ParseError) {
    let line = usize::try_from(err.line).expect("u32 fits usize");
    if line_span(input, line).is_some() {
        check_error(input, err);
        return;
    }
    assert_eq!(line, model_lines(input).len() + 1, "{err:?} names a line the input does not have");
    assert_eq!(err.kind, ErrorKind::MissingHeader, "{err:?} names a line the input does not have");
    assert_eq!(usize::try_from(err.offset).ok(), Some(input.len()), "{err:?}: a missing line is at the end");
    assert!(!err.to_string().is_empty());
}

/// Model of the columns of one `/proc/stat` CPU line: the ten known ones
/// (kernel order) and how many numeric columns the line had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuColumns {
    /// `user` .. `guest_nice`; `None` past the end of a short line.
    pub known: [Option<u64>; 10],
    /// Number of columns, vendor extras past the tenth included.
    pub columns: usize,
}

/// Independent model of a CPU line's columns (proc(5) `/proc/stat`):
/// `fields` are the fields after the key as `(index in line, bytes)`. The
/// first ten must be decimal `u64` (the first bad one is the error, at
/// `line_start + index`), later ones are only counted, and fewer than four
/// is `MissingField` right after the key (`line_start + key_end`).
pub fn model_cpu_columns(
    fields: &[(usize, &[u8])],
    line: usize,
    line_start: usize,
    key_end: usize,
) -> Result<CpuColumns, ParseError> {
    let mut known = [None; 10];
    for (slot, &(at, field)) in known.iter_mut().zip(fields) {
        *slot = Some(model_u64(field).map_err(|kind| ParseError::new(kind, line, line_start + at))?);
    }
    if fields.len() < 4 {
        return Err(ParseError::new(ErrorKind::MissingField, line, line_start + key_end));
    }
    Ok(CpuColumns { known, columns: fields.len() })
}

/// Checks every field and accessor of a parsed `CpuTimes` against the
/// model: the named fields, `as_array`, `columns`, `total_ticks` (all but
/// guest and guest_nice, saturating), `busy_ticks`, and `CpuTimes::new`.
pub fn check_cpu_times(t: &stepmon_sysusage::parse::CpuTimes, model: &CpuColumns) {
    use stepmon_sysusage::parse::CpuTimes;

    let fields = [
        Some(t.user),
        Some(t.nice),
        Some(t.system),
        Some(t.idle),
        t.iowait,
        t.irq,
        t.softirq,
        t.steal,
        t.guest,
        t.guest_nice,
    ];
    assert_eq!(fields, model.known, "CpuTimes fields differ from the model");
    assert_eq!(t.columns, model.columns);
    assert_eq!(t.as_array(), fields, "as_array() differs from the fields");
    for (i, value) in fields.iter().enumerate() {
        assert_eq!(value.is_some(), i < t.columns, "column {i} of {}", t.columns);
    }
    let total: u128 = fields[..8].iter().flatten().map(|&v| u128::from(v)).sum();
    let total = u64::try_from(total).unwrap_or(u64::MAX);
    assert_eq!(t.total_ticks(), total);
    assert_eq!(t.busy_ticks(), total.saturating_sub(t.idle).saturating_sub(t.iowait.unwrap_or(0)));
    assert!(t.busy_ticks() <= t.total_ticks());
    let base = CpuTimes::new(t.user, t.nice, t.system, t.idle);
    assert_eq!(
        base.as_array(),
        [Some(t.user), Some(t.nice), Some(t.system), Some(t.idle), None, None, None, None, None, None]
    );
    assert_eq!(base.columns, 4);
    if t.columns == 4 {
        assert_eq!(base, *t);
    }
    assert_eq!(CpuTimes::COLUMNS.len(), 10);
}
