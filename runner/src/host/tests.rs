use std::path::{Path, PathBuf};

use stepmon_sampler::cgroup::discover;

use super::checks::{controller_check, layout, peak_check};
use super::facts::Facts;
use super::{Controllers, Status, V1Binding};

fn facts(own: &str, lists: [&[&str]; 3], v1: &[(&str, u32)]) -> Facts {
    let strings = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    Facts {
        kernel: "6.1.0".into(),
        euid: 1000,
        location: Ok(discover::Cgroup2 {
            mount_point: PathBuf::from("/sys/fs/cgroup"),
            own_dir: PathBuf::from(own),
            pure_v2: true,
        }),
        mount_options: "rw,nsdelegate".into(),
        v1_mounts: false,
        controllers: Controllers {
            root: strings(lists[0]),
            own: strings(lists[1]),
            own_subtree_control: strings(lists[2]),
            cgroup_v1: v1.iter().map(|(c, h)| V1Binding { controller: (*c).into(), hierarchy: *h }).collect(),
        },
        probe: None,
    }
}

#[test]
fn controller_verdicts() {
    let scope = "/sys/fs/cgroup/user.slice/run-1.scope";
    let all: &[&str] = &["cpu", "io", "memory", "pids"];
    // Enabled for the children of our cgroup: runs get it.
    let f = facts(scope, [all, all, &["memory"]], &[]);
    assert_eq!(controller_check(&f, Path::new(scope), "memory").status, Status::Ok);
    // In our cgroup but not passed on: a delegated --cgroup-parent fixes it.
    let c = controller_check(&f, Path::new(scope), "cpu");
    assert_eq!(c.status, Status::Missing);
    assert!(c.hint.unwrap().ends_with(crate::DELEGATED_RUN));
    // At the root only.
    let f = facts(scope, [all, &["memory"], &[]], &[]);
    assert!(controller_check(&f, Path::new(scope), "io").reason.unwrap().contains("not passed down"));
    // On the root cgroup itself the hint is to enable it there.
    let f = facts("/sys/fs/cgroup", [all, all, &[]], &[]);
    assert!(controller_check(&f, Path::new("/sys/fs/cgroup"), "pids").hint.unwrap().starts_with("echo +pids"));
    // Bound to v1 (io under its v1 name blkio), or not there at all.
    let f = facts(scope, [&[], &[], &[]], &[("blkio", 7)]);
    assert!(controller_check(&f, Path::new(scope), "io").reason.unwrap().contains("hierarchy 7 (blkio"));
    assert!(controller_check(&f, Path::new(scope), "memory").reason.unwrap().contains("not available"));
    assert_eq!(layout(&f), "hybrid");
    assert_eq!(layout(&facts(scope, [&[], &[], &[]], &[])), "unified");
}

#[test]
fn peaks_are_unknown_without_a_cgroup_to_look_at() {
    let f = facts("/sys/fs/cgroup", [&[], &[], &[]], &[("memory", 4)]);
    let c = peak_check(&f, Path::new("/sys/fs/cgroup"), "memory", "memory.peak", "memoryStat.peak");
    assert_eq!(
        (c.status, c.reason.as_deref()),
        (Status::Unknown, Some("unknown on this host: memory controller not in v2"))
    );
    let c = peak_check(&f, Path::new("/sys/fs/cgroup"), "pids", "pids.peak", "stepmon.pidsPeak");
    assert_eq!(c.status, Status::Unknown);
}
