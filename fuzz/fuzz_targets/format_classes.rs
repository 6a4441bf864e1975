//! The format-class building blocks on arbitrary input:
//! `lines::{Lines (+finish), Line::{split_once, error, error_at}, Fields
//! (+remainder), is_blank}`, `format::flat::{FlatKeyed, FlatEntry::{value_u64,
//! convert}, for_each}`, `format::nested::{NestedKeyed, NestedLine::{line,
//! error, pairs}, NestedPair::{value_u64, convert}}`,
//! `format::list::{SpaceList, NewlineList}` and
//! `number::{parse_u64, parse_u32, parse_i64, parse_c_int_counter,
//! Hundredths::{parse, as_f64, Display}}`, every iterator fully consumed.
//! Numbers are checked against models built on `str::parse`; every yielded
//! slice must sit at the offset it claims.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::ErrorKind;
use stepmon_cgroupfs_parse::format::flat::{self, FlatKeyed};
use stepmon_cgroupfs_parse::format::list::{NewlineList, SpaceList};
use stepmon_cgroupfs_parse::format::nested::NestedKeyed;
use stepmon_cgroupfs_parse::lines::{Fields, Lines, is_blank};
use stepmon_cgroupfs_parse::number::{Hundredths, parse_c_int_counter, parse_i64, parse_u32, parse_u64};
use stepmon_fuzz::check_error;

fn digits(token: &[u8]) -> Option<&str> {
    (!token.is_empty() && token.iter().all(u8::is_ascii_digit)).then(|| std::str::from_utf8(token).expect("ASCII"))
}

/// Unsigned decimal model built on `str::parse`: digits only. The parser
/// reads left to right and reports the first problem, so a run of digits
/// that already exceeds `u64::MAX` is `Overflow` even if a bad byte follows.
fn model_u64(token: &[u8]) -> Result<u64, ErrorKind> {
    let run = token.iter().take_while(|b| b.is_ascii_digit()).count();
    let prefix = digits(&token[..run]);
    if prefix.is_some_and(|p| p.parse::<u64>().is_err()) {
        return Err(ErrorKind::Overflow);
    }
    let d = digits(token).ok_or(ErrorKind::InvalidNumber)?;
    d.parse::<u64>().map_err(|_| ErrorKind::Overflow)
}

fn model_i64(token: &[u8]) -> Result<i64, ErrorKind> {
    match token.split_first() {
        Some((b'-', magnitude)) => {
            let m = model_u64(magnitude)?;
            format!("-{m}").parse::<i64>().map_err(|_| ErrorKind::Overflow)
        }
        _ => i64::try_from(model_u64(token)?).map_err(|_| ErrorKind::Overflow),
    }
}

fn model_c_int(token: &[u8]) -> Result<u64, ErrorKind> {
    match token.split_first() {
        Some((b'-', rest)) => {
            let m = model_u64(rest)?;
            if m == 0 {
                Err(ErrorKind::InvalidNumber)
            } else if m > 1 << 31 {
                Err(ErrorKind::Overflow)
            } else {
                Ok((1 << 32) - m)
            }
        }
        _ => {
            let v = model_u64(token)?;
            if v > u64::from(u32::MAX) { Err(ErrorKind::Overflow) } else { Ok(v) }
        }
    }
}

fn model_hundredths(token: &[u8]) -> Result<Hundredths, ErrorKind> {
    let (int, frac) = match token.iter().position(|&b| b == b'.') {
        Some(dot) => (&token[..dot], Some(&token[dot + 1..])),
        None => (token, None),
    };
    let frac_value: u128 = match frac {
        None => 0,
        Some(f) if (1..=2).contains(&f.len()) && f.iter().all(u8::is_ascii_digit) => {
            let v = u128::from(f[0] - b'0') * 10;
            v + f.get(1).map_or(0, |d| u128::from(d - b'0'))
        }
        Some(_) => return Err(ErrorKind::InvalidNumber),
    };
    let int = model_u64(int)?;
    u64::try_from(u128::from(int) * 100 + frac_value).map(Hundredths).map_err(|_| ErrorKind::Overflow)
}

fn check_number(token: &[u8]) {
    let u = parse_u64(token);
    assert_eq!(u, model_u64(token), "parse_u64({token:?})");
    assert_eq!(parse_u32(token), u.and_then(|v| u32::try_from(v).map_err(|_| ErrorKind::Overflow)));
    assert_eq!(parse_i64(token), model_i64(token), "parse_i64({token:?})");
    assert_eq!(parse_c_int_counter(token), model_c_int(token), "parse_c_int_counter({token:?})");
    let h = Hundredths::parse(token);
    assert_eq!(h, model_hundredths(token), "Hundredths::parse({token:?})");
    if let Ok(h) = h {
        check_hundredths(h);
        if let Ok(v) = u {
            assert_eq!(Some(h.0), v.checked_mul(100));
        }
    }
}

fn check_hundredths(h: Hundredths) {
    let printed = h.to_string();
    assert_eq!(Hundredths::parse(printed.as_bytes()), Ok(h), "Display round trip of {h:?} via {printed}");
    let (int, frac) = printed.split_once('.').expect("two decimals are always printed");
    assert_eq!(frac.len(), 2);
    assert_eq!(int.parse::<u64>().ok(), Some(h.0 / 100));
    assert!(h.as_f64().is_finite() && h.as_f64() >= 0.0);
}

fuzz_target!(|data: &[u8]| {
    check_number(data);
    if let Some(word) = data.get(..8) {
        check_hundredths(Hundredths(u64::from_le_bytes(word.try_into().expect("8 bytes"))));
    }
    for &b in data {
        assert_eq!(is_blank(b), b == b' ' || b == b'\t');
    }

    // Lines: consecutive, at the offsets they claim, and rebuilding the input.
    let mut rebuilt = Vec::with_capacity(data.len());
    let mut expected_start = 0usize;
    let mut lines = Lines::new(data);
    for (i, line) in lines.by_ref().enumerate() {
        assert_eq!(line.number, i + 1);
        assert_eq!(line.start, expected_start);
        assert_eq!(&data[line.start..line.start + line.bytes.len()], line.bytes);
        assert!(!line.bytes.contains(&b'\n'));
        expected_start += line.bytes.len() + 1;
        if i > 0 {
            rebuilt.push(b'\n');
        }
        rebuilt.extend_from_slice(line.bytes);

        assert_eq!(line.error(ErrorKind::Empty).offset as usize, line.start);
        assert_eq!(line.error_at(ErrorKind::Empty, line.bytes.len()).offset as usize, line.start + line.bytes.len());
        check_error(data, &line.error_at(ErrorKind::InvalidField, line.bytes.len()));
        for sep in *b": =" {
            if let Some((head, tail, at)) = line.split_once(sep) {
                assert!(!head.contains(&sep));
                assert_eq!(at, head.len() + 1);
                assert_eq!(line.bytes[head.len()], sep);
                assert_eq!(&line.bytes[at..], tail);
            } else {
                assert!(!line.bytes.contains(&sep));
            }
        }

        // Fields: non-empty, blank-free, in order, at their index; together
        // they hold every non-blank byte of the line.
        let mut fields = Fields::new(line.bytes);
        let (rem_at, rem) = fields.remainder();
        assert_eq!(&line.bytes[rem_at..], rem);
        let mut last_end = 0usize;
        let mut field_bytes = 0usize;
        for (at, field) in fields.by_ref() {
            assert!(!field.is_empty() && !field.iter().any(|&b| is_blank(b)));
            assert!(at >= last_end);
            assert_eq!(&line.bytes[at..at + field.len()], field);
            assert!(line.bytes[last_end..at].iter().all(|&b| is_blank(b)));
            last_end = at + field.len();
            field_bytes += field.len();
            check_number(field);
        }
        assert!(fields.next().is_none());
        assert_eq!(fields.remainder().1, &b""[..]);
        assert_eq!(field_bytes, line.bytes.iter().filter(|&&b| !is_blank(b)).count());
    }
    if data.ends_with(b"\n") {
        rebuilt.push(b'\n');
    }
    assert_eq!(rebuilt, data, "Lines lost or added bytes");
    assert!(lines.next().is_none());
    let mut finished = Lines::new(data);
    finished.finish();
    assert!(finished.next().is_none());

    // FlatKeyed and for_each.
    let mut ok_entries = 0usize;
    let mut flat_err = None;
    let mut flat = FlatKeyed::new(data);
    for entry in flat.by_ref() {
        match entry {
            Ok(e) => {
                assert!(flat_err.is_none());
                ok_entries += 1;
                assert!(!e.key.is_empty() && e.key.bytes().all(|b| b.is_ascii_graphic() && b != b'='));
                assert!(!e.value.is_empty());
                assert_eq!(&data[e.value_offset..e.value_offset + e.value.len()], e.value);
                assert_eq!(data[e.value_offset - 1], b' ');
                assert!(e.line >= 1);
                match e.value_u64() {
                    Ok(v) => assert_eq!(parse_u64(e.value), Ok(v)),
                    Err(err) => {
                        assert_eq!((err.kind, err.offset as usize), (model_u64(e.value).unwrap_err(), e.value_offset));
                        check_error(data, &err);
                    }
                }
                assert_eq!(e.convert(parse_c_int_counter).map_err(|err| err.kind), model_c_int(e.value));
                check_number(e.value);
            }
            Err(err) => {
                check_error(data, &err);
                assert!(flat_err.is_none(), "FlatKeyed continued after an error");
                flat_err = Some(err);
            }
        }
    }
    assert!(flat.next().is_none());
    let mut visited = 0usize;
    let result = flat::for_each(data, |_| {
        visited += 1;
        Ok(())
    });
    assert_eq!(visited, ok_entries);
    assert_eq!(result.err(), flat_err);

    // NestedKeyed, pairs.
    let mut nested_err = false;
    for line in NestedKeyed::new(data) {
        match line {
            Ok(l) => {
                assert!(!nested_err, "NestedKeyed continued after an error");
                assert!(!l.key.is_empty() && l.key.bytes().all(|b| b.is_ascii_graphic() && b != b'='));
                assert!(l.line() >= 1);
                check_error(data, &l.error(ErrorKind::InvalidField));
                let mut pairs = l.pairs();
                let mut pair_err = false;
                for pair in pairs.by_ref() {
                    match pair {
                        Ok(p) => {
                            assert!(!pair_err, "pairs continued after an error");
                            assert_eq!(p.line, l.line());
                            assert!(!p.key.is_empty() && p.key.bytes().all(|b| b.is_ascii_graphic() && b != b'='));
                            assert_eq!(&data[p.value_offset..p.value_offset + p.value.len()], p.value);
                            assert_eq!(data[p.value_offset - 1], b'=');
                            assert!(!p.value.contains(&b' ') && !p.value.contains(&b'\n'));
                            assert_eq!(p.value_u64().map_err(|e| e.kind), model_u64(p.value));
                            assert_eq!(p.convert(Hundredths::parse).map_err(|e| e.kind), model_hundredths(p.value));
                            if let Err(err) = p.value_u64() {
                                check_error(data, &err);
                            }
                        }
                        Err(err) => {
                            check_error(data, &err);
                            pair_err = true;
                        }
                    }
                }
                assert!(pairs.next().is_none());
            }
            Err(err) => {
                check_error(data, &err);
                nested_err = true;
            }
        }
    }

    // SpaceList and NewlineList.
    let mut space = SpaceList::new(data);
    let mut space_err = false;
    for item in space.by_ref() {
        match item {
            Ok(name) => {
                assert!(!space_err, "SpaceList continued after an error");
                assert!(!name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic() && b != b'='));
            }
            Err(err) => {
                check_error(data, &err);
                space_err = true;
            }
        }
    }
    assert!(space.next().is_none());
    let mut newline = NewlineList::new(data);
    let mut newline_err = false;
    for item in newline.by_ref() {
        match item {
            Ok(line) => {
                assert!(!newline_err, "NewlineList continued after an error");
                assert!(!line.bytes.is_empty() && line.bytes.iter().all(|&b| b.is_ascii_graphic() || b == b' '));
                assert_eq!(&data[line.start..line.start + line.bytes.len()], line.bytes);
            }
            Err(err) => {
                check_error(data, &err);
                newline_err = true;
            }
        }
    }
    assert!(newline.next().is_none());
});
