//! What this host offers a step, as data (`stepmon doctor` prints it): the
//! cgroup layout, privileges, controllers, PSI, and per resource which rung
//! of the measurement ladder this host and this user get, why, and what
//! would move it up. Every fact comes from the kernel's own files, read
//! with the parser crates; what cannot be known here is reported as
//! unknown, never guessed.
//!
//! Spec: controllers and delegation
//! <https://docs.kernel.org/admin-guide/cgroup-v2.html#enabling-and-disabling>,
//! <https://docs.kernel.org/admin-guide/cgroup-v2.html#delegation>; PSI
//! <https://docs.kernel.org/accounting/psi.html>.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::Serialize;
use stepmon_cgroupfs_parse::format::list::NewlineList;
use stepmon_cgroupfs_parse::mountinfo::{MountInfo, find_cgroup2_mount};
use stepmon_cgroupfs_parse::proc_cgroup::{ProcCgroup, unified_entry};
use stepmon_cgroupfs_parse::{ControllerList, ParseError};
use stepmon_sampler::cgroup::{CgroupProbe, discover};
use stepmon_sampler::model::StepSample;
use stepmon_sysusage::model::SysSample;
use stepmon_sysusage::probe::SysProbe;

use crate::cgroup::placement::{CONTROLLERS, RUN_PREFIX, start_time};
use stepmon_model::source::Rung;

pub mod rungs;
pub mod shape;

/// Outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Works.
    Ok,
    /// Does not work here; `reason` says why.
    Missing,
    /// Cannot be told on this host; `reason` says why.
    Unknown,
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// What was checked.
    pub name: String,
    /// The outcome.
    pub status: Status,
    /// What was found (empty when `reason` says it all).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// Why it is missing or unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Check {
    fn ok(name: impl Into<String>, detail: impl Into<String>) -> Check {
        Check { name: name.into(), status: Status::Ok, detail: detail.into(), reason: None, hint: None }
    }

    fn not(status: Status, name: impl Into<String>, reason: impl Into<String>, hint: Option<String>) -> Check {
        Check { name: name.into(), status, detail: String::new(), reason: Some(reason.into()), hint }
    }
}

/// Controller lists as the kernel shows them.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Controllers {
    /// `cgroup.controllers` of the cgroup2 root.
    pub root: Vec<String>,
    /// `cgroup.controllers` of this process's cgroup.
    pub own: Vec<String>,
    /// `cgroup.subtree_control` of this process's cgroup: what a run's
    /// parent cgroup gets.
    pub own_subtree_control: Vec<String>,
    /// Controllers bound to cgroup v1 hierarchies (from `/proc/self/cgroup`).
    pub cgroup_v1: Vec<V1Binding>,
}

/// A controller bound to a cgroup v1 hierarchy.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct V1Binding {
    /// The v1 controller name (`blkio` for `io`).
    pub controller: String,
    /// The v1 hierarchy ID.
    pub hierarchy: u32,
}

/// The whole report (`--json`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// `uname -r`.
    pub kernel: String,
    /// `unified` (cgroup v2 only), `hybrid` (v2 beside v1 hierarchies),
    /// `v1-only` or `none`.
    pub layout: &'static str,
    /// Where cgroup2 is mounted.
    pub cgroup2_mount: Option<PathBuf>,
    /// This process's cgroup v2 directory.
    pub own_cgroup: Option<PathBuf>,
    /// Effective user ID.
    pub euid: u32,
    /// Controller lists.
    pub controllers: Controllers,
    /// `/sys/kernel/cgroup/delegate`: the files a delegation hands over.
    pub delegate_files: Vec<String>,
    /// `/sys/kernel/cgroup/features`.
    pub cgroup_features: Vec<String>,
    /// Whether a step gets a cgroup of its own here (cgroup v2 found, a run
    /// cgroup can be created). Without one `stepmon run` still runs and
    /// measures the step, from the rungs below.
    pub step_cgroup: bool,
    /// The shape of this process's cgroup ([`shape::Shape`]), which decides
    /// the rung; `None` without cgroup v2.
    pub shape: Option<shape::Shape>,
    /// Per resource, the rung of the measurement ladder a step gets here.
    pub rungs: Vec<rungs::ResourceRung>,
    /// One entry per check.
    pub checks: Vec<Check>,
}

fn parse_error(e: ParseError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

fn controller_list(file: &Path) -> io::Result<Vec<String>> {
    let bytes = fs::read(file)?;
    Ok(ControllerList::parse(&bytes).map_err(parse_error)?.iter().map(str::to_owned).collect())
}

fn newline_list(file: &Path) -> io::Result<Vec<String>> {
    let bytes = fs::read(file)?;
    NewlineList::new(&bytes)
        .map(|item| item.map(|line| String::from_utf8_lossy(line.bytes).into_owned()).map_err(parse_error))
        .collect()
}

/// The v1 name of a v2 controller (`io` was `blkio`).
fn v1_name(controller: &str) -> &str {
    if controller == "io" { "blkio" } else { controller }
}

/// (major, minor) of a release such as `6.18.44-fc-v657`.
pub(crate) fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// [`discover::locate`] with the own directory normalized (the root cgroup
/// comes back as `<mount>/`, with a trailing slash).
pub fn locate() -> Result<discover::Cgroup2, discover::DiscoverError> {
    discover::locate().map(|mut location| {
        location.own_dir = location.own_dir.components().collect();
        location
    })
}

/// Whether the effective user may write `path` (`faccessat(AT_EACCESS)`;
/// also fails on a read-only mount).
fn writable(path: &Path) -> bool {
    use rustix::fs::{Access, AtFlags, CWD, accessat};
    accessat(CWD, path, Access::WRITE_OK, AtFlags::EACCESS).is_ok()
}

/// A cgroup made for the checks under this process's cgroup, removed on drop.
/// It is named like a run parent so that `stepmon gc` removes it should
/// doctor be killed before it does.
struct ProbeCgroup {
    dir: PathBuf,
}

impl ProbeCgroup {
    fn create(own: &Path) -> io::Result<ProbeCgroup> {
        let pid = std::process::id();
        let dir = own.join(format!("{RUN_PREFIX}{pid}.{}", start_time(pid).unwrap_or(0)));
        fs::create_dir(&dir)?;
        Ok(ProbeCgroup { dir })
    }
}

impl Drop for ProbeCgroup {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.dir);
    }
}

fn sample(dir: &Path) -> Option<StepSample> {
    CgroupProbe::open(dir).ok().map(|mut probe| probe.read(Timestamp::now()))
}

/// The `missing` reason the sampler gives for `field`, if any.
fn missing_reason(sample: &StepSample, field: &str) -> Option<String> {
    sample.stepmon.missing.iter().find(|m| m.field == field).map(|m| m.reason.to_string())
}

/// Everything doctor looks at, gathered once.
struct Facts {
    kernel: String,
    euid: u32,
    location: Result<discover::Cgroup2, discover::DiscoverError>,
    /// cgroup2 superblock options (`nsdelegate`, ...).
    mount_options: String,
    /// Mounts of type `cgroup` (v1) exist.
    v1_mounts: bool,
    controllers: Controllers,
    probe: Option<io::Result<ProbeCgroup>>,
}

fn gather() -> Facts {
    let kernel = rustix::system::uname().release().to_string_lossy().into_owned();
    let euid = rustix::process::geteuid().as_raw();
    let location = locate();
    let proc_cgroup = fs::read("/proc/self/cgroup").unwrap_or_default();
    let mountinfo = fs::read("/proc/self/mountinfo").unwrap_or_default();
    let mut controllers = Controllers::default();
    for entry in ProcCgroup::new(&proc_cgroup).flatten().filter(|e| !e.is_unified()) {
        for name in entry.controller_names().filter(|n| !n.starts_with("name=")) {
            controllers.cgroup_v1.push(V1Binding { controller: name.to_owned(), hierarchy: entry.hierarchy_id });
        }
    }
    let v1_mounts = MountInfo::new(&mountinfo).flatten().any(|m| m.fs_type == "cgroup");
    let mount_options = unified_entry(&proc_cgroup)
        .ok()
        .flatten()
        .and_then(|entry| find_cgroup2_mount(&mountinfo, entry.path).ok().flatten())
        .map(|m| m.super_options.to_owned())
        .unwrap_or_default();
    let mut probe = None;
    if let Ok(loc) = &location {
        controllers.root = controller_list(&loc.mount_point.join("cgroup.controllers")).unwrap_or_default();
        controllers.own = controller_list(&loc.own_dir.join("cgroup.controllers")).unwrap_or_default();
        controllers.own_subtree_control =
            controller_list(&loc.own_dir.join("cgroup.subtree_control")).unwrap_or_default();
        if euid == 0 {
            probe = Some(ProbeCgroup::create(&loc.own_dir));
        }
    }
    Facts { kernel, euid, location, mount_options, v1_mounts, controllers, probe }
}

/// v1 controllers (of memory, pids, cpu, cpuacct, blkio) whose hierarchy
/// has a directory of this process's that it may create cgroups in.
fn v1_writable() -> Vec<String> {
    crate::cgroup::v1::hierarchies_in(Path::new("/proc/self"))
        .into_iter()
        .filter(|h| writable(&h.own_dir))
        .flat_map(|h| h.controllers)
        .collect()
}

/// Looks at this host (as this user) and reports.
#[must_use]
pub fn examine() -> Report {
    let facts = gather();
    let mut checks = Vec::new();
    let layout = layout(&facts);
    let (mount, own) = match &facts.location {
        Ok(loc) => (Some(loc.mount_point.clone()), Some(loc.own_dir.clone())),
        Err(_) => (None, None),
    };
    checks.push(Check::ok("kernel", facts.kernel.clone()));
    match &facts.location {
        Ok(loc) => {
            let options = if facts.mount_options.is_empty() { "none" } else { &facts.mount_options };
            checks.push(Check::ok(
                "cgroup2",
                format!("mounted at {} ({layout} layout; options {options})", loc.mount_point.display()),
            ));
            checks.push(Check::ok("own cgroup", loc.own_dir.display().to_string()));
        }
        Err(e) => checks.push(Check::not(
            Status::Missing,
            "cgroup2",
            e.to_string(),
            Some(
                "boot with systemd.unified_cgroup_hierarchy=1, or mount -t cgroup2 none /sys/fs/cgroup/unified".into(),
            ),
        )),
    }
    let mut step_cgroup = false;
    if let Some(own) = &own {
        step_cgroup = privileges(&facts, own, &mut checks);
        for controller in CONTROLLERS {
            checks.push(controller_check(&facts, own, controller));
        }
        checks.extend(psi_checks(own));
        checks.push(peak_check(&facts, own, "memory", "memory.peak", "memoryStat.peak"));
        checks.push(peak_check(&facts, own, "pids", "pids.peak", "stepmon.pidsPeak"));
        checks.push(kill_check(&facts));
    }
    for (name, check) in [
        ("per-process records", crate::processes::doctor::taskstats()),
        ("delay accounting", crate::processes::doctor::delay_accounting()),
    ] {
        checks.push(match check {
            Ok(detail) => Check::ok(name, detail),
            Err((reason, hint)) => Check::not(Status::Missing, name, reason, hint),
        });
    }
    let delegate_files = newline_list(Path::new("/sys/kernel/cgroup/delegate")).unwrap_or_default();
    let cgroup_features = newline_list(Path::new("/sys/kernel/cgroup/features")).unwrap_or_default();
    if let Some(mount) = &mount {
        checks.push(favordynmods_check(&facts, mount, &cgroup_features));
    }
    let shape = facts.location.as_ref().ok().map(|loc| shape::detect(loc, facts.euid));
    let mut rungs = rungs::predict(&rungs::Inputs {
        location: facts.location.as_ref().ok(),
        step_cgroup,
        subtree_control: &facts.controllers.own_subtree_control,
        v1: &facts.controllers.cgroup_v1,
        euid: facts.euid,
        v1_writable: &v1_writable(),
    });
    if let Some(shape) = &shape {
        let scope = shape_check(shape, &facts, layout, &mut checks);
        if let Some(unit) = scope {
            rungs::systemd_scope(&mut rungs, &unit);
        }
    }
    Report {
        kernel: facts.kernel.clone(),
        layout,
        cgroup2_mount: mount,
        own_cgroup: own,
        euid: facts.euid,
        controllers: facts.controllers.clone(),
        delegate_files,
        cgroup_features,
        step_cgroup,
        shape,
        rungs,
        checks,
    }
}

/// The `host shape` check (and the `systemd` one where systemd manages
/// this cgroup); returns the caller's unit when a step gets a transient
/// scope here (root, pure cgroup v2, systemd reachable).
fn shape_check(shape: &shape::Shape, facts: &Facts, layout: &str, checks: &mut Vec<Check>) -> Option<String> {
    let (rung, how) = shape.follows(facts.euid, false);
    let escape = "a step placed outside this cgroup (--cgroup-parent elsewhere, or a scope of its own) escapes \
                  this cgroup's limits and whatever stops it (a cancelled job)";
    checks.push(Check::ok("host shape", format!("{}: rung {}, {how}; {escape}", shape.words(), rung.as_str())));
    let shape::Shape::SystemdUnit { unit, .. } = shape else { return None };
    if rung != Rung::SystemdScope {
        return None;
    }
    if layout != "unified" {
        checks.push(Check::not(
            Status::Missing,
            "systemd",
            format!(
                "{layout} layout: systemd accounts on the cgroup v1 hierarchies, a scope's cgroup v2 gets no controller"
            ),
            Some("boot with systemd.unified_cgroup_hierarchy=1".to_owned()),
        ));
        return None;
    }
    match crate::cgroup::systemd::Bus::connect() {
        Ok(bus) => {
            checks.push(Check::ok(
                "systemd",
                format!("reachable over {}: each step gets a transient scope bound to {unit}", bus.socket),
            ));
            Some(unit.clone())
        }
        Err(why) => {
            checks.push(Check::not(
                Status::Missing,
                "systemd",
                format!("manages {unit}, but cannot be reached ({why})"),
                Some("run stepmon where /run/systemd/private or the system bus is visible".to_owned()),
            ));
            None
        }
    }
}

fn layout(facts: &Facts) -> &'static str {
    let v1 = facts.v1_mounts || !facts.controllers.cgroup_v1.is_empty();
    match (&facts.location, v1) {
        (Ok(_), false) => "unified",
        (Ok(_), true) => "hybrid",
        // No `0::` line, or one without a cgroup2 mount we can see.
        (Err(_), true) => "v1-only",
        (Err(_), false) => "none",
    }
}

/// Privileges and delegation; returns whether a run cgroup can be created.
fn privileges(facts: &Facts, own: &Path, checks: &mut Vec<Check>) -> bool {
    let delegate_hint = "run inside a delegated scope: systemd-run --user --scope -p Delegate=yes \
         stepmon run --cgroup-parent \"$(stepmon doctor --own-cgroup)\" -- CMD"
        .to_owned();
    let nsdelegate = facts.mount_options.split(',').any(|o| o == "nsdelegate");
    let own_writable = writable(own) && writable(&own.join("cgroup.procs"));
    let can_run = match &facts.probe {
        Some(Ok(probe)) => {
            checks.push(Check::ok(
                "privileges",
                format!("euid {} can create cgroups here (made and removed {})", facts.euid, probe.dir.display()),
            ));
            true
        }
        Some(Err(e)) => {
            checks.push(Check::not(
                Status::Missing,
                "privileges",
                format!("euid {}, but creating a cgroup under {} failed: {e}", facts.euid, own.display()),
                Some("a read-only cgroup mount (containers) needs a writable one, or pass --cgroup-parent".into()),
            ));
            false
        }
        None if own_writable => {
            checks.push(Check::ok("privileges", format!("euid {}: {} is writable", facts.euid, own.display())));
            true
        }
        None => {
            checks.push(Check::not(
                Status::Missing,
                "privileges",
                format!("euid {} may not create cgroups under {}", facts.euid, own.display()),
                Some(delegate_hint.clone()),
            ));
            false
        }
    };
    let detail = format!(
        "own cgroup {} by euid {}; cgroup2 {}",
        if own_writable { "writable" } else { "not writable" },
        facts.euid,
        if nsdelegate { "mounted with nsdelegate" } else { "mounted without nsdelegate" }
    );
    checks.push(if own_writable {
        Check::ok("delegation", detail)
    } else {
        Check::not(Status::Missing, "delegation", detail, Some(delegate_hint))
    });
    can_run
}

fn controller_check(facts: &Facts, own: &Path, controller: &'static str) -> Check {
    let c = &facts.controllers;
    let has = |list: &[String]| list.iter().any(|x| x == controller);
    let is_root = facts.location.as_ref().is_ok_and(|l| l.mount_point == own);
    let v1 = c.cgroup_v1.iter().find(|b| b.controller == v1_name(controller));
    let name = format!("{controller} controller");
    if has(&c.own_subtree_control) {
        return Check::ok(name, format!("enabled in {}/cgroup.subtree_control: runs get it", own.display()));
    }
    if has(&c.own) {
        let hint = if is_root {
            format!("echo +{controller} > {}/cgroup.subtree_control", own.display())
        } else {
            // A cgroup with processes cannot enable controllers for its
            // children (no-internal-process rule); `run` moves itself aside
            // when given its own cgroup as --cgroup-parent.
            "in a delegated scope, pass --cgroup-parent \"$(stepmon doctor --own-cgroup)\"".to_owned()
        };
        return Check::not(
            Status::Missing,
            name,
            format!("available in {} but not in its cgroup.subtree_control", own.display()),
            Some(hint),
        );
    }
    if let Some(V1Binding { controller: v1name, hierarchy }) = v1 {
        return Check::not(
            Status::Missing,
            name,
            format!("bound to cgroup v1 hierarchy {hierarchy} ({v1name}; hybrid layout): cgroup v2 cannot account it"),
            Some(format!(
                "boot with systemd.unified_cgroup_hierarchy=1 (or cgroup_no_v1={v1name}) to give it to cgroup v2"
            )),
        );
    }
    if has(&c.root) {
        return Check::not(
            Status::Missing,
            name,
            format!("available at the cgroup2 root but not passed down to {}", own.display()),
            Some("enable it in cgroup.subtree_control of each ancestor, or use a delegated scope".to_owned()),
        );
    }
    Check::not(
        Status::Missing,
        name,
        "not available in cgroup v2 (not built into this kernel, or disabled with cgroup_disable=)",
        None,
    )
}

fn psi_checks(own: &Path) -> Vec<Check> {
    let mut checks = Vec::new();
    let system: Option<SysSample> =
        SysProbe::open("/proc").ok().map(|mut probe| stepmon_sysusage::model::sys_sample(&probe.read(), None));
    checks.push(match system.as_ref().map(|s| s.cpu_pressure.is_some()) {
        Some(true) => Check::ok("psi (system)", "/proc/pressure/{cpu,memory,io} readable"),
        _ => Check::not(
            Status::Missing,
            "psi (system)",
            system
                .as_ref()
                .and_then(|s| s.stepmon.as_ref())
                .and_then(|ext| ext.missing.iter().find(|m| m.field == "cpuPressure"))
                .map_or_else(|| "cannot read /proc".to_owned(), |m| m.reason.to_string()),
            Some("boot with psi=1 (kernel built with CONFIG_PSI)".to_owned()),
        ),
    });
    let step = sample(own);
    checks.push(match step.as_ref().map(|s| s.cpu_stat.as_ref().is_some_and(|c| c.pressure.is_some())) {
        Some(true) => Check::ok("psi (cgroup)", format!("{}/cpu.pressure readable", own.display())),
        _ => Check::not(
            Status::Missing,
            "psi (cgroup)",
            step.as_ref()
                .and_then(|s| missing_reason(s, "cpuStat.pressure"))
                .unwrap_or_else(|| format!("cannot read {}/cpu.pressure", own.display())),
            Some("boot with psi=1; a cgroup may also turn it off in cgroup.pressure".to_owned()),
        ),
    });
    checks
}

/// `memory.peak` / `pids.peak` exist only in a cgroup with the controller
/// enabled (not the root): look at one if there is one, else say unknown.
fn peak_check(facts: &Facts, own: &Path, controller: &str, file: &str, field: &str) -> Check {
    let c = &facts.controllers;
    let is_root = facts.location.as_ref().is_ok_and(|l| l.mount_point == own);
    let probe = match &facts.probe {
        Some(Ok(p)) if c.own_subtree_control.iter().any(|x| x == controller) => Some(p.dir.clone()),
        _ => None,
    };
    let dir = if !is_root && c.own.iter().any(|x| x == controller) { Some(own.to_path_buf()) } else { probe };
    let Some(dir) = dir else {
        let why = if c.cgroup_v1.iter().any(|b| b.controller == v1_name(controller)) {
            format!("unknown on this host: {controller} controller not in v2")
        } else {
            format!("unknown on this host: no {controller}-enabled cgroup to look at")
        };
        return Check::not(Status::Unknown, file, why, None);
    };
    let found = sample(&dir).map(|s| {
        let present = if controller == "memory" {
            s.memory_stat.as_ref().is_some_and(|m| m.peak.is_some())
        } else {
            s.stepmon.pids_peak.is_some()
        };
        (present, missing_reason(&s, field))
    });
    match found {
        Some((true, _)) => Check::ok(file, format!("present in {}", dir.display())),
        Some((false, reason)) => Check::not(
            Status::Missing,
            file,
            reason.unwrap_or_else(|| format!("absent in {}", dir.display())),
            Some("memory.peak needs Linux 5.19, pids.peak 6.1".to_owned()),
        ),
        None => Check::not(Status::Unknown, file, format!("cannot read {}", dir.display()), None),
    }
}

fn kill_check(facts: &Facts) -> Check {
    let version = kernel_version(&facts.kernel);
    let by_version = version.map(|v| v >= (5, 14));
    match &facts.probe {
        Some(Ok(probe)) if probe.dir.join("cgroup.kill").exists() => {
            Check::ok("cgroup.kill", format!("present in a probe cgroup ({})", probe.dir.display()))
        }
        Some(Ok(_)) => Check::not(
            Status::Missing,
            "cgroup.kill",
            "absent in a probe cgroup (needs Linux 5.14): leftovers are killed one by one",
            None,
        ),
        _ => match by_version {
            Some(true) => {
                Check::ok("cgroup.kill", format!("kernel {} ≥ 5.14 (not verified in a cgroup)", facts.kernel))
            }
            Some(false) => Check::not(
                Status::Missing,
                "cgroup.kill",
                format!("kernel {} < 5.14: leftovers are killed one by one", facts.kernel),
                None,
            ),
            None => {
                Check::not(Status::Unknown, "cgroup.kill", format!("cannot read the version of {}", facts.kernel), None)
            }
        },
    }
}

/// Moving the step into its cgroup (a write to `cgroup.procs`) takes
/// `cgroup_threadgroup_rwsem` for writing, which waits for an RCU grace
/// period unless the hierarchy favors dynamic modifications
/// (<https://docs.kernel.org/admin-guide/cgroup-v2.html#mounting>,
/// `favordynmods`, Linux 6.0+): milliseconds added to every run.
fn favordynmods_check(facts: &Facts, mount: &Path, features: &[String]) -> Check {
    let name = "favordynmods";
    if facts.mount_options.split(',').any(|o| o == name) {
        return Check::ok(name, format!("{} is mounted with favordynmods: cheap migrations", mount.display()));
    }
    if features.iter().any(|f| f == name) {
        return Check::not(
            Status::Missing,
            name,
            "cgroup2 is mounted without favordynmods: moving each step into its cgroup waits for an RCU grace period \
             (milliseconds of start-up latency per run)",
            Some(format!("mount -o remount,favordynmods {}", mount.display())),
        );
    }
    Check::not(
        Status::Missing,
        name,
        "this kernel has no favordynmods (Linux 6.0+): moving each step into its cgroup waits for an RCU grace period",
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(kernel_version("6.18.44-fc-v657"), Some((6, 18)));
        assert_eq!(kernel_version("5.4.0-150-generic"), Some((5, 4)));
        assert_eq!(kernel_version("garbage"), None);
        assert!(kernel_version("5.14.0").is_some_and(|v| v >= (5, 14)));
    }

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
        assert!(c.hint.unwrap().contains("--cgroup-parent"));
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
}
