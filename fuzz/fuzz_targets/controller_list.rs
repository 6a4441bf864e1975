//! `cgroup.controllers` / `cgroup.subtree_control`: `ControllerList::parse`,
//! `iter` (fully consumed), `len`, `is_empty` and `contains`, checked against
//! the `SpaceList` building block.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::ControllerList;
use stepmon_cgroupfs_parse::format::list::SpaceList;
use stepmon_fuzz::check_error;

fuzz_target!(|data: &[u8]| {
    let model: Result<Vec<&str>, _> = SpaceList::new(data).collect();
    match (ControllerList::parse(data), model) {
        (Ok(list), Ok(items)) => {
            let names: Vec<&str> = list.iter().collect();
            assert_eq!(names.len(), list.len(), "iter().count() != len()");
            assert_eq!(list.is_empty(), list.iter().next().is_none());
            assert_eq!(names, items);
            for name in &names {
                assert!(!name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic() && b != b'='));
                assert!(list.contains(name));
            }
            assert!(!list.contains(""));
            assert!(!list.contains("cpu io"), "a name with a space cannot be listed");
        }
        (Err(err), Err(expected)) => {
            assert_eq!(err, expected);
            check_error(data, &err);
        }
        (parsed, expected) => panic!("parse gave {parsed:?}, SpaceList gave {expected:?}"),
    }
});
