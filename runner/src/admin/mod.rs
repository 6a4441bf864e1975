//! What a command-line wrapper needs besides running steps (`stepmon gc`,
//! `stepmon doctor`, `stepmon top`): the clean-up of what killed runs left
//! behind, the report of what this host offers a step, and the steps
//! running on this machine now ([`running`]). Everything here is Linux only
//! (it is about cgroups and procfs); the spawn mode a wrapper reads from
//! `STEPMON_SPAWN` is [`crate::Mode::from_env`], at the crate's root with
//! the options it goes into.
//!
//! ```
//! # #[cfg(target_os = "linux")] {
//! let report = stepmon_runner::admin::examine();
//! for rung in &report.rungs {
//!     println!("{}: {}", rung.resource, rung.why);
//! }
//! # }
//! ```

#[cfg(target_os = "linux")]
pub mod running;

#[cfg(target_os = "linux")]
use std::io;
#[cfg(target_os = "linux")]
use std::path::{Path, PathBuf};

#[cfg(target_os = "linux")]
pub use crate::host::model::{Check, Controllers, Report, Status};
#[cfg(target_os = "linux")]
pub use crate::host::rungs::ResourceRung;
#[cfg(target_os = "linux")]
pub use crate::host::shape::Shape;
#[cfg(target_os = "linux")]
pub use crate::host::v1_binding::V1Binding;

/// Looks at this host (as this user) and reports: its cgroup layout,
/// privileges, controllers and PSI as checks, and per resource which rung
/// of the measurement ladder a step gets here, why, and what would move it
/// up. Linux only.
#[cfg(target_os = "linux")]
#[must_use]
pub fn examine() -> Report {
    crate::host::examine()
}

/// This process's cgroup v2: where cgroup2 is mounted and its own
/// directory (normalized: the root cgroup without a trailing slash).
/// Linux only.
#[cfg(target_os = "linux")]
pub fn locate() -> Result<stepmon_sampler::cgroup::discover::Cgroup2, stepmon_sampler::cgroup::discover::DiscoverError>
{
    crate::host::locate()
}

/// Removes (with `dry_run`: only lists) the cgroups under `base` of runs
/// whose stepmon died (`stepmon-run.<pid>.<start>`, its owner's process
/// gone or another one now); what was removed. Each step's run does this
/// too once the step runs. Linux only.
#[cfg(target_os = "linux")]
pub fn collect_run_cgroups(base: &Path, dry_run: bool) -> io::Result<Vec<PathBuf>> {
    crate::cgroup::placement::collect_garbage(base, dry_run)
}

/// [`collect_run_cgroups`] in each cgroup v1 hierarchy this process is in
/// (hybrid and v1-only hosts). Linux only.
#[cfg(target_os = "linux")]
pub fn collect_v1_cgroups(dry_run: bool) -> io::Result<Vec<PathBuf>> {
    let hierarchies = crate::cgroup::v1::hierarchies_in(Path::new("/proc/self"));
    crate::cgroup::v1::collect_garbage(&hierarchies, dry_run)
}

/// Stops (with `dry_run`: only lists) the transient systemd scopes of runs
/// whose stepmon died, where systemd is the init system; the units. An
/// error says why they could not be looked for (no bus, the `systemd`
/// feature off). Linux only.
#[cfg(target_os = "linux")]
pub fn collect_scopes(dry_run: bool) -> Result<Vec<String>, String> {
    crate::cgroup::systemd::collect_garbage(dry_run)
}
