//! The probe cgroup: one cgroup doctor creates (as root) to see what a
//! step's cgroup would get here, removed again.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::cgroup::naming::{RUN_PREFIX, start_time};

/// A cgroup made for the checks under this process's cgroup, removed on drop.
/// It is named like a run parent so that `stepmon gc` removes it should
/// doctor be killed before it does.
pub(super) struct ProbeCgroup {
    pub(super) dir: PathBuf,
}

impl ProbeCgroup {
    pub(super) fn create(own: &Path) -> io::Result<ProbeCgroup> {
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
