//! What placing a step reads of the host, read once: by a [`crate::Runner`]
//! for all of its steps, by [`crate::prepare`] for its one step. A builder
//! that runs thousands of steps paid for these files at every step (its
//! `/proc/self/cgroup` and `mountinfo` three times, the container's signs,
//! systemd's, a scan of each hierarchy for leftovers): a few hundred
//! microseconds of the step's start.
//!
//! The snapshot is the host as it was when the runner started: a builder
//! moved to another cgroup after that keeps placing its steps where it was.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use stepmon_sampler::cgroup::discover;

use crate::cgroup::placement;
use crate::cgroup::v1::{self, Hierarchy};
use crate::host::container::{self, Container};
use crate::host::shape::{self, Shape};
use crate::notice::Notice;

/// The host's cgroup layout and signs, as placement needs them.
#[derive(Debug)]
pub(crate) struct HostView {
    /// This process's cgroup v2, or why none was found.
    pub(crate) location: Result<discover::Cgroup2, String>,
    /// The mounted v1 hierarchies and this process's cgroup in each.
    pub(crate) v1: Vec<Hierarchy>,
    /// The effective user id at the snapshot.
    pub(crate) euid: u32,
    /// The root of this process's cgroup namespace when it is a container's
    /// ([`crate::cgroup::enclosing::container_root`]).
    pub(crate) container_root: Option<PathBuf>,
    /// The shape of this process's cgroup v2, read at first need: later
    /// steps' subreapers sit in it and would make it look shared.
    shape: OnceLock<Option<Shape>>,
    /// The container this process runs in, read at first need.
    container: OnceLock<Option<Container>>,
    /// `/proc/self/cgroup` and `/proc/self/mountinfo` as read at the
    /// snapshot, for what is read at first need (each file once: the
    /// location, the v1 hierarchies and the container's signs read both).
    proc_self: (Vec<u8>, Vec<u8>),
    /// Bases already swept for leftovers of earlier runs (once each).
    swept: Mutex<HashSet<PathBuf>>,
    /// Whether the v1 hierarchies were swept.
    v1_swept: OnceLock<()>,
}

impl HostView {
    /// Reads the host now.
    pub(crate) fn read() -> HostView {
        let cgroup = stepmon_fdread::read_path("/proc/self/cgroup");
        let mountinfo = stepmon_fdread::read_path("/proc/self/mountinfo");
        let location = match (&cgroup, &mountinfo) {
            (Ok(cgroup), Ok(mountinfo)) => discover::locate_from(cgroup, mountinfo).map_err(|e| e.to_string()),
            // The same errors, said the same way.
            _ => discover::locate().map_err(|e| e.to_string()),
        };
        let proc_self = (cgroup.unwrap_or_default(), mountinfo.unwrap_or_default());
        let container_root = location
            .as_ref()
            .ok()
            .and_then(|loc| crate::cgroup::enclosing::container_root(&loc.own_dir, &loc.mount_point));
        HostView {
            location,
            container_root,
            v1: v1::hierarchies_from(&proc_self.0, &proc_self.1),
            proc_self,
            euid: rustix::process::geteuid().as_raw(),
            shape: OnceLock::new(),
            container: OnceLock::new(),
            swept: Mutex::new(HashSet::new()),
            v1_swept: OnceLock::new(),
        }
    }

    /// The shape of this process's cgroup v2 ([`shape::detect`]).
    pub(crate) fn shape(&self) -> Option<&Shape> {
        self.shape.get_or_init(|| self.location.as_ref().ok().map(|loc| shape::detect(loc, self.euid))).as_ref()
    }

    /// The container this process runs in ([`container::detect`]).
    pub(crate) fn container(&self) -> Option<&Container> {
        self.container
            .get_or_init(|| {
                container::detect_with(Path::new("/"), Path::new("/proc"), &self.proc_self.0, &self.proc_self.1)
            })
            .as_ref()
    }

    /// Removes what earlier runs left under `base` (once per base), saying
    /// so in `notices` when that fails for another reason than a missing
    /// privilege or a read-only cgroupfs.
    pub(crate) fn sweep(&self, base: &Path, notices: &mut Vec<Notice>) {
        let first = self.swept.lock().map_or(true, |mut swept| swept.insert(base.to_path_buf()));
        if !first || !self.may_have_made_dirs_in(base) {
            return;
        }
        if let Err(e) = placement::collect_garbage(base, false)
            && e.kind() != std::io::ErrorKind::PermissionDenied
            && e.raw_os_error() != Some(rustix::io::Errno::ROFS.raw_os_error())
        {
            notices.push(Notice::CleanupFailed { under: Some(base.to_path_buf()), error: e.to_string() });
        }
    }

    /// Removes what earlier runs left in the v1 hierarchies (once).
    pub(crate) fn sweep_v1(&self, notices: &mut Vec<Notice>) {
        if self.v1_swept.set(()).is_err() {
            return;
        }
        let writable: Vec<Hierarchy> =
            self.v1.iter().filter(|h| self.may_have_made_dirs_in(&h.own_dir)).cloned().collect();
        if let Err(e) = v1::collect_garbage(&writable, false) {
            notices.push(Notice::CleanupFailed { under: None, error: e.to_string() });
        }
    }

    /// Whether a run of this user could have made (and so can remove) a
    /// directory in `dir`: one it may not write to holds none of its runs'
    /// leftovers, and is not listed (as `nobody` on a host whose cgroups
    /// are root's, six hierarchies listed for nothing at every run). Root
    /// is not asked: it may write wherever a run of its could have.
    fn may_have_made_dirs_in(&self, dir: &Path) -> bool {
        self.euid == 0
            || rustix::fs::accessat(rustix::fs::CWD, dir, rustix::fs::Access::WRITE_OK, rustix::fs::AtFlags::EACCESS)
                .is_ok()
    }
}
