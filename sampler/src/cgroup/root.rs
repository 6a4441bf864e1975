//! Whether a cgroup directory is the root of the cgroup v2 hierarchy.

use std::io;

use stepmon_fdread::Dir;

/// `CGROUP2_SUPER_MAGIC` (include/uapi/linux/magic.h): `fstatfs`'s `f_type`
/// on a cgroup2 mount.
const CGROUP2_SUPER_MAGIC: u64 = 0x6367_7270;

/// The inode number of a kernfs hierarchy's root directory. kernfs numbers
/// its nodes from one idr per hierarchy starting at 1 ("The starting value
/// for both ino and generation is 1", `kernfs_create_root` in
/// <https://github.com/torvalds/linux/blob/master/fs/kernfs/dir.c>), the
/// root is the first node it makes, and a node's id is its inode number
/// (`kernfs_ino`, include/linux/kernfs.h).
const KERNFS_ROOT_INODE: u64 = 1;

/// Whether `dir` is the root of the cgroup v2 hierarchy: a directory on
/// cgroup2 whose inode is the hierarchy's first, as `stat -c %i
/// /sys/fs/cgroup` shows (1).
///
/// Not the absence of a "non-root" file: a copy of the root, or a test's
/// directory, lacks them too. Not a cgroup2 mount point either: in a cgroup
/// namespace the mount's root is the namespace's cgroup, a non-root cgroup
/// with every non-root file (its mountinfo root field still reads `/`,
/// proc(5), as the path is shown relative to the reader's namespace;
/// <https://docs.kernel.org/admin-guide/cgroup-v2.html#namespace>), and
/// reading mountinfo costs a path walk per mount. Two system calls on the
/// held directory: `fstat`, and `fstatfs` only for inode 1.
pub(crate) fn is_hierarchy_root(dir: &Dir) -> io::Result<bool> {
    Ok(dir.inode()? == KERNFS_ROOT_INODE && dir.filesystem_magic()? == CGROUP2_SUPER_MAGIC)
}
