//! `/proc/net/dev` (crate `stepmon-netns-stats`): `NetDevLines::new` and
//! its items (consumed to the end, then checked to stay ended),
//! `NetDev::{parse, len, is_empty, interfaces, get, as_bytes}`,
//! `Interface::{name_str, is_loopback}`, `validate_name` and
//! `DevCounters::{from_array, to_array, zip_with, any_below, NAMES}`, all
//! checked against an independent model: two non-blank header lines, then
//! `NAME: c1 .. c16` split at the first `:`, names valid per the kernel's
//! `dev_valid_name()` (1 to 15 bytes, not `.`/`..`, no `/`, `:`, NUL or
//! kernel whitespace). Errors must equal the model's and name a line and
//! an offset inside the input (a missing header line: the line after the
//! last one, at the end of the input).
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::{ErrorKind, ParseError};
use stepmon_fuzz::{check_error, check_error_or_missing_line, model_fields, model_lines, model_u64};
use stepmon_netns_stats::parse::{MAX_NAME_LEN, validate_name};
use stepmon_netns_stats::{DevCounters, Interface, NetDev, NetDevLines};

/// `dev_valid_name()` (`net/core/dev.c`) with the kernel's `isspace()`
/// (`lib/ctype.c`: `\t\n\v\f\r`, space and Latin-1 NBSP 0xA0).
fn model_name(name: &[u8]) -> Result<(), (ErrorKind, usize)> {
    if name.is_empty() || name.len() > 15 || name == b"." || name == b".." {
        return Err((ErrorKind::InvalidKey, 0));
    }
    let bad = |b: &u8| matches!(b, b'/' | b':' | 0 | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ' | 0xa0);
    match name.iter().position(bad) {
        Some(at) => Err((ErrorKind::InvalidKey, at)),
        None => Ok(()),
    }
}

type Device<'a> = (&'a [u8], [u64; 16]);

fn model_line(line: usize, start: usize, bytes: &[u8]) -> Result<Device<'_>, ParseError> {
    let err = |kind, at: usize| ParseError::new(kind, line, start + at);
    if bytes.is_empty() {
        return Err(err(ErrorKind::EmptyLine, 0));
    }
    let colon = bytes.iter().position(|&b| b == b':').ok_or_else(|| err(ErrorKind::MissingSeparator, 0))?;
    let head = &bytes[..colon];
    let pad = head.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    let name = &head[pad..];
    model_name(name).map_err(|(kind, at)| err(kind, pad + at))?;
    let fields = model_fields(&bytes[colon + 1..]);
    let mut columns = [0u64; 16];
    for (i, column) in columns.iter_mut().enumerate() {
        let &(at, token) = fields.get(i).ok_or_else(|| err(ErrorKind::MissingField, bytes.len()))?;
        *column = model_u64(token).map_err(|kind| err(kind, colon + 1 + at))?;
    }
    Ok((name, columns))
}

/// The header check, then the device lines up to and including the first error.
fn model(input: &[u8]) -> Result<Vec<Result<Device<'_>, ParseError>>, ParseError> {
    if input.is_empty() {
        return Err(ParseError::new(ErrorKind::Empty, 1, 0));
    }
    let lines = model_lines(input);
    for number in 1..=2 {
        match lines.get(number - 1) {
            None => return Err(ParseError::new(ErrorKind::MissingHeader, number, input.len())),
            Some(&(start, bytes)) if bytes.iter().all(|&b| b == b' ' || b == b'\t') => {
                return Err(ParseError::new(ErrorKind::MissingHeader, number, start));
            }
            Some(_) => {}
        }
    }
    let mut devices = Vec::new();
    for (index, &(start, bytes)) in lines.iter().enumerate().skip(2) {
        let device = model_line(index + 1, start, bytes);
        let stop = device.is_err();
        devices.push(device);
        if stop {
            break;
        }
    }
    Ok(devices)
}

fn check_interface(i: &Interface<'_>, expected: &Device<'_>) {
    assert_eq!((i.name, i.counters.to_array()), *expected);
    assert!((1..=MAX_NAME_LEN).contains(&i.name.len()), "name of {} bytes", i.name.len());
    assert_eq!(validate_name(i.name), Ok(()));
    assert_eq!(i.name_str(), std::str::from_utf8(i.name).ok());
    assert_eq!(i.is_loopback(), i.name == b"lo");
    assert_eq!(DevCounters::from_array(i.counters.to_array()), i.counters);
}

fn check_pair(a: &DevCounters, b: &DevCounters) {
    let (x, y) = (a.to_array(), b.to_array());
    let diff: Vec<u64> = x.iter().zip(&y).map(|(p, q)| p.saturating_sub(*q)).collect();
    assert_eq!(a.zip_with(b, u64::saturating_sub).to_array().to_vec(), diff);
    let sum: Vec<u64> = x.iter().zip(&y).map(|(p, q)| p.wrapping_add(*q)).collect();
    assert_eq!(a.zip_with(b, u64::wrapping_add).to_array().to_vec(), sum);
    assert_eq!(a.any_below(b), x.iter().zip(&y).any(|(p, q)| p < q));
    assert!(!a.any_below(a));
}

fuzz_target!(|data: &[u8]| {
    assert_eq!(validate_name(data), model_name(data), "validate_name({data:?})");
    assert_eq!(DevCounters::NAMES.len(), DevCounters::COLUMNS);
    assert_eq!(DevCounters::COLUMNS, 16);

    let expected = model(data);
    // NetDevLines: header check, then every item.
    match (NetDevLines::new(data), &expected) {
        (Ok(mut lines), Ok(devices)) => {
            let got: Vec<_> = lines.by_ref().collect();
            assert!(lines.next().is_none() && lines.next().is_none(), "NetDevLines is fused");
            assert_eq!(got.len(), devices.len(), "NetDevLines yielded {got:?}, model {devices:?}");
            for (item, model_item) in got.iter().zip(devices) {
                match (item, model_item) {
                    (Ok(i), Ok(d)) => check_interface(i, d),
                    (Err(err), Err(model_err)) => {
                        assert_eq!(err, model_err);
                        check_error(data, err);
                    }
                    (item, model_item) => panic!("NetDevLines gave {item:?}, model {model_item:?}"),
                }
            }
        }
        (Err(err), Err(model_err)) => {
            assert_eq!(&err, model_err);
            check_error_or_missing_line(data, &err);
        }
        (got, model_result) => panic!("NetDevLines::new gave {got:?}, model {model_result:?}"),
    }

    // NetDev: the whole file validated up front.
    let first_error = match &expected {
        Err(err) => Some(*err),
        Ok(devices) => devices.iter().find_map(|d| d.as_ref().err().copied()),
    };
    match (NetDev::parse(data), first_error) {
        (Ok(dev), None) => {
            let devices: Vec<Device<'_>> = expected.expect("no error").into_iter().map(|d| d.expect("ok")).collect();
            let got: Vec<_> = dev.interfaces().collect();
            assert_eq!(got.len(), devices.len());
            assert_eq!(dev.len(), got.len(), "len() != interfaces().count()");
            assert_eq!(dev.is_empty(), got.is_empty());
            assert_eq!(dev.as_bytes(), data);
            let mut it = dev.interfaces();
            it.by_ref().for_each(drop);
            assert!(it.next().is_none(), "Interfaces is fused");
            for (i, d) in got.iter().zip(&devices) {
                check_interface(i, d);
                let first = got.iter().find(|x| x.name == i.name).map(|x| x.counters);
                assert_eq!(dev.get(i.name), first, "get() is the first device of that name");
            }
            for pair in got.windows(2) {
                check_pair(&pair[0].counters, &pair[1].counters);
                check_pair(&pair[1].counters, &pair[0].counters);
            }
            assert_eq!(dev.get(b""), None);
            assert_eq!(dev.get(b"sixteen-bytes-16"), None, "no device has a 16-byte name");
            assert_eq!(NetDev::parse(data), Ok(dev));
        }
        (Err(err), Some(model_err)) => {
            assert_eq!(err, model_err, "NetDev::parse error differs from the model");
            check_error_or_missing_line(data, &err);
            assert!(err.offset as usize <= data.len());
        }
        (got, model_err) => panic!("NetDev::parse gave {got:?}, model error {model_err:?}"),
    }
});
