//! A cgroup per step, made and removed, against one reused from a pool (as
//! Buck2 keeps one): what each costs a step on this host, side by side.
//!
//! - `v2 new`: the step's cgroup v2 pair as the runner makes it (a parent
//!   and its `step` leaf, `mkdir` twice, `rmdir` twice);
//! - `v1 memory new` / `v1 pids new`: the step's v1 memory and pids cgroups
//!   (a hybrid host's memory and pids accounting);
//! - `v1 memory reused`: what a reused v1 memory cgroup needs to give the
//!   next step its own peak: `memory.force_empty` (the previous step's page
//!   cache is still charged to it) and a reset of `memory.max_usage_in_bytes`
//!   (Documentation/admin-guide/cgroup-v1/memory.rst, 5.1 and 5.4);
//! - a reused v2 cgroup or v1 pids cgroup needs no write, but cannot give
//!   the next step its own peak at all: v2 `memory.peak` is reset per open
//!   file only from Linux 6.12 and v1 has no `pids.peak` reset.
//!
//! Needs root and this process's own cgroup in each hierarchy writable;
//! says SKIPPED otherwise. `cargo bench -p stepmon-benches --bench cgroup_pool`.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

/// This process's cgroup directory in the hierarchy mounted at `mount`
/// (`controller` as `/proc/self/cgroup` names it; "" for cgroup v2).
fn own_dir(mount: &str, controller: &str) -> Option<PathBuf> {
    let cgroup = fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cgroup.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
        (names.split(',').any(|n| n == controller) || (controller.is_empty() && names.is_empty())).then_some(path)
    })?;
    let dir = Path::new(mount).join(path.trim_start_matches('/'));
    dir.is_dir().then_some(dir)
}

fn pool(c: &mut Criterion) {
    let name = format!("stepmon-bench-pool.{}", std::process::id());
    let mut group = c.benchmark_group("cgroup_pool");
    if let Some(base) = own_dir("/sys/fs/cgroup/unified", "").or_else(|| own_dir("/sys/fs/cgroup", "")) {
        let parent = base.join(&name);
        let leaf = parent.join("step");
        group.bench_function("v2 new", |b| {
            b.iter(|| {
                fs::create_dir(&parent).unwrap();
                fs::create_dir(&leaf).unwrap();
                fs::remove_dir(&leaf).unwrap();
                fs::remove_dir(&parent).unwrap();
            });
        });
    } else {
        println!("SKIPPED v2 new: no cgroup v2 directory of this process");
    }
    for controller in ["memory", "pids"] {
        let Some(base) = own_dir(&format!("/sys/fs/cgroup/{controller}"), controller) else {
            println!("SKIPPED v1 {controller}: no v1 {controller} hierarchy here");
            continue;
        };
        let dir = base.join(&name);
        group.bench_function(format!("v1 {controller} new"), |b| {
            b.iter(|| {
                fs::create_dir(&dir).unwrap();
                fs::remove_dir(&dir).unwrap();
            });
        });
        if controller == "memory" {
            fs::create_dir(&dir).unwrap();
            group.bench_function("v1 memory reused", |b| {
                b.iter(|| {
                    fs::write(dir.join("memory.force_empty"), "0").unwrap();
                    fs::write(dir.join("memory.max_usage_in_bytes"), "0").unwrap();
                });
            });
            fs::remove_dir(&dir).unwrap();
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = pool
}
criterion_main!(benches);
