//! `/sys/class/net/<if>/statistics/*` of the namespace that mounted `/sys`.
//!
//! sysfs tags `net` class devices with their network namespace and a sysfs
//! mount shows the namespace that was current **when it was mounted**
//! (kernel-formats.md, §/sys/class/net). A thread that `setns`-es elsewhere
//! still sees the mount's devices, so this reader is for the host's (or the
//! container's own) namespace; use [`NetnsCounters`](crate::NetnsCounters)
//! for a step's namespace. Like BuildKit's reader it opens each file anew per
//! reading (`openat` on the directory fd), because a statistics file of a
//! device being unregistered fails with `EINVAL` and must not be cached.

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use stepmon_cgroupfs_parse::{ErrorKind, ParseError};

use super::error::Error;
use super::fd::retry;
use crate::parse::{StatFile, SysfsStatistics, validate_name};

/// Where sysfs lists network devices.
const CLASS_NET: &str = "/sys/class/net";

/// A sysfs value is one `u64` and `\n`: at most 21 bytes.
const VALUE_MAX: usize = 64;

/// The `statistics` directory of one interface, spec:
/// <https://docs.kernel.org/admin-guide/abi-testing.html> (`sysfs-class-net-statistics`).
///
/// ```
/// use stepmon_netns_stats::{StatFile, SysfsInterface};
/// let lo = SysfsInterface::open("lo")?;
/// let stats = lo.read(StatFile::SAMPLE)?;
/// assert!(stats.rx_bytes.is_some() && stats.collisions.is_none());
/// # Ok::<(), stepmon_netns_stats::Error>(())
/// ```
#[derive(Debug)]
pub struct SysfsInterface {
    dir: OwnedFd,
    path: PathBuf,
}

impl SysfsInterface {
    /// Opens `/sys/class/net/<name>/statistics`.
    pub fn open(name: &str) -> Result<Self, Error> {
        SysfsInterface::open_in(Path::new(CLASS_NET), name)
    }

    /// Opens `<class_net>/<name>/statistics` (a copy of the tree, in tests).
    /// `name` must be a valid kernel interface name, so it cannot escape
    /// `class_net` (no `/`, not `.` or `..`).
    pub fn open_in(class_net: &Path, name: &str) -> Result<Self, Error> {
        validate_name(name.as_bytes()).map_err(|_| Error::InvalidName { name: name.into() })?;
        let path = class_net.join(name).join("statistics");
        let dir =
            retry(|| rustix::fs::open(&path, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()))
                .map_err(|source| Error::Open { path: path.clone(), source })?;
        Ok(SysfsInterface { dir, path })
    }

    /// The interface names in `/sys/class/net`, sorted.
    pub fn list() -> Result<Vec<String>, Error> {
        SysfsInterface::list_in(Path::new(CLASS_NET))
    }

    /// The interface names in `class_net`, sorted.
    pub fn list_in(class_net: &Path) -> Result<Vec<String>, Error> {
        let to_err = |source| Error::Read { path: class_net.into(), source };
        let mut names = Vec::new();
        for entry in std::fs::read_dir(class_net).map_err(to_err)? {
            names.push(entry.map_err(to_err)?.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }

    /// Reads `files`. A file that does not exist (e.g. `rx_nohandler`
    /// before 4.6) stays `None`; any other failure is an error.
    pub fn read(&self, files: &[StatFile]) -> Result<SysfsStatistics, Error> {
        let mut stats = SysfsStatistics::default();
        let mut buf = [0u8; VALUE_MAX];
        for &file in files {
            let path = || self.path.join(file.name());
            let fd = match retry(|| {
                rustix::fs::openat(&self.dir, file.name(), OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
            }) {
                Ok(fd) => fd,
                Err(e) if e.raw_os_error() == Some(Errno::NOENT.raw_os_error()) => continue,
                Err(source) => return Err(Error::Open { path: path(), source }),
            };
            let len = read_value(&fd, &mut buf).map_err(|source| Error::Read { path: path(), source })?;
            let content = buf
                .get(..len)
                .ok_or(Error::Parse { path: path(), source: ParseError::new(ErrorKind::TrailingData, 1, VALUE_MAX) })?;
            stats.set(file, content).map_err(|source| Error::Parse { path: path(), source })?;
        }
        Ok(stats)
    }

    /// Reads all 24 files.
    pub fn read_all(&self) -> Result<SysfsStatistics, Error> {
        self.read(StatFile::ALL)
    }
}

/// Reads a whole (small) file; a file longer than `buf` returns
/// `buf.len() + 1` so the caller reports it as malformed.
fn read_value(fd: impl AsFd, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut len = 0usize;
    loop {
        let Some(rest) = buf.get_mut(len..) else { return Ok(len) };
        if rest.is_empty() {
            let mut probe = [0u8; 1];
            let more = retry(|| rustix::io::read(fd.as_fd(), &mut probe[..]))?;
            return Ok(if more == 0 { len } else { len.saturating_add(1) });
        }
        let n = retry(|| rustix::io::read(fd.as_fd(), &mut *rest))?;
        if n == 0 {
            return Ok(len);
        }
        len = len.saturating_add(n);
    }
}
