//! `cgroup.stat`: `CgroupStat::parse`, its `nr_descendants` /
//! `nr_dying_descendants` fields, `subsystems`, `dying_subsystems` (fully
//! consumed) and `subsystem`, checked against the FlatKeyed model.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_cgroupfs_parse::format::flat::FlatKeyed;
use stepmon_cgroupfs_parse::{CgroupStat, ParseError};
use stepmon_fuzz::check_error;

struct Model<'a> {
    nr_descendants: Option<u64>,
    nr_dying_descendants: Option<u64>,
    live: Vec<(&'a str, u64)>,
    dying: Vec<(&'a str, u64)>,
}

fn model(data: &[u8]) -> Result<Model<'_>, ParseError> {
    let mut m = Model { nr_descendants: None, nr_dying_descendants: None, live: vec![], dying: vec![] };
    for entry in FlatKeyed::new(data) {
        let entry = entry?;
        if entry.key == "nr_descendants" {
            m.nr_descendants = Some(entry.value_u64()?);
        } else if entry.key == "nr_dying_descendants" {
            m.nr_dying_descendants = Some(entry.value_u64()?);
        } else if let Some(c) = entry.key.strip_prefix("nr_subsys_") {
            m.live.push((c, entry.value_u64()?));
        } else if let Some(c) = entry.key.strip_prefix("nr_dying_subsys_") {
            m.dying.push((c, entry.value_u64()?));
        }
    }
    Ok(m)
}

fuzz_target!(|data: &[u8]| {
    match (CgroupStat::parse(data), model(data)) {
        (Ok(stat), Ok(m)) => {
            assert_eq!((stat.nr_descendants, stat.nr_dying_descendants), (m.nr_descendants, m.nr_dying_descendants));
            let live: Vec<_> = stat.subsystems().map(|c| (c.controller, c.count)).collect();
            let dying: Vec<_> = stat.dying_subsystems().map(|c| (c.controller, c.count)).collect();
            assert_eq!(live, m.live);
            assert_eq!(dying, m.dying);
            for (controller, _) in &live {
                let first = live.iter().find(|(c, _)| c == controller).map(|(_, n)| *n);
                assert_eq!(stat.subsystem(controller), first);
            }
            for (controller, _) in &dying {
                if !live.iter().any(|(c, _)| c == controller) {
                    assert_eq!(stat.subsystem(controller), None, "dying count reported as live");
                }
            }
            if !live.iter().any(|(c, _)| *c == "no_such_ctrl") {
                assert_eq!(stat.subsystem("no_such_ctrl"), None);
            }
        }
        (Err(err), Err(expected)) => {
            assert_eq!(err, expected);
            check_error(data, &err);
        }
        (Ok(_), Err(expected)) => panic!("parse succeeded, model expected {expected:?}"),
        (Err(err), Ok(_)) => panic!("parse failed with {err:?}, model succeeded"),
    }
});
