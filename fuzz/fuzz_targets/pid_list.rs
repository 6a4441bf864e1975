//! `cgroup.procs` / `cgroup.threads`: `PidList::parse`, `iter` (fully
//! consumed), `len` and `is_empty`, checked against the `NewlineList`
//! building block and `number::parse_u32`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::format::list::NewlineList;
use stepmon_cgroupfs_parse::number::parse_u32;
use stepmon_cgroupfs_parse::{ParseError, PidList};
use stepmon_fuzz::check_error;

fn model(data: &[u8]) -> Result<Vec<u32>, ParseError> {
    NewlineList::new(data)
        .map(|line| {
            let line = line?;
            parse_u32(line.bytes).map_err(|kind| line.error(kind))
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    match (PidList::parse(data), model(data)) {
        (Ok(list), Ok(pids)) => {
            let listed: Vec<u32> = list.iter().collect();
            assert_eq!(listed.len(), list.len(), "iter().count() != len()");
            assert_eq!(list.is_empty(), list.iter().next().is_none());
            assert_eq!(listed, pids);
            // Printing the PIDs back gives an equal list.
            let printed: String = listed.iter().map(|p| format!("{p}\n")).collect();
            let reparsed = PidList::parse(printed.as_bytes()).expect("printed PIDs parse");
            assert_eq!(reparsed.iter().collect::<Vec<_>>(), listed);
        }
        (Err(err), Err(expected)) => {
            assert_eq!(err, expected);
            check_error(data, &err);
        }
        (parsed, expected) => panic!("parse gave {parsed:?}, model gave {expected:?}"),
    }
});
