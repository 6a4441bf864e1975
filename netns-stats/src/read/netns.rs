//! `/proc/net/dev` of a network namespace, seen from inside it.
//!
//! How: open the namespace file and keep it; on a short-lived dedicated
//! thread, `setns(fd, CLONE_NEWNET)` and open `/proc/thread-self/net/dev`;
//! let the thread end. procfs binds an opened `net/*` file to the network
//! namespace of the task that looked it up (`proc_tgid_net_lookup()` then
//! `seq_open_net()`, which also takes a reference on that namespace), so the
//! returned fd shows the target namespace forever after, from any thread,
//! re-read with `pread(fd, buf, 0)`.
//!
//! Why this and not the alternatives:
//! * `/proc/<pid>/net/dev` needs a live process inside the namespace at open
//!   time; a `/run/netns/<name>` namespace may have none, and a PID can be
//!   reused by an unrelated process between choosing it and opening. It needs
//!   no privilege though, so it is offered as [`NetnsCounters::from_pid`].
//! * `/sys/class/net/<if>/statistics` shows the namespace of the sysfs
//!   *mount*, not of the thread, so it cannot show a foreign namespace
//!   without mounting sysfs inside it.
//! * netlink (`RTM_GETSTATS`) works but needs a socket created inside the
//!   namespace (the same `setns` dance) and a netlink codec.
//! * A dedicated thread, because `setns` changes the calling *thread*: doing
//!   it on a caller's (or an async runtime's) thread would silently move that
//!   thread's later sockets into the step's namespace. The helper thread ends
//!   right after `open`, so nothing else ever runs in the namespace.
//! * `/proc/thread-self`, not `/proc/self`: `/proc/self/net` follows the
//!   thread-group leader's namespace, not the helper thread's.
//!
//! Keeping the fd open also keeps the namespace (and its devices) alive after
//! the step's processes have exited and `/run/netns/<name>` was removed, so
//! the final sample can still be read. Closing it lets the kernel free the
//! namespace.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};
use rustix::thread::{LinkNameSpaceType, move_into_link_name_space};
use stepmon_fdread::{HeldFile, retry_eintr};

use super::error::Error;
use crate::model::Snapshot;
use crate::parse::NetDev;

/// `/proc/net/dev` of the calling thread's namespace.
const THREAD_NET_DEV: &str = "/proc/thread-self/net/dev";
/// The calling thread's network namespace.
const THREAD_NETNS: &str = "/proc/thread-self/ns/net";

/// Counters of one network namespace, read from inside it (see the module
/// docs for how and why). `Send + Sync`; reading needs `&mut self` only for
/// the reusable buffer.
///
/// ```
/// use stepmon_netns_stats::{NetnsCounters, NetworkSampler, TotalsOptions};
/// // The caller's own namespace: needs no privilege.
/// let mut ns = NetnsCounters::open("/proc/self/ns/net")?;
/// let first = ns.read()?;
/// assert!(first.get("lo").is_some());
/// let mut sampler = NetworkSampler::new(TotalsOptions::default());
/// sampler.observe(&first);
/// let later = sampler.observe(&ns.read()?);
/// println!("{:?} since the first reading", later.sample);
/// assert_eq!(ns.namespace_id(), NetnsCounters::current()?.namespace_id());
/// # Ok::<(), stepmon_netns_stats::Error>(())
/// ```
#[derive(Debug)]
pub struct NetnsCounters {
    /// The namespace itself, for identity; `None` when it could not be opened
    /// ([`NetnsCounters::from_pid`] without ptrace access).
    ns: Option<OwnedFd>,
    /// `net/dev` opened inside the namespace.
    dev: HeldFile,
    /// What the caller named, for error messages.
    source: PathBuf,
    buf: Vec<u8>,
}

impl NetnsCounters {
    /// Opens the network namespace file at `path` (`/proc/<pid>/ns/net`,
    /// `/run/netns/<name>`, a bind mount of either) and `/proc/net/dev` inside it.
    ///
    /// Entering a foreign namespace needs `CAP_SYS_ADMIN` (in the caller's
    /// user namespace and in the one owning the target); the caller's own
    /// namespace is recognised by inode and opened without `setns` or
    /// privilege.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let ns = open_read(path).map_err(|source| Error::Open { path: path.into(), source })?;
        let own =
            open_read(Path::new(THREAD_NETNS)).map_err(|source| Error::Open { path: THREAD_NETNS.into(), source })?;
        let is_own = same_inode(&ns, &own).map_err(|source| Error::Read { path: path.into(), source })?;
        let dev = if is_own { open_dev(THREAD_NET_DEV)? } else { open_dev_inside(&ns, path)? };
        Ok(NetnsCounters { ns: Some(ns), dev, source: path.into(), buf: Vec::new() })
    }

    /// The calling thread's own namespace.
    pub fn current() -> Result<Self, Error> {
        NetnsCounters::open(THREAD_NETNS)
    }

    /// Opens `/proc/<pid>/net/dev` directly: the namespace of process `pid`
    /// at the time of this call, without `setns` and without privilege. The
    /// process must exist now (and `pid` must really be the intended one);
    /// afterwards the fd keeps working after it exits. The namespace file is
    /// opened too when ptrace access allows it (for [`Self::namespace_id`]).
    pub fn from_pid(pid: u32) -> Result<Self, Error> {
        let dev_path = format!("/proc/{pid}/net/dev");
        let dev = open_dev(&dev_path)?;
        let ns = open_read(Path::new(&format!("/proc/{pid}/ns/net"))).ok();
        Ok(NetnsCounters { ns, dev, source: dev_path.into(), buf: Vec::new() })
    }

    /// The namespace's inode number (what `ls -L -i`, `lsns` and
    /// `readlink /proc/<pid>/ns/net` show as `net:[N]`).
    pub fn namespace_id(&self) -> Option<u64> {
        self.ns.as_ref().and_then(|ns| rustix::fs::fstat(ns).ok()).map(|st| st.st_ino)
    }

    /// The path this was opened from.
    #[must_use]
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// Reads the file again and returns its raw bytes (valid until the next read).
    pub fn read_raw(&mut self) -> Result<&[u8], Error> {
        self.dev.read(&mut self.buf).map_err(|source| Error::Read { path: self.source.clone(), source })
    }

    /// Reads and parses the file, handing the borrowed view to `f`. After the
    /// buffer has grown to the file's size this does not allocate.
    pub fn with_net_dev<R>(&mut self, f: impl FnOnce(&NetDev<'_>) -> R) -> Result<R, Error> {
        self.read_raw()?;
        let dev = NetDev::parse(&self.buf).map_err(|source| Error::Parse { path: self.source.clone(), source })?;
        Ok(f(&dev))
    }

    /// Reads the counters of every interface (one pass over the file:
    /// [`Snapshot::parse`]).
    pub fn read(&mut self) -> Result<Snapshot, Error> {
        self.read_raw()?;
        Snapshot::parse(&self.buf).map_err(|source| Error::Parse { path: self.source.clone(), source })
    }
}

/// `open(path, O_RDONLY | O_CLOEXEC)`.
fn open_read(path: &Path) -> io::Result<OwnedFd> {
    retry_eintr(|| rustix::fs::open(path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()))
}

/// Whether two fds refer to the same inode (here: the same namespace).
fn same_inode(a: impl AsFd, b: impl AsFd) -> io::Result<bool> {
    let (a, b) = (rustix::fs::fstat(a)?, rustix::fs::fstat(b)?);
    Ok(a.st_dev == b.st_dev && a.st_ino == b.st_ino)
}

fn open_dev(path: &str) -> Result<HeldFile, Error> {
    HeldFile::open(path).map_err(|source| Error::Open { path: path.into(), source })
}

/// Opens `net/dev` on a helper thread that first enters the namespace `ns`.
fn open_dev_inside(ns: &OwnedFd, path: &Path) -> Result<HeldFile, Error> {
    std::thread::scope(|scope| {
        let helper = std::thread::Builder::new()
            .name("stepmon-netns".into())
            .spawn_scoped(scope, || {
                move_into_link_name_space(ns.as_fd(), Some(LinkNameSpaceType::Network))
                    .map_err(|e| Error::Setns { path: path.into(), source: e.into() })?;
                open_dev(THREAD_NET_DEV)
            })
            .map_err(|source| Error::Thread { path: path.into(), source })?;
        helper.join().unwrap_or_else(|_| {
            Err(Error::Thread { path: path.into(), source: io::Error::other("helper thread panicked") })
        })
    })
}
