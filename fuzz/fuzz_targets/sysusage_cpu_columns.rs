//! The time columns of a `/proc/stat` CPU line (crate `stepmon-sysusage`):
//! `CpuTimes::parse_columns` checked against the column model (errors
//! included), every field and accessor of the result (`as_array`,
//! `columns`, `total_ticks`, `busy_ticks`, `new`, `COLUMNS`), and the same
//! columns behind a `cpu ` and a `cpu7 ` key through `KernelStat::parse`,
//! which must give the same times, or the same error shifted to its place
//! in the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::ErrorKind;
use stepmon_fuzz::{check_cpu_times, check_error, model_cpu_columns, model_fields};
use stepmon_sysusage::parse::{CpuTimes, KernelStat};

fuzz_target!(|data: &[u8]| {
    let parsed = CpuTimes::parse_columns(data);
    let model = model_cpu_columns(&model_fields(data), 1, 0, 0);
    match (&parsed, &model) {
        (Ok(times), Ok(expected)) => check_cpu_times(times, expected),
        (Err(err), Err(expected)) => {
            assert_eq!(err, expected, "error differs from the model");
            check_error(data, err);
        }
        (got, expected) => panic!("parse_columns gave {got:?}, model {expected:?}"),
    }

    // A newline would start another /proc/stat line; without one the
    // columns are a whole CPU line once a key is put in front.
    if data.contains(&b'\n') {
        return;
    }
    for key in [&b"cpu "[..], b"cpu7 "] {
        let mut line = key.to_vec();
        line.extend_from_slice(data);
        let stat = KernelStat::parse(&line);
        match &parsed {
            Ok(times) => {
                let stat = stat.expect("valid columns make a valid CPU line");
                if key == b"cpu " {
                    assert_eq!(stat.total, Some(*times));
                    assert_eq!(stat.cpu_count(), 0);
                } else {
                    assert_eq!(stat.total, None);
                    let cpus: Vec<_> = stat.per_cpu().collect();
                    assert_eq!(cpus.len(), 1);
                    assert_eq!((cpus[0].cpu, cpus[0].times), (7, *times));
                    assert_eq!(stat.cpu(7), Some(*times));
                }
            }
            Err(err) => {
                let err_in_file = stat.expect_err("bad columns make a bad CPU line");
                // Shifted by the key; a missing column is reported right after the key.
                let offset = if err.kind == ErrorKind::MissingField {
                    key.len() as u32 - 1
                } else {
                    err.offset + key.len() as u32
                };
                assert_eq!((err_in_file.kind, err_in_file.line, err_in_file.offset), (err.kind, 1, offset));
                check_error(&line, &err_in_file);
            }
        }
    }
});
