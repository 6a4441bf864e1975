//! Small fd helpers on top of rustix.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::buffer::spare_capacity;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// Initial buffer size: a `/proc/net/dev` line is ~130 bytes, so this holds
/// the headers and ~30 interfaces before the first growth.
const INITIAL: usize = 4096;

/// `open(path, O_RDONLY | O_CLOEXEC)`.
pub(crate) fn open_read(path: &Path) -> io::Result<OwnedFd> {
    retry(|| rustix::fs::open(path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()))
}

/// Reads the whole file from offset 0 into `buf` (cleared first) with
/// `pread`, so the fd's own position is never used and the same fd can be
/// re-read from any thread. seq_file regenerates the content on each pass
/// (kernel-formats.md §2, rule 2) and may return it in several chunks.
pub(crate) fn pread_to_end(fd: impl AsFd, buf: &mut Vec<u8>) -> io::Result<()> {
    buf.clear();
    loop {
        if buf.capacity() == buf.len() {
            buf.reserve(INITIAL.max(buf.len()));
        }
        let offset = u64::try_from(buf.len()).unwrap_or(u64::MAX);
        let n = retry(|| rustix::io::pread(fd.as_fd(), spare_capacity(buf), offset))?;
        if n == 0 {
            return Ok(());
        }
    }
}

/// Runs a syscall again when a signal interrupted it.
pub(crate) fn retry<T>(mut f: impl FnMut() -> rustix::io::Result<T>) -> io::Result<T> {
    loop {
        match f() {
            Err(Errno::INTR) => {}
            other => return other.map_err(io::Error::from),
        }
    }
}

/// Whether two fds refer to the same inode (e.g. the same namespace).
pub(crate) fn same_inode(a: impl AsFd, b: impl AsFd) -> io::Result<bool> {
    let (a, b) = (rustix::fs::fstat(a)?, rustix::fs::fstat(b)?);
    Ok(a.st_dev == b.st_dev && a.st_ino == b.st_ino)
}
