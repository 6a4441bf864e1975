//! The cgroup this process runs in, as a source for a step that has no
//! cgroup of its own (a container's cgroup, a user's session scope) or whose
//! own cgroup lacks a controller this one has: its counters over the step
//! include the step and whatever else runs in it, so stepmon counts who else
//! was there at the start, and takes `memory.peak` since the start where
//! the kernel allows it.
//!
//! `memory.peak` reset: "A write of any non-empty string to this file resets
//! it to the current memory usage for subsequent reads through the same file
//! descriptor" (Linux 6.12+,
//! <https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files>);
//! it needs the file to be writable, which a read-only cgroupfs is not.

use std::fs;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

/// How many cgroup directories the count of other processes reads at most.
const MAX_DIRS: usize = 1000;

/// The enclosing cgroup, opened at the step's start.
#[derive(Debug)]
pub struct Enclosing {
    /// Its directory.
    pub dir: PathBuf,
    /// Whether it is the root cgroup (then it covers the whole machine).
    pub root: bool,
    /// Processes in it and below it, other than this one, at the start.
    pub others_at_start: Option<u64>,
    /// `memory.peak` opened for reading and writing and reset.
    peak: Option<OwnedFd>,
}

impl Enclosing {
    /// Looks at `dir` (this process's cgroup) under the cgroup2 mount `mount_point`.
    #[must_use]
    pub fn open(dir: &Path, mount_point: &Path) -> Enclosing {
        let root = dir == mount_point;
        let others_at_start = if root { None } else { count_processes(dir).map(|n| n.saturating_sub(1)) };
        let peak = if root { None } else { reset_peak(&dir.join("memory.peak")) };
        Enclosing { dir: dir.to_path_buf(), root, others_at_start, peak }
    }

    /// `memory.peak` since the start, if it could be reset.
    #[must_use]
    pub fn peak_since_start(&self) -> Option<u64> {
        let fd = self.peak.as_ref()?;
        let mut buffer = [0u8; 32];
        let read = rustix::io::pread(fd, &mut buffer, 0).ok()?;
        std::str::from_utf8(buffer.get(..read)?).ok()?.trim().parse().ok()
    }
}

fn reset_peak(file: &Path) -> Option<OwnedFd> {
    let fd = rustix::fs::open(file, OFlags::RDWR | OFlags::CLOEXEC, Mode::empty()).ok()?;
    // Kernels before 6.12 refuse the write (the file is read-only there).
    rustix::io::write(&fd, b"reset\n").ok()?;
    Some(fd)
}

/// Processes in `dir` and its descendants (`cgroup.procs` lines); `None`
/// when a file cannot be read or the subtree is too large to walk.
fn count_processes(dir: &Path) -> Option<u64> {
    let mut pending = vec![dir.to_path_buf()];
    let mut count = 0u64;
    let mut seen = 0usize;
    while let Some(current) = pending.pop() {
        seen += 1;
        if seen > MAX_DIRS {
            return None;
        }
        let procs = fs::read_to_string(current.join("cgroup.procs")).ok()?;
        count += u64::try_from(procs.lines().filter(|l| !l.trim().is_empty()).count()).ok()?;
        for entry in fs::read_dir(&current).ok()?.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(entry.path());
            }
        }
    }
    Some(count)
}
