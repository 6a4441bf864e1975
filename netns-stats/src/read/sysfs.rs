//! `/sys/class/net/<if>/statistics/*` of the namespace that mounted `/sys`.
//!
//! sysfs tags `net` class devices with their network namespace and a sysfs
//! mount shows the namespace that was current **when it was mounted**
//! (the mount takes the current network namespace as its tag:
//! <https://github.com/torvalds/linux/blob/master/fs/sysfs/mount.c>). A thread that `setns`-es elsewhere
//! still sees the mount's devices, so this reader is for the host's (or the
//! container's own) namespace; use [`NetnsCounters`](crate::NetnsCounters)
//! for a step's namespace. Like BuildKit's reader it opens each file anew per
//! reading (`openat` relative to the held directory) instead of holding up to
//! 24 fds per interface; a device that went away then fails the next reading
//! (`ENOENT`, or `EINVAL` while it is being unregistered).

use std::path::{Path, PathBuf};

use rustix::io::Errno;
use stepmon_fdread::{Dir, read_once};

use super::error::Error;
use crate::parse::{StatFile, SysfsStatistics, validate_name};

/// Where sysfs lists network devices.
const CLASS_NET: &str = "/sys/class/net";

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
    dir: Dir,
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
        let dir = Dir::open(&path).map_err(|source| Error::Open { path: path.clone(), source })?;
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

    /// Reads `files`. `rx_nohandler` (added in 4.6) stays `None` when the
    /// kernel lacks it; any other missing file is an error (the device is
    /// gone), as is a read failure (`EINVAL` while it is being unregistered).
    pub fn read(&self, files: &[StatFile]) -> Result<SysfsStatistics, Error> {
        let mut stats = SysfsStatistics::default();
        let mut buf = Vec::with_capacity(32);
        for &file in files {
            let path = || self.path.join(file.name());
            let content = match read_once(&self.dir, file.name(), &mut buf) {
                Ok(content) => content,
                Err(e) if file == StatFile::RxNohandler && e.raw_os_error() == Some(Errno::NOENT.raw_os_error()) => {
                    continue;
                }
                Err(source) => return Err(Error::Read { path: path(), source }),
            };
            stats.set(file, content).map_err(|source| Error::Parse { path: path(), source })?;
        }
        Ok(stats)
    }

    /// Reads all 24 files.
    pub fn read_all(&self) -> Result<SysfsStatistics, Error> {
        self.read(StatFile::ALL)
    }
}
