//! The Unix implementation (rustix).

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// First allocation of a read buffer; most pseudo-files fit.
const INITIAL_CAPACITY: usize = 4096;

/// How a [`Dir`] is opened. On Linux `O_PATH`: the fd only anchors `openat`,
/// needs no read permission on the directory and cannot be read itself.
#[cfg(target_os = "linux")]
const DIR_FLAGS: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);
/// How a [`Dir`] is opened. `O_PATH` is Linux-only; elsewhere a read-only
/// directory fd anchors `openat` just as well (it needs read permission).
#[cfg(not(target_os = "linux"))]
const DIR_FLAGS: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);

/// Runs a syscall again while a signal interrupts it (`EINTR`).
pub fn retry_eintr<T>(mut call: impl FnMut() -> rustix::io::Result<T>) -> io::Result<T> {
    loop {
        match call() {
            Err(Errno::INTR) => {}
            other => return other.map_err(io::Error::from),
        }
    }
}

/// How a directory that is listed is opened: readable, for `getdents64`.
const READABLE_DIR_FLAGS: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);

/// Bytes of the buffer [`Dir::list_names`] hands to each `getdents64`, on
/// the stack: a cgroup v2 directory with every controller (about 45 files
/// and a few children, some 40 bytes an entry) fits in one call.
#[cfg(target_os = "linux")]
const LIST_BUFFER: usize = 4096;

/// A directory held open (`O_PATH` on Linux) so files in it can be opened relative to
/// it, even after the directory was renamed, and without re-resolving its path.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    /// Opened readable ([`Dir::open_readable`]): listed through `fd` itself.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    readable: bool,
    /// A listing moved `fd`'s directory offset (the next one seeks back).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    listed: bool,
}

impl Dir {
    /// Opens a directory.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Dir> {
        let path = path.as_ref();
        let fd = retry_eintr(|| rustix::fs::open(path, DIR_FLAGS, Mode::empty()))?;
        Ok(Dir { fd, readable: false, listed: false })
    }

    /// Opens a directory readable rather than as an `O_PATH` anchor, so
    /// that [`list_names`](Self::list_names) reads it through this fd: no
    /// second open and close. Needs read permission on the directory
    /// (`EACCES` without it, where [`open`](Self::open) succeeds).
    pub fn open_readable(path: impl AsRef<Path>) -> io::Result<Dir> {
        let path = path.as_ref();
        let fd = retry_eintr(|| rustix::fs::open(path, READABLE_DIR_FLAGS, Mode::empty()))?;
        Ok(Dir { fd, readable: true, listed: false })
    }

    /// Opens a subdirectory relative to this one.
    pub fn open_dir_at(&self, name: impl AsRef<Path>) -> io::Result<Dir> {
        let name = name.as_ref();
        let fd = retry_eintr(|| rustix::fs::openat(&self.fd, name, DIR_FLAGS, Mode::empty()))?;
        Ok(Dir { fd, readable: false, listed: false })
    }

    /// Calls `each` with the name of every entry of the directory but `.`
    /// and `..`, in the order the filesystem lists them, without
    /// allocating: `getdents64` into a buffer on the stack until it returns
    /// 0 (two calls for a directory that fits the buffer).
    ///
    /// A directory from [`open_readable`](Self::open_readable) is read
    /// through its own fd (a later listing seeks back to the start first);
    /// one from [`open`](Self::open) (`O_PATH`, which `getdents64` refuses)
    /// through a readable fd opened relative to it and closed again.
    ///
    /// ```
    /// # #[cfg(target_os = "linux")] {
    /// let mut proc_dir = stepmon_fdread::Dir::open_readable("/proc")?;
    /// let mut has_self = false;
    /// proc_dir.list_names(|name| has_self |= name == "self")?;
    /// assert!(has_self);
    /// # }
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[cfg(target_os = "linux")]
    pub fn list_names(&mut self, mut each: impl FnMut(&std::ffi::OsStr)) -> io::Result<()> {
        if !self.readable {
            let fd = retry_eintr(|| rustix::fs::openat(&self.fd, ".", READABLE_DIR_FLAGS, Mode::empty()))?;
            return list_names_from(fd.as_fd(), &mut each);
        }
        if self.listed {
            retry_eintr(|| rustix::fs::seek(&self.fd, rustix::fs::SeekFrom::Start(0)))?;
        }
        self.listed = true;
        list_names_from(self.fd.as_fd(), &mut each)
    }

    /// The directory's inode number (`fstat`'s `st_ino`; `O_PATH` fds may
    /// be given to `fstat` since Linux 3.6, open(2)).
    #[cfg(target_os = "linux")]
    pub fn inode(&self) -> io::Result<u64> {
        let stat = retry_eintr(|| rustix::fs::fstat(&self.fd))?;
        #[allow(clippy::useless_conversion)] // `c_ulong` on some targets
        Ok(u64::from(stat.st_ino))
    }

    /// The magic number of the filesystem holding the directory
    /// (`fstatfs`'s `f_type`, one of `linux/magic.h`, e.g. `0x63677270` for
    /// cgroup2; `O_PATH` fds may be given to `fstatfs` since Linux 3.12,
    /// open(2)).
    #[cfg(target_os = "linux")]
    pub fn filesystem_magic(&self) -> io::Result<u64> {
        let statfs = retry_eintr(|| rustix::fs::fstatfs(&self.fd))?;
        // The magic numbers are 32-bit constants; `f_type` is a signed
        // word, negative for the large ones on 32-bit targets.
        #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
        Ok(u64::from(statfs.f_type as u32))
    }
}

/// [`Dir::list_names`] on a readable directory fd, from its current offset.
#[cfg(target_os = "linux")]
fn list_names_from(fd: BorrowedFd<'_>, each: &mut impl FnMut(&std::ffi::OsStr)) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let mut buf = [core::mem::MaybeUninit::<u8>::uninit(); LIST_BUFFER];
    let mut entries = rustix::fs::RawDir::new(fd, &mut buf);
    while let Some(entry) = entries.next() {
        let entry = entry.map_err(io::Error::from)?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            each(std::ffi::OsStr::from_bytes(name));
        }
    }
    Ok(())
}

impl AsFd for Dir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// A file opened once for reading and re-read from offset 0 on each
/// [`HeldFile::read`].
#[derive(Debug)]
pub struct HeldFile {
    fd: OwnedFd,
}

impl HeldFile {
    /// Opens `path` read-only.
    pub fn open(path: impl AsRef<Path>) -> io::Result<HeldFile> {
        let path = path.as_ref();
        let fd = retry_eintr(|| rustix::fs::open(path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()))?;
        Ok(HeldFile { fd })
    }

    /// Opens `name` relative to a held directory.
    pub fn open_at(dir: &Dir, name: impl AsRef<Path>) -> io::Result<HeldFile> {
        let name = name.as_ref();
        let fd = retry_eintr(|| rustix::fs::openat(dir, name, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()))?;
        Ok(HeldFile { fd })
    }

    /// Wraps an already open fd (e.g. one opened inside another namespace).
    #[must_use]
    pub fn from_fd(fd: OwnedFd) -> HeldFile {
        HeldFile { fd }
    }

    /// Reads the whole file from offset 0 into `buf` (cleared first) and
    /// returns it. The buffer keeps its capacity for the next read.
    pub fn read<'b>(&self, buf: &'b mut Vec<u8>) -> io::Result<&'b [u8]> {
        buf.clear();
        pread_to_end(&self.fd, buf, End::EmptyRead)?;
        Ok(buf.as_slice())
    }

    /// [`read`](Self::read) for a file the kernel generates in one piece,
    /// or a regular file: a `pread` that does not fill the buffer is the
    /// end, so a file that fits takes one system call instead of two.
    ///
    /// In one piece means one `show()` call per read of a `seq_file` — every
    /// cgroup v2 interface file except `cgroup.procs`/`cgroup.threads`
    /// (kernfs), and `single_open` procfs files such as `/proc/stat`,
    /// `/proc/meminfo`, `/proc/loadavg`, `/proc/pressure/*`: `seq_read_iter`
    /// (fs/seq_file.c) grows its buffer until that one record fits, then
    /// copies as much of it as the reader asked for, so a read returns less
    /// only when the record ends. Files made of many records (`/proc/net/dev`,
    /// `mountinfo`, `cgroup.procs`) can return less before their end: read
    /// those with [`read`](Self::read).
    pub fn read_single<'b>(&self, buf: &'b mut Vec<u8>) -> io::Result<&'b [u8]> {
        buf.clear();
        pread_to_end(&self.fd, buf, End::ShortRead)?;
        Ok(buf.as_slice())
    }

    /// [`read`](Self::read) appending to `buf` instead of replacing its
    /// content: returns where the file's bytes are in `buf`. On error `buf`
    /// may hold part of the file after the range's start.
    pub fn read_append(&self, buf: &mut Vec<u8>) -> io::Result<core::ops::Range<usize>> {
        let start = buf.len();
        pread_to_end(&self.fd, buf, End::EmptyRead)?;
        Ok(start..buf.len())
    }

    /// [`read_single`](Self::read_single) appending to `buf` instead of
    /// replacing its content: returns where the file's bytes are in `buf`.
    /// For reading several files into one buffer (a probe that reads every
    /// file of a sample before parsing any). Before each `pread` at least a
    /// page is free, so a small file still takes one system call. On error
    /// `buf` may hold part of the file after the range's start.
    pub fn read_single_append(&self, buf: &mut Vec<u8>) -> io::Result<core::ops::Range<usize>> {
        let start = buf.len();
        pread_to_end(&self.fd, buf, End::ShortRead)?;
        Ok(start..buf.len())
    }
}

impl AsFd for HeldFile {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// What ends a read of the whole file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// A `pread` that returns 0 (any file).
    EmptyRead,
    /// A `pread` that does not fill the space offered (see [`HeldFile::read_single`]).
    ShortRead,
}

/// `pread` from offset 0 until `end`, appending to `buf` (the file's bytes
/// start at the length `buf` had). The first `pread`, and each after one
/// that filled the space it was offered, is offered at least
/// [`INITIAL_CAPACITY`] bytes, or as many as were read so far. After a
/// short read the space left is offered as it is: the read that finds the
/// end (`End::EmptyRead`) needs no more, and growing the buffer for it
/// touched a fresh page — a page fault — on every small file read whole.
fn pread_to_end(fd: &OwnedFd, buf: &mut Vec<u8>, end: End) -> io::Result<()> {
    let start = buf.len();
    let mut short = false;
    loop {
        let read_so_far = buf.len().saturating_sub(start);
        let wanted = if short { 1 } else { INITIAL_CAPACITY.max(read_so_far) };
        if buf.capacity().saturating_sub(buf.len()) < wanted {
            buf.reserve(wanted);
        }
        let offered = buf.capacity().saturating_sub(buf.len());
        let offset = u64::try_from(buf.len().saturating_sub(start)).unwrap_or(u64::MAX);
        // `spare_capacity` appends what was read to `buf`'s length.
        let filled = retry_eintr(|| rustix::io::pread(fd, rustix::buffer::spare_capacity(&mut *buf), offset))?;
        if filled == 0 || (end == End::ShortRead && filled < offered) {
            return Ok(());
        }
        short = filled < offered;
    }
}

/// Opens, reads to EOF and closes `path` — `std::fs::read` for kernel
/// files. They report a size of 0, so `std::fs::read` (a `statx` for the
/// size hint, then reads of 32, 32, 64, 128, ... bytes) makes up to ten
/// system calls for a 2 KiB file; this makes four (open, a page-sized
/// `pread`, the `pread` that returns 0, close).
///
/// ```
/// # #[cfg(target_os = "linux")] {
/// let loadavg = stepmon_fdread::read_path("/proc/loadavg")?;
/// assert!(loadavg.ends_with(b"\n"));
/// # }
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn read_path(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    HeldFile::open(path)?.read(&mut buf)?;
    Ok(buf)
}

/// Opens, reads to EOF and closes `name` relative to `dir`: the
/// open/read/close strategy, kept for comparison in benchmarks and for files
/// read only once.
pub fn read_once<'b>(dir: &Dir, name: impl AsRef<Path>, buf: &'b mut Vec<u8>) -> io::Result<&'b [u8]> {
    let file = HeldFile::open_at(dir, name)?;
    file.read(buf)
}

/// One entry of a directory listed by [`list_dir`] (never `.` or `..`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// The entry's name.
    pub name: std::ffi::OsString,
    /// Whether it is a directory (not following a symlink).
    pub is_dir: bool,
}

/// Lists a directory: its entries but `.` and `..`, each with whether it is
/// a directory (from `getdents64`'s `d_type`, which procfs, sysfs and
/// cgroupfs fill; `fstatat` where a filesystem leaves it unknown).
///
/// Why not `std::fs::read_dir`: std reads through the C library's
/// `opendir`, whose buffer comes from the C library's allocator; musl's maps
/// it and unmaps it at `closedir`, and each unmap while a second thread runs
/// is a TLB shootdown on the other CPU (seven directories a `stepmon run`).
/// Here the buffer is a `Vec` of the program's own allocator.
///
/// ```
/// # #[cfg(target_os = "linux")] {
/// let proc = stepmon_fdread::list_dir("/proc")?;
/// assert!(proc.iter().any(|e| e.name == "self"));
/// assert!(proc.iter().any(|e| e.name == "1" && e.is_dir));
/// # }
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn list_dir(path: impl AsRef<Path>) -> io::Result<Vec<DirEntry>> {
    use std::os::unix::ffi::OsStrExt;
    let path = path.as_ref();
    let fd = retry_eintr(|| rustix::fs::open(path, READABLE_DIR_FLAGS, Mode::empty()))?;
    let mut dir = rustix::fs::Dir::new(fd)?;
    let mut entries = Vec::new();
    while let Some(entry) = dir.read() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let is_dir = match entry.file_type() {
            rustix::fs::FileType::Unknown => {
                let fd = dir.fd()?;
                let stat =
                    retry_eintr(|| rustix::fs::statat(fd, entry.file_name(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW))?;
                rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::Directory
            }
            kind => kind == rustix::fs::FileType::Directory,
        };
        entries.push(DirEntry { name: std::ffi::OsStr::from_bytes(name).to_owned(), is_dir });
    }
    Ok(entries)
}

/// Whether an error means the file (or the cgroup holding it) is gone:
/// `ENOENT` before open, `ENODEV` when a cgroup was removed while its file
/// was open (kernfs refuses reads of a removed node with `ENODEV`:
/// <https://github.com/torvalds/linux/blob/master/fs/kernfs/file.c>).
#[must_use]
pub fn is_gone(error: &io::Error) -> bool {
    matches!(error.raw_os_error().map(Errno::from_raw_os_error), Some(Errno::NOENT | Errno::NODEV))
}

/// Whether an error means the kernel does not support the operation on this
/// file: `EOPNOTSUPP`, e.g. PSI files when PSI is compiled in but disabled
/// (BuildKit #3997), `cgroup.procs` in a threaded cgroup.
#[must_use]
pub fn is_unsupported(error: &io::Error) -> bool {
    error.raw_os_error().map(Errno::from_raw_os_error) == Some(Errno::OPNOTSUPP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_a_directory_without_dot_entries_and_says_which_are_directories() {
        let scratch = tempfile::Builder::new().prefix("stepmon-fdread-").tempdir().unwrap();
        std::fs::create_dir(scratch.path().join("sub")).unwrap();
        std::fs::write(scratch.path().join("file"), b"x").unwrap();
        std::os::unix::fs::symlink("sub", scratch.path().join("link")).unwrap();
        let mut entries = list_dir(scratch.path()).unwrap();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        let got: Vec<_> = entries.iter().map(|e| (e.name.to_str().unwrap(), e.is_dir)).collect();
        assert_eq!(got, [("file", false), ("link", false), ("sub", true)]);
        assert_eq!(list_dir(scratch.path().join("file")).unwrap_err().raw_os_error(), Some(20)); // ENOTDIR
        assert_eq!(list_dir(scratch.path().join("gone")).unwrap_err().kind(), io::ErrorKind::NotFound);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn lists_names_through_a_readable_or_path_dir_again_and_beyond_one_buffer() {
        use std::os::unix::fs::MetadataExt;
        let scratch = tempfile::Builder::new().prefix("stepmon-fdread-").tempdir().unwrap();
        // More entries than one getdents64 buffer holds (~60 bytes each).
        let mut expected: Vec<String> = (0..200).map(|i| format!("memory.long-name-of-entry-{i:04}")).collect();
        for name in &expected {
            std::fs::write(scratch.path().join(name), b"").unwrap();
        }
        std::fs::create_dir(scratch.path().join("child")).unwrap();
        expected.push("child".to_owned());
        expected.sort();
        let names = |dir: &mut Dir| {
            let mut names = Vec::new();
            dir.list_names(|name| names.push(name.to_str().unwrap().to_owned())).unwrap();
            names.sort();
            names
        };
        let mut readable = Dir::open_readable(scratch.path()).unwrap();
        assert_eq!(names(&mut readable), expected);
        assert_eq!(names(&mut readable), expected, "a second listing starts from the start again");
        // Still an anchor for openat after the listing moved its offset.
        assert!(HeldFile::open_at(&readable, "child").is_ok());
        let mut path_only = Dir::open(scratch.path()).unwrap();
        assert_eq!(names(&mut path_only), expected);
        assert_eq!(names(&mut path_only), expected);
        let mut sub = path_only.open_dir_at("child").unwrap();
        assert_eq!(names(&mut sub), Vec::<String>::new(), "an empty directory lists nothing, not . or ..");

        assert_eq!(readable.inode().unwrap(), std::fs::metadata(scratch.path()).unwrap().ino());
        assert_eq!(sub.inode().unwrap(), std::fs::metadata(scratch.path().join("child")).unwrap().ino());
        // PROC_SUPER_MAGIC (include/uapi/linux/magic.h), through an O_PATH fd.
        assert_eq!(Dir::open("/proc").unwrap().filesystem_magic().unwrap(), 0x9fa0);
        assert_ne!(readable.filesystem_magic().unwrap(), 0x9fa0);
        assert_eq!(Dir::open_readable(scratch.path().join("gone")).unwrap_err().kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn rereads_fresh_content_through_one_fd() {
        let scratch = tempfile::Builder::new().prefix("stepmon-fdread-").tempdir().unwrap();
        let dir = scratch.path();
        std::fs::write(dir.join("f"), b"one\n").unwrap();
        let held_dir = Dir::open(dir).unwrap();
        let file = HeldFile::open_at(&held_dir, "f").unwrap();
        let mut buf = Vec::new();
        assert_eq!(file.read(&mut buf).unwrap(), b"one\n");
        std::fs::write(dir.join("f"), b"two, longer than before\n").unwrap();
        assert_eq!(file.read(&mut buf).unwrap(), b"two, longer than before\n");
        assert_eq!(read_once(&held_dir, "f", &mut buf).unwrap(), b"two, longer than before\n");
        let missing = HeldFile::open_at(&held_dir, "nope").unwrap_err();
        assert!(is_gone(&missing) && !is_unsupported(&missing));
    }

    #[test]
    fn reads_files_larger_than_the_first_buffer() {
        // /proc/self/mountinfo or /proc/stat may be small here; build a big file.
        let scratch = tempfile::Builder::new().prefix("stepmon-fdread-").tempdir().unwrap();
        let path = scratch.path().join("big");
        let content: Vec<u8> = (0..20_000u32).flat_map(|i| format!("{i}\n").into_bytes()).collect();
        std::fs::write(&path, &content).unwrap();
        let file = HeldFile::open(&path).unwrap();
        let mut buf = Vec::new();
        assert_eq!(file.read(&mut buf).unwrap(), content.as_slice());
        // A full buffer is not the end: read_single goes on too.
        let mut buf = Vec::new();
        assert_eq!(file.read_single(&mut buf).unwrap(), content.as_slice());
        assert_eq!(file.read_single(&mut buf).unwrap(), content.as_slice(), "again, into the grown buffer");
        // Appended after another file's bytes, starting at an odd length:
        // the range is the whole file, the bytes before it are kept.
        let small = scratch.path().join("small");
        std::fs::write(&small, b"populated 1\n").unwrap();
        let small_file = HeldFile::open(&small).unwrap();
        for _ in 0..2 {
            buf.clear();
            let first = small_file.read_single_append(&mut buf).unwrap();
            let second = file.read_single_append(&mut buf).unwrap();
            let third = small_file.read_single_append(&mut buf).unwrap();
            assert_eq!((first.start, first.end, second.start), (0, 12, 12));
            assert_eq!(&buf[first], b"populated 1\n");
            assert_eq!(&buf[second.clone()], content.as_slice());
            assert_eq!((third.start, &buf[third.clone()]), (second.end, &b"populated 1\n"[..]));
        }
    }

    #[test]
    fn finds_the_end_in_the_space_a_short_read_left() {
        let scratch = tempfile::Builder::new().prefix("stepmon-fdread-").tempdir().unwrap();
        // Around the first read's size: one byte of space left, none, one byte more.
        for len in [INITIAL_CAPACITY - 1, INITIAL_CAPACITY, INITIAL_CAPACITY + 1] {
            let content: Vec<u8> = (0..len).map(|i| b"abcdefghij"[i % 10]).collect();
            let path = scratch.path().join(format!("f{len}"));
            std::fs::write(&path, &content).unwrap();
            let mut buf = Vec::new();
            assert_eq!(HeldFile::open(&path).unwrap().read(&mut buf).unwrap(), content.as_slice(), "{len} bytes");
            assert_eq!(read_path(&path).unwrap(), content, "{len} bytes");
            // Appended after other bytes: the range is the whole file.
            let mut appended = b"before".to_vec();
            let range = HeldFile::open(&path).unwrap().read_append(&mut appended).unwrap();
            assert_eq!((range.start, &appended[range]), (6, content.as_slice()), "{len} bytes");
            assert_eq!(&appended[..6], b"before");
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn procfs_seq_files_reread_from_zero() {
        // A file of many records, which may return less before its end.
        let mountinfo = std::fs::read("/proc/self/mountinfo").unwrap();
        assert_eq!(read_path("/proc/self/mountinfo").unwrap(), mountinfo);
        let file = HeldFile::open("/proc/self/stat").unwrap();
        let mut buf = Vec::new();
        let a = file.read(&mut buf).unwrap().to_vec();
        let b = file.read(&mut buf).unwrap();
        assert!(!a.is_empty() && !b.is_empty());
        assert_eq!(a.split(|&c| c == b' ').next(), b.split(|&c| c == b' ').next(), "same pid field");
        // One piece, read through a buffer that starts too small: the full
        // first reads continue where they stopped.
        let loadavg = HeldFile::open("/proc/loadavg").unwrap();
        let mut small = Vec::with_capacity(4);
        let whole = loadavg.read_single(&mut small).unwrap();
        assert!(whole.ends_with(b"\n") && whole.split(|&c| c == b' ').count() == 5, "{whole:?}");
    }
}
