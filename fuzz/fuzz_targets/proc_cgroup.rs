//! `/proc/self/cgroup`: `ProcCgroup` (fully iterated), every `CgroupEntry`
//! field, `is_unified`, `controller_names` (fully consumed) and
//! `unified_entry`, checked against a split of each line on its first two
//! colons.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::lines::Lines;
use stepmon_cgroupfs_parse::proc_cgroup::{ProcCgroup, unified_entry};
use stepmon_fuzz::check_error;

fuzz_target!(|data: &[u8]| {
    let mut lines = Lines::new(data);
    let mut entries = Vec::new();
    let mut first_err = None;
    for entry in ProcCgroup::new(data) {
        let line = lines.next().expect("one entry per line");
        match entry {
            Ok(e) => {
                let mut parts = line.bytes.splitn(3, |&b| b == b':');
                let (id, controllers, path) = (parts.next(), parts.next(), parts.next());
                let (Some(id), Some(controllers), Some(path)) = (id, controllers, path) else {
                    panic!("accepted a line without two colons: {line:?}");
                };
                assert_eq!(stepmon_cgroupfs_parse::number::parse_u32(id), Ok(e.hierarchy_id));
                assert_eq!(e.controllers.as_bytes(), controllers);
                let mut printed = e.path.to_vec();
                if e.deleted {
                    printed.extend_from_slice(b" (deleted)");
                }
                assert_eq!(printed, path, "path plus deleted suffix differs from the line");
                assert!(e.path.starts_with(b"/"));
                assert_eq!(e.is_unified(), e.hierarchy_id == 0 && e.controllers.is_empty());
                let names: Vec<&str> = e.controller_names().collect();
                assert!(names.iter().all(|n| !n.is_empty() && !n.contains(',')));
                let nonempty: Vec<&str> = e.controllers.split(',').filter(|c| !c.is_empty()).collect();
                assert_eq!(names, nonempty);
                entries.push(e);
            }
            Err(err) => {
                check_error(data, &err);
                assert!(first_err.is_none(), "ProcCgroup continued after an error");
                first_err = Some(err);
            }
        }
    }
    if first_err.is_none() {
        assert!(lines.next().is_none(), "ProcCgroup skipped a line");
    }

    match (unified_entry(data), first_err) {
        (Ok(found), None) => assert_eq!(found, entries.iter().find(|e| e.is_unified()).copied()),
        (Err(err), Some(expected)) => assert_eq!(err, expected),
        (got, expected) => panic!("unified_entry gave {got:?}, ProcCgroup's first error is {expected:?}"),
    }
});
