//! `/proc/loadavg` (crate `stepmon-sysusage`): `LoadAvg::parse` checked
//! against an independent model of `L1 L5 L15 R/T P` (proc(5); one line,
//! extra fields ignored, a second line is `TrailingData`), errors included;
//! `LoadAvg::new` rebuilds the same value, and printing a reading the way
//! the kernel does parses back to it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::number::Hundredths;
use stepmon_cgroupfs_parse::{ErrorKind, ParseError};
use stepmon_fuzz::{check_error, model_fields, model_lines, model_u64};
use stepmon_sysusage::parse::LoadAvg;

/// `(load1, load5, load15, runnable, threads, last_pid)`.
type Reading = ([Hundredths; 3], u64, u64, u64);

fn model(input: &[u8]) -> Result<Reading, ParseError> {
    let lines = model_lines(input);
    let Some(&(start, bytes)) = lines.first() else {
        return Err(ParseError::new(ErrorKind::Empty, 1, 0));
    };
    if let Some(&(extra, _)) = lines.get(1) {
        return Err(ParseError::new(ErrorKind::TrailingData, 2, extra));
    }
    let err = |kind, at: usize| ParseError::new(kind, 1, start + at);
    let fields = model_fields(bytes);
    let field = |i: usize| fields.get(i).copied().ok_or_else(|| err(ErrorKind::MissingField, bytes.len()));
    let mut load = [Hundredths(0); 3];
    for (i, slot) in load.iter_mut().enumerate() {
        let (at, token) = field(i)?;
        // `Hundredths::parse` is the shared building block, checked against
        // its own model by the `format_classes` target.
        *slot = Hundredths::parse(token).map_err(|kind| err(kind, at))?;
    }
    let (at, tasks) = field(3)?;
    let slash = tasks.iter().position(|&b| b == b'/').ok_or_else(|| err(ErrorKind::MissingSeparator, at))?;
    let runnable = model_u64(&tasks[..slash]).map_err(|kind| err(kind, at))?;
    let threads = model_u64(&tasks[slash + 1..]).map_err(|kind| err(kind, at + slash + 1))?;
    let (at, pid) = field(4)?;
    let last_pid = model_u64(pid).map_err(|kind| err(kind, at))?;
    Ok((load, runnable, threads, last_pid))
}

fuzz_target!(|data: &[u8]| {
    match (LoadAvg::parse(data), model(data)) {
        (Ok(l), Ok((load, runnable, threads, last_pid))) => {
            assert_eq!(
                ([l.load1, l.load5, l.load15], l.runnable, l.threads, l.last_pid),
                (load, runnable, threads, last_pid)
            );
            assert_eq!(LoadAvg::new(load, runnable, threads, last_pid), l);
            let printed = format!("{} {} {} {}/{} {}\n", l.load1, l.load5, l.load15, l.runnable, l.threads, l.last_pid);
            assert_eq!(LoadAvg::parse(printed.as_bytes()), Ok(l), "printed as {printed:?}");
            for h in load {
                assert!(h.as_f64().is_finite() && h.as_f64() >= 0.0);
            }
        }
        (Err(err), Err(expected)) => {
            assert_eq!(err, expected, "error differs from the model");
            check_error(data, &err);
        }
        (got, expected) => panic!("LoadAvg::parse gave {got:?}, model {expected:?}"),
    }
});
