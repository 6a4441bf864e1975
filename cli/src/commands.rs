//! The small subcommands: `sample`, `sys`, `gc`, `doctor`.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use stepmon_sampler::cgroup::{CgroupProbe, discover};
use stepmon_sysusage::probe::SysProbe;

use crate::error::CliError;
use stepmon_runner::admin;

/// Arguments of `stepmon sample`.
#[derive(Debug, clap::Args)]
pub struct SampleArgs {
    /// A cgroup v2 directory (a systemd service, a container, a step).
    pub cgroup_dir: PathBuf,
}

/// Arguments of `stepmon sys`.
#[derive(Debug, clap::Args)]
pub struct SysArgs {
    /// Read procfs files from DIR (a directory of captured files laid out
    /// like /proc) instead of /proc.
    #[arg(long = "proc", value_name = "DIR", default_value = "/proc")]
    pub proc_root: PathBuf,
}

/// Arguments of `stepmon gc`.
#[derive(Debug, clap::Args)]
pub struct GcArgs {
    /// Where runs create their cgroups (default: this process's cgroup).
    #[arg(long, value_name = "DIR")]
    pub cgroup_parent: Option<PathBuf>,
    /// Only list what would be removed.
    #[arg(long)]
    pub dry_run: bool,
}

fn print_json(value: &impl serde::Serialize) -> Result<(), CliError> {
    let json = serde_json::to_string_pretty(value).map_err(|e| CliError::new(format!("JSON: {e}")))?;
    crate::out::emit(&(json + "\n"))
}

/// One sample of any cgroup, as JSON on stdout.
pub fn sample(args: &SampleArgs) -> Result<(), CliError> {
    let dir = &args.cgroup_dir;
    let mut probe = CgroupProbe::open(dir).map_err(|e| {
        let error = match not_a_cgroup_v2_dir(dir, &e) {
            Some(why) => CliError::new(why),
            None => CliError::cgroup(&format!("cannot open {}", dir.display()), &e),
        };
        error.hint(match discover::locate() {
            Ok(own) => format!(
                "give a cgroup v2 directory: cgroup v2 is mounted at {} here (this process is in {})",
                own.mount_point.display(),
                own.own_dir.display()
            ),
            Err(_) => "give a cgroup v2 directory, e.g. /sys/fs/cgroup/system.slice/ssh.service".to_owned(),
        })
    })?;
    print_json(&probe.read(Timestamp::now()))
}

/// Why `dir` is not a cgroup v2 directory, when opening it as one failed
/// with "not found" (`CgroupProbe::open` opens `DIR/cgroup.controllers`, so
/// the kernel's ENOENT alone does not say which path is missing). A cgroup v2
/// directory always has `cgroup.controllers`; a cgroup v1 one has `tasks`
/// and `cgroup.procs` instead
/// (<https://docs.kernel.org/admin-guide/cgroup-v1/cgroups.html>, section 1.4).
fn not_a_cgroup_v2_dir(dir: &Path, error: &std::io::Error) -> Option<String> {
    use std::io::ErrorKind::{NotADirectory, NotFound};
    if !matches!(error.kind(), NotFound | NotADirectory) {
        return None;
    }
    let shown = dir.display();
    let Ok(metadata) = std::fs::metadata(dir) else {
        return Some(format!("{shown} does not exist"));
    };
    if !metadata.is_dir() {
        return Some(format!("{shown} is not a directory"));
    }
    if dir.join("cgroup.controllers").exists() {
        return None;
    }
    let why = if dir.join("tasks").exists() {
        "it has `tasks` but no `cgroup.controllers`: a cgroup v1 directory"
    } else {
        "it has no `cgroup.controllers`, which every cgroup v2 directory has"
    };
    Some(format!("{shown} is not a cgroup v2 directory: {why}"))
}

/// One system sample, as JSON on stdout.
pub fn sys(args: &SysArgs) -> Result<(), CliError> {
    let mut probe = SysProbe::open(&args.proc_root)
        .map_err(|e| CliError::input(&format!("cannot open {}", args.proc_root.display()), &e))?;
    print_json(&stepmon_sysusage::model::sys_sample(&probe.read(), None))
}

fn base(cgroup_parent: Option<&Path>) -> Result<PathBuf, CliError> {
    match cgroup_parent {
        Some(dir) => Ok(dir.to_path_buf()),
        None => discover::locate().map(|l| l.own_dir).map_err(|e| CliError::new(e.to_string())),
    }
}

/// Removes cgroups of runs whose stepmon died.
pub fn gc(args: &GcArgs) -> Result<(), CliError> {
    // No cgroup v2 (a v1-only host): only the v1 hierarchies have run directories.
    let base = match base(args.cgroup_parent.as_deref()) {
        Ok(base) => Some(base),
        Err(_) if args.cgroup_parent.is_none() => None,
        Err(e) => return Err(e),
    };
    let mut removed = match &base {
        Some(base) => admin::collect_run_cgroups(base, args.dry_run)
            .map_err(|e| CliError::cgroup(&format!("cannot clean up under {}", base.display()), &e))?,
        None => Vec::new(),
    };
    // And the step directories in the cgroup v1 hierarchies (hybrid hosts).
    removed.extend(
        admin::collect_v1_cgroups(args.dry_run)
            .map_err(|e| CliError::cgroup("cannot clean up the cgroup v1 hierarchies", &e))?,
    );
    let verb = if args.dry_run { "would remove" } else { "removed" };
    for dir in &removed {
        eprintln!("stepmon: {verb} {}", dir.display());
    }
    // And the transient scopes of dead runs, where systemd is the init system.
    let scopes = admin::collect_scopes(args.dry_run).unwrap_or_else(|e| {
        eprintln!("stepmon: warning: cannot look for leftover stepmon scopes: {e}");
        Vec::new()
    });
    for unit in &scopes {
        eprintln!("stepmon: {} the scope {unit}", if args.dry_run { "would stop" } else { "stopped" });
    }
    // The steps of killed stepmons in their job records: those whose run
    // directories were just removed, and those another stepmon's start
    // removed meanwhile (every run collects on start).
    if !args.dry_run {
        for result in stepmon_job::mark_orphans() {
            match result {
                Ok(done) => eprintln!("stepmon: {done}"),
                Err(why) => eprintln!("stepmon: warning: {why}"),
            }
        }
    }
    if removed.is_empty() && scopes.is_empty() {
        let under = base.as_ref().map_or_else(|| "the cgroup v1 hierarchies".to_owned(), |b| b.display().to_string());
        eprintln!("stepmon: nothing to clean up under {under}");
    }
    Ok(())
}
