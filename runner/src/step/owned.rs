//! The step's cgroups as stepmon created them: killed and removed when
//! dropped, also when a run fails half-way.

use std::time::Duration;

use crate::cgroup::placement::RunCgroups;
use crate::cgroup::v1::V1Cgroups;

/// How long leftovers get to die once killed.
pub(super) const KILL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A set of the step's cgroups stepmon created (v2 or v1).
pub(super) trait Created {
    /// Kills what is left in them, waiting at most `timeout`.
    fn kill(&self, timeout: Duration) -> std::io::Result<()>;
    /// Removes them.
    fn remove(&self) -> std::io::Result<()>;
    /// For the warning when they stay: `/sys/fs/cgroup/…/stepmon-run.…`.
    fn what(&self) -> String;
}

impl Created for RunCgroups {
    fn kill(&self, timeout: Duration) -> std::io::Result<()> {
        self.kill_and_wait(timeout)
    }
    fn remove(&self) -> std::io::Result<()> {
        RunCgroups::remove(self)
    }
    fn what(&self) -> String {
        match &self.scope {
            Some(scope) => format!("the systemd scope {}", scope.unit),
            None => self.parent.display().to_string(),
        }
    }
}

impl Created for V1Cgroups {
    fn kill(&self, timeout: Duration) -> std::io::Result<()> {
        self.kill_and_wait(timeout)
    }
    fn remove(&self) -> std::io::Result<()> {
        V1Cgroups::remove(self)
    }
    fn what(&self) -> String {
        "the step's cgroup v1 directories".to_owned()
    }
}

/// The step's cgroups, killed and removed when dropped (also when the run
/// fails half-way); [`Owned::release`] does it and says what failed.
#[derive(Debug)]
pub(super) struct Owned<T: Created>(pub(super) Option<T>);

pub(super) type OwnedCgroups = Owned<RunCgroups>;
pub(super) type OwnedV1 = Owned<V1Cgroups>;

impl<T: Created> Owned<T> {
    pub(super) fn get(&self) -> &T {
        self.0.as_ref().unwrap_or_else(|| unreachable!("released"))
    }

    pub(super) fn get_mut(&mut self) -> &mut T {
        self.0.as_mut().unwrap_or_else(|| unreachable!("released"))
    }

    /// Kills what is left, removes the cgroups; a warning if they stay.
    pub(super) fn release(mut self) -> Option<String> {
        let cgroups = self.0.take()?;
        // At a step's end they are empty (its end killed what was left in
        // its v2 leaf, or in v1 without one, and waited for that): removed
        // at once, without reading them again; what a removal finds busy is
        // killed below.
        if cgroups.remove().is_ok() {
            return None;
        }
        let _ = cgroups.kill(KILL_TIMEOUT);
        // rmdir can briefly fail with EBUSY right after the last task exits.
        let mut last = None;
        for _ in 0..200 {
            match cgroups.remove() {
                Ok(()) => return None,
                Err(e) => last = Some(e),
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let e = last.map_or_else(String::new, |e| e.to_string());
        Some(format!("warning: could not remove {}: {e} (`stepmon gc` will)", cgroups.what()))
    }
}

impl<T: Created> Drop for Owned<T> {
    fn drop(&mut self) {
        if self.0.is_some()
            && let Some(warning) = Owned(self.0.take()).release()
        {
            eprintln!("stepmon: {warning}");
        }
    }
}
