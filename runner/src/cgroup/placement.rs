//! Where a run's cgroups go: a per-run parent with one leaf per step, under
//! this process's cgroup or `--cgroup-parent`, respecting the
//! no-internal-process rule
//! (<https://docs.kernel.org/admin-guide/cgroup-v2.html#no-internal-process-constraint>).
//! Names are generated; nothing outside the created subtree is written,
//! except `cgroup.procs` of a delegated parent the user named (to move this
//! process into a leaf of it, see [`RunCgroups::create`]).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use stepmon_cgroupfs_parse::{CgroupEvents, ControllerList};

use super::naming::owner_gone;

/// The controllers stepmon enables for its steps.
pub(crate) const CONTROLLERS: [&str; 4] = ["cpu", "memory", "io", "pids"];

/// The leaf a delegated base's processes move into (no-internal-process rule).
pub(crate) const SUPERVISOR: &str = "stepmon-supervisor";

/// The leaf child of a step's cgroup its command runs in when the step will
/// have steps nested in it ([`RunCgroups::nest`]); a step started from there
/// makes its cgroups beside it, in the outer step's cgroup ([`nesting_base`]).
pub(crate) const NESTED_COMMAND: &str = "stepmon-command";

pub(crate) use stepmon_model::NotEnabled;

/// The cgroups of one run.
#[derive(Debug)]
pub(crate) struct RunCgroups {
    /// `<base>/stepmon-run.<pid>.<start>`.
    pub(crate) parent: PathBuf,
    /// `<parent>/step` — the step's cgroup, which its samples, limits, kill
    /// and freeze are of; `parent` itself where the parent could enable no
    /// controller for it.
    pub(crate) leaf: PathBuf,
    /// Where the step's command is spawned: `leaf`, or its child
    /// [`NESTED_COMMAND`] when steps will nest in it ([`RunCgroups::nest`]).
    pub(crate) command: PathBuf,
    /// Controllers enabled for the leaf.
    pub(crate) enabled: Vec<&'static str>,
    /// Controllers that are not, with the reason.
    pub(crate) not_enabled: Vec<NotEnabled>,
    /// The transient systemd scope whose cgroup `parent` is (then `leaf`
    /// is `<scope>/step`, and removing means removing the leaf, then
    /// stopping the scope).
    pub(crate) scope: Option<crate::cgroup::systemd::Scope>,
}

fn controllers(dir: &Path) -> io::Result<Vec<String>> {
    let bytes = stepmon_fdread::read_path(dir.join("cgroup.controllers"))?;
    let list = ControllerList::parse(&bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    Ok(list.iter().map(str::to_owned).collect())
}

impl RunCgroups {
    /// Creates `<base>/<name>/step` (`name` from [`super::naming::run_name`]) and enables every
    /// controller of [`CONTROLLERS`] that the run parent may enable; where
    /// `base` enables none for its children, `<base>/<name>` alone.
    ///
    /// With `delegated` (the user named this process's own cgroup with
    /// `--cgroup-parent`, e.g. inside `systemd-run --scope -p Delegate=yes`;
    /// or it is the root of a container's cgroup namespace, mounted
    /// writable), this process first moves into `<base>/stepmon-supervisor`
    /// so that `base` holds no process and may enable controllers for its
    /// children — the no-internal-process rule; when the kernel still
    /// refuses (other processes in `base`), they move there too. Otherwise
    /// nothing outside the run's own subtree is written.
    pub(crate) fn create(base: &Path, name: &str, delegated: bool) -> io::Result<RunCgroups> {
        if delegated {
            let supervisor = base.join(SUPERVISOR);
            match fs::create_dir(&supervisor) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
            fs::write(supervisor.join("cgroup.procs"), "0")?;
            // Enable in the delegated base what it may enable (it is ours now).
            let available = controllers(base)?;
            for c in CONTROLLERS.iter().filter(|c| available.iter().any(|a| a == *c)) {
                let enable = || fs::write(base.join("cgroup.subtree_control"), format!("+{c}"));
                // Other processes still in the base (a container's init, a
                // scope's shell) keep its controllers off: EBUSY, or
                // EOPNOTSUPP for a threaded one. They move to the leaf too.
                if let Err(e) = enable()
                    && [rustix::io::Errno::BUSY, rustix::io::Errno::OPNOTSUPP]
                        .iter()
                        .any(|n| e.raw_os_error() == Some(n.raw_os_error()))
                {
                    move_processes(base, &supervisor);
                    let _ = enable();
                }
            }
        }
        let parent = base.join(name);
        // Nothing the parent could enable for a leaf (a hybrid host's
        // cgroup2, which has no controllers): one directory is the leaf, no
        // parent in between (a mkdir and an rmdir less a step:
        // benches/README.md, "Figures behind code comments").
        let none_to_enable = !delegated
            && stepmon_fdread::read_path(base.join("cgroup.subtree_control"))
                .ok()
                .and_then(|bytes| ControllerList::parse(&bytes).ok().map(|list| list.iter().next().is_none()))
                .unwrap_or(false);
        fs::create_dir(&parent)?;
        let leaf = if none_to_enable { parent.clone() } else { parent.join("step") };
        let mut run = RunCgroups {
            command: leaf.clone(),
            leaf,
            parent,
            enabled: Vec::new(),
            not_enabled: Vec::new(),
            scope: None,
        };
        let available = if none_to_enable { Vec::new() } else { controllers(&run.parent)? };
        let on_v1 = stepmon_sampler::cgroup::controllers_on_v1(Path::new("/proc"));
        for controller in CONTROLLERS {
            if !available.iter().any(|a| a == controller) {
                let reason = if on_v1.iter().any(|c| c == controller) {
                    "bound to a cgroup v1 hierarchy on this host (hybrid layout)".to_owned()
                } else {
                    format!(
                        "not enabled in {} (its cgroup.subtree_control lacks it; delegate a subtree with it enabled)",
                        base.display()
                    )
                };
                run.not_enabled.push(NotEnabled::new(controller, reason));
                continue;
            }
            match fs::write(run.parent.join("cgroup.subtree_control"), format!("+{controller}")) {
                Ok(()) => run.enabled.push(controller),
                Err(e) => run.not_enabled.push(NotEnabled::new(controller, format!("enabling it failed: {e}"))),
            }
        }
        if run.leaf != run.parent
            && let Err(e) = fs::create_dir(&run.leaf)
        {
            let _ = fs::remove_dir(&run.parent);
            return Err(e);
        }
        Ok(run)
    }

    /// The step's cgroups in the transient `scope` systemd made and
    /// delegated (its keeper already in a sub-cgroup of its own): enables
    /// in the scope's `cgroup.subtree_control` every controller of
    /// [`CONTROLLERS`] its `cgroup.controllers` lists (its slices enable
    /// them for accounting), and makes the leaf `<scope>/step`. Removing
    /// the leaf then stops the scope.
    pub(crate) fn in_scope(scope: crate::cgroup::systemd::Scope) -> io::Result<RunCgroups> {
        let available = controllers(&scope.cgroup)?;
        let (mut enabled, mut not_enabled) = (Vec::new(), Vec::new());
        for controller in CONTROLLERS {
            if !available.iter().any(|a| a == controller) {
                let reason = format!("systemd did not enable it for {} (accounting was asked for)", scope.unit);
                not_enabled.push(NotEnabled::new(controller, reason));
                continue;
            }
            match fs::write(scope.cgroup.join("cgroup.subtree_control"), format!("+{controller}")) {
                Ok(()) => enabled.push(controller),
                Err(e) => not_enabled.push(NotEnabled::new(controller, format!("enabling it failed: {e}"))),
            }
        }
        let leaf = scope.cgroup.join("step");
        fs::create_dir(&leaf)?;
        Ok(RunCgroups {
            parent: scope.cgroup.clone(),
            command: leaf.clone(),
            leaf,
            enabled,
            not_enabled,
            scope: Some(scope),
        })
    }

    /// Makes room for steps nested in this one (`stepmon build`'s actions,
    /// each a `stepmon wrap` started by the build's command): the command
    /// runs in the leaf child [`NESTED_COMMAND`], and the step's own cgroup,
    /// which then holds no process, enables for its children the
    /// controllers it has. A cgroup v2 cgroup that holds processes cannot
    /// enable controllers for its children (the no-internal-process rule,
    /// <https://docs.kernel.org/admin-guide/cgroup-v2.html#no-internal-process-constraint>),
    /// so without this a nested step would get no memory, cpu, io or pids
    /// controller on a pure cgroup v2 host. The step's numbers still come
    /// from its own cgroup, whose counters include its children's
    /// (hierarchical accounting). Where the step has no controller (a
    /// hybrid host's cgroup2) the child is made all the same: nested steps
    /// find their place the same way on every host.
    pub(crate) fn nest(&mut self) -> io::Result<()> {
        let command = self.leaf.join(NESTED_COMMAND);
        fs::create_dir(&command)?;
        for controller in &self.enabled {
            // One the step has but cannot pass on stays off for the nested
            // steps, whose own placement then says it is not enabled here.
            let _ = fs::write(self.leaf.join("cgroup.subtree_control"), format!("+{controller}"));
        }
        self.command = command;
        Ok(())
    }

    /// Kills everything left in the leaf (`cgroup.kill`, Linux 5.14+; older
    /// kernels: SIGKILL to each member until empty) and waits until it is
    /// unpopulated, at most `timeout`.
    pub(crate) fn kill_and_wait(&self, timeout: Duration) -> io::Result<()> {
        kill_and_wait(&self.leaf, timeout)
    }

    /// Removes the leaf and the parent: two `rmdir`s, or a depth-first walk
    /// when the step created cgroups of its own below the leaf.
    pub(crate) fn remove(&self) -> io::Result<()> {
        if let Some(scope) = &self.scope {
            // The leaf first (the scope is stopped only once the final
            // sample is taken: the keeper holds it); a retry after a
            // partial failure finds it gone.
            match fs::remove_dir(&self.leaf) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => match remove_tree(&self.leaf) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                    _ => {}
                },
                _ => {}
            }
            // Short: `Owned::release` retries removal.
            return scope.stop(Duration::from_millis(100));
        }
        if self.command != self.leaf {
            match fs::remove_dir(&self.command) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return remove_tree(&self.parent),
                _ => {}
            }
        }
        let removed = if self.leaf == self.parent {
            fs::remove_dir(&self.leaf)
        } else {
            fs::remove_dir(&self.leaf).and_then(|()| fs::remove_dir(&self.parent))
        };
        match removed {
            Ok(()) => Ok(()),
            Err(_) => remove_tree(&self.parent),
        }
    }
}

/// Where a step started from `own` (this process's cgroup) makes its
/// cgroups: beside `own` when it is the [`NESTED_COMMAND`] leaf of an outer
/// step ([`RunCgroups::nest`]), so the outer step's cgroup, which holds no
/// process, can give them controllers; `own` otherwise.
pub(crate) fn nesting_base(own: &Path) -> &Path {
    match own.parent() {
        Some(outer) if own.file_name().is_some_and(|n| n == NESTED_COMMAND) => outer,
        _ => own,
    }
}

/// Moves every process of `from` into `to` (a few passes: one may fork
/// meanwhile); one that exits on the way is gone already.
fn move_processes(from: &Path, to: &Path) {
    for _ in 0..3 {
        let Ok(procs) = fs::read_to_string(from.join("cgroup.procs")) else { return };
        if procs.trim().is_empty() {
            return;
        }
        for pid in procs.lines().filter(|l| !l.trim().is_empty()) {
            let _ = fs::write(to.join("cgroup.procs"), pid.trim());
        }
    }
}

/// Whether a cgroup still has live processes (`cgroup.events` `populated`).
pub(crate) fn populated(dir: &Path) -> io::Result<bool> {
    let bytes = stepmon_fdread::read_path(dir.join("cgroup.events"))?;
    let events = CgroupEvents::parse(&bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    Ok(events.populated.unwrap_or(false))
}

/// Waits until `dir` has no live process: reads `cgroup.events` and, while
/// it says `populated 1`, sleeps in `poll` until the kernel notifies a
/// change of the file (kernfs raises `POLLPRI` on it,
/// <https://docs.kernel.org/admin-guide/cgroup-v2.html#core-interface-files>)
/// — no fixed pause on the way to a step's end. At most `timeout`.
pub(crate) fn wait_unpopulated(dir: &Path, timeout: Option<Duration>) -> io::Result<()> {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let start = Instant::now();
    let file = match rustix::fs::open(
        dir.join("cgroup.events"),
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) {
        Ok(file) => file,
        // Removed (by another stepmon's garbage collection): nothing lives in it.
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let mut buffer = [0u8; 256];
    loop {
        let n = match stepmon_fdread::retry_eintr(|| rustix::io::pread(&file, &mut buffer, 0)) {
            Ok(n) => n,
            // The cgroup was removed while its file was held open: empty.
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::NODEV.raw_os_error()) => return Ok(()),
            Err(e) => return Err(e),
        };
        let events = CgroupEvents::parse(buffer.get(..n).unwrap_or_default())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        if !events.populated.unwrap_or(false) {
            return Ok(());
        }
        let left = match timeout {
            Some(t) if start.elapsed() > t => {
                return Err(io::Error::new(io::ErrorKind::TimedOut, format!("{} is still populated", dir.display())));
            }
            Some(t) => t.saturating_sub(start.elapsed()),
            None => Duration::from_secs(1),
        };
        // Capped: a kernel that does not notify still gets looked at.
        let wait = Timespec::try_from(left.min(Duration::from_secs(1))).ok();
        match rustix::event::poll(&mut [PollFd::new(&file, PollFlags::PRI)], wait.as_ref()) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

fn kill_and_wait(leaf: &Path, timeout: Duration) -> io::Result<()> {
    if !populated(leaf)? {
        return Ok(());
    }
    match fs::write(leaf.join("cgroup.kill"), "1") {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // Before 5.14: signal every member until the cgroup is empty.
            let start = Instant::now();
            while populated(leaf)? && start.elapsed() < timeout {
                // The members of its descendants too: a step's command runs
                // in a child of it when steps nest in it (`RunCgroups::nest`).
                for dir in subtree(leaf) {
                    for pid in fs::read_to_string(dir.join("cgroup.procs"))?.lines() {
                        if let Some(pid) = pid.trim().parse().ok().and_then(rustix::process::Pid::from_raw) {
                            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        Err(e) => return Err(e),
    }
    wait_unpopulated(leaf, Some(timeout))
}

/// `dir` and every cgroup below it, parents first (a directory that cannot
/// be listed, e.g. removed meanwhile, contributes itself alone).
pub(crate) fn subtree(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let mut at = 0;
    while let Some(next) = out.get(at).cloned() {
        if let Ok(entries) = stepmon_fdread::list_dir(&next) {
            out.extend(entries.into_iter().filter(|e| e.is_dir).map(|e| next.join(e.name)));
        }
        at += 1;
    }
    out
}

/// Removes a cgroup directory tree bottom-up (cgroup directories are removed
/// with `rmdir`; their files go with them).
pub(crate) fn remove_tree(dir: &Path) -> io::Result<()> {
    for entry in stepmon_fdread::list_dir(dir)? {
        if entry.is_dir {
            remove_tree(&dir.join(entry.name))?;
        }
    }
    fs::remove_dir(dir)
}

/// Kills what is left in a dead run's cgroups and removes them. The run
/// directory itself may be the leaf ([`RunCgroups::create`]).
fn collect(dir: &Path) -> io::Result<()> {
    for child in stepmon_fdread::list_dir(dir)? {
        if child.is_dir {
            kill_and_wait(&dir.join(child.name), Duration::from_secs(5))?;
        }
    }
    kill_and_wait(dir, Duration::from_secs(5))?;
    remove_tree(dir)
}

/// Finds run parents under `base` whose owner is gone (killed with SIGKILL,
/// crashed) and removes them: kills what is left in them, waits, rmdirs.
/// Returns the removed directories. Directories of live owners are kept.
pub(crate) fn collect_garbage(base: &Path, dry_run: bool) -> io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for entry in stepmon_fdread::list_dir(base)? {
        if entry.name.to_str().and_then(owner_gone) != Some(true) {
            continue; // not a run directory, or its owner is alive
        }
        let dir = base.join(&entry.name);
        // Another stepmon (every run collects on start) may collect the same
        // directory at the same time: one that vanished meanwhile is done.
        if !dry_run && let Err(e) = collect(&dir) {
            if e.kind() == io::ErrorKind::NotFound {
                continue;
            }
            return Err(e);
        }
        removed.push(dir);
    }
    Ok(removed)
}
