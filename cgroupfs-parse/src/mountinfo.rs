//! `/proc/self/mountinfo`, to find cgroup2 mounts:
//! <https://docs.kernel.org/filesystems/proc.html#proc-pid-mountinfo-information-about-mounts>.

#[path = "escaped.rs"]
mod escaped;

pub use escaped::{Escaped, Unescape};

use crate::error::{ErrorKind, Result};
use crate::io::DeviceId;
use crate::lines::{Fields, Line, Lines};
use crate::number::parse_u32;

/// One mount, borrowed from a line of `/proc/<pid>/mountinfo`, spec:
/// <https://docs.kernel.org/filesystems/proc.html#proc-pid-mountinfo-information-about-mounts>.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MountEntry<'a> {
    /// Unique mount ID (field 1).
    pub mount_id: u32,
    /// Parent mount ID (field 2).
    pub parent_id: u32,
    /// `st_dev` of files on this filesystem (field 3).
    pub device: DeviceId,
    /// Root of the mount within its filesystem (field 4), escaped.
    pub root: Escaped<'a>,
    /// Mount point relative to the reader's root (field 5), escaped.
    pub mount_point: Escaped<'a>,
    /// Per-mount options (field 6).
    pub mount_options: &'a str,
    /// Optional fields (`shared:N`, `master:N`, ...), space separated, maybe empty.
    pub optional_fields: &'a str,
    /// Filesystem type, `type` or `type.subtype`.
    pub fs_type: &'a str,
    /// Mount source (`none` if unknown), escaped.
    pub source: Escaped<'a>,
    /// Per-superblock options (for cgroup2: `nsdelegate`, `memory_recursiveprot`, ...).
    pub super_options: &'a str,
    /// 1-based line number.
    pub line: usize,
}

impl MountEntry<'_> {
    /// Whether this is a cgroup v2 mount.
    #[must_use]
    pub fn is_cgroup2(&self) -> bool {
        self.fs_type == "cgroup2"
    }

    /// Whether a per-superblock option is set (e.g. `nsdelegate`).
    #[must_use]
    pub fn has_super_option(&self, option: &str) -> bool {
        self.super_options.split(',').any(|o| o == option)
    }

    fn parse(line: Line<'_>) -> Result<MountEntry<'_>> {
        let mut fields = Fields::new(line.bytes);
        let mut next = |kind| fields.next().ok_or(line.error_at(kind, line.bytes.len()));
        let (at, id) = next(ErrorKind::MissingField)?;
        let mount_id = parse_u32(id).map_err(|k| line.error_at(k, at))?;
        let (at, parent) = next(ErrorKind::MissingField)?;
        let parent_id = parse_u32(parent).map_err(|k| line.error_at(k, at))?;
        let (at, dev) = next(ErrorKind::MissingField)?;
        let device = DeviceId::parse(dev).map_err(|k| line.error_at(k, at))?;
        let (_, root) = next(ErrorKind::MissingField)?;
        let (_, mount_point) = next(ErrorKind::MissingField)?;
        let (at, options) = next(ErrorKind::MissingField)?;
        let mount_options = text(options).map_err(|k| line.error_at(k, at))?;
        // Optional fields run up to a field that is exactly "-".
        let mut optional_start = None;
        let mut optional_end = 0usize;
        loop {
            let (at, field) = next(ErrorKind::MissingSeparator)?;
            if field == b"-" {
                break;
            }
            optional_start.get_or_insert(at);
            optional_end = at.saturating_add(field.len());
        }
        let optional_fields = match optional_start {
            Some(start) => {
                text(line.bytes.get(start..optional_end).unwrap_or_default()).map_err(|k| line.error_at(k, start))?
            }
            None => "",
        };
        let (at, fs_type) = next(ErrorKind::MissingField)?;
        let fs_type = text(fs_type).map_err(|k| line.error_at(k, at))?;
        let (_, source) = next(ErrorKind::MissingField)?;
        let (at, super_options) = next(ErrorKind::MissingField)?;
        let super_options = text(super_options).map_err(|k| line.error_at(k, at))?;
        if let Some((at, _)) = fields.next() {
            return Err(line.error_at(ErrorKind::TrailingData, at));
        }
        Ok(MountEntry {
            mount_id,
            parent_id,
            device,
            root: Escaped::new(root),
            mount_point: Escaped::new(mount_point),
            mount_options,
            optional_fields,
            fs_type,
            source: Escaped::new(source),
            super_options,
            line: line.number,
        })
    }
}

/// Text without control characters, single spaces allowed (optional fields
/// are joined). Options and types are printed raw apart from the octal
/// escapes of `,= \t\n\\` (e.g. an overlay's `lowerdir=/home/jürgen/...`), so
/// any UTF-8 is accepted; bytes that are not UTF-8 are an error for that line.
fn text(bytes: &[u8]) -> core::result::Result<&str, ErrorKind> {
    if bytes.iter().any(|&b| b < b' ' || b == 0x7f) {
        return Err(ErrorKind::InvalidKey);
    }
    core::str::from_utf8(bytes).map_err(|_| ErrorKind::InvalidKey)
}

/// Iterator over the mounts of a `/proc/<pid>/mountinfo`. Stops after the
/// first error.
///
/// ```
/// use stepmon_cgroupfs_parse::mountinfo::MountInfo;
/// let input = b"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
/// let m = MountInfo::new(input).next().unwrap()?;
/// assert!(m.is_cgroup2() && m.mount_point.eq_unescaped(b"/sys/fs/cgroup/unified"));
/// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
/// ```
#[derive(Debug, Clone)]
pub struct MountInfo<'a> {
    lines: Lines<'a>,
}

impl<'a> MountInfo<'a> {
    /// Mounts of `input`.
    #[must_use]
    pub fn new(input: &'a [u8]) -> Self {
        MountInfo { lines: Lines::new(input) }
    }
}

impl<'a> Iterator for MountInfo<'a> {
    type Item = Result<MountEntry<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let line = self.lines.next()?;
        let entry = MountEntry::parse(line);
        if entry.is_err() {
            self.lines.finish();
        }
        Some(entry)
    }
}

impl core::iter::FusedIterator for MountInfo<'_> {}

/// Picks the cgroup2 mount through which a process's cgroup is reached, per
/// <https://docs.kernel.org/admin-guide/cgroup-v2.html#mounting>: among the
/// cgroup2 mounts whose root is a prefix of `cgroup_path` (the `0::` path of
/// `/proc/self/cgroup`), prefer `/sys/fs/cgroup`, then
/// `/sys/fs/cgroup/unified` (hybrid hosts), then the deepest root, then the
/// first listed. `Ok(None)` when no cgroup2 mount serves that path.
///
/// ```
/// use stepmon_cgroupfs_parse::mountinfo::find_cgroup2_mount;
/// let input = b"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
/// let m = find_cgroup2_mount(input, b"/user.slice")?.unwrap();
/// assert!(m.mount_point.eq_unescaped(b"/sys/fs/cgroup/unified"));
/// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
/// ```
pub fn find_cgroup2_mount<'a>(mountinfo: &'a [u8], cgroup_path: &[u8]) -> Result<Option<MountEntry<'a>>> {
    let mut best: Option<(MountEntry<'a>, (u8, usize))> = None;
    for entry in MountInfo::new(mountinfo) {
        let entry = entry?;
        if !entry.is_cgroup2() || !root_serves(entry.root, cgroup_path) {
            continue;
        }
        let place = if entry.mount_point.eq_unescaped(b"/sys/fs/cgroup") {
            2
        } else if entry.mount_point.eq_unescaped(b"/sys/fs/cgroup/unified") {
            1
        } else {
            0
        };
        let rank = (place, entry.root.unescaped_len());
        if best.as_ref().is_none_or(|(_, best_rank)| rank > *best_rank) {
            best = Some((entry, rank));
        }
    }
    Ok(best.map(|(entry, _)| entry))
}

/// Whether a mount whose root is `root` contains the cgroup `path`: `root`
/// is `/` or a path-component prefix of `path`.
fn root_serves(root: Escaped<'_>, path: &[u8]) -> bool {
    if root.eq_unescaped(b"/") {
        return true;
    }
    // The root is escaped (mountinfo), the cgroup path is not (/proc/self/cgroup).
    let len = root.unescaped_len();
    root.starts_with_unescaped(b"/")
        && path.iter().copied().take(len).eq(root.bytes())
        && matches!(path.get(len), None | Some(b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST_LINE: &[u8] = b"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

    #[test]
    fn optional_fields_and_escapes() {
        let input = b"30 1 0:26 /a\\040b /mnt/x\\011y rw,nosuid shared:4 master:1 - cgroup2 my\\134src rw,nsdelegate,memory_recursiveprot\n";
        let m = MountInfo::new(input).next().unwrap().unwrap();
        assert_eq!(m.optional_fields, "shared:4 master:1");
        assert!(m.root.eq_unescaped(b"/a b"));
        assert!(m.mount_point.eq_unescaped(b"/mnt/x\ty"));
        assert!(m.source.eq_unescaped(b"my\\src"));
        assert!(m.has_super_option("nsdelegate") && !m.has_super_option("rw,nsdelegate"));
        assert_eq!(m.device, DeviceId { major: 0, minor: 26 });
    }

    #[test]
    fn malformed_lines() {
        let kind = |i: &[u8]| MountInfo::new(i).next().unwrap().unwrap_err().kind;
        assert_eq!(kind(b"41 31 0:38 / /x rw cgroup2 cgroup2 rw\n"), ErrorKind::MissingSeparator);
        assert_eq!(kind(b"41 31 0:38 / /x rw -\n"), ErrorKind::MissingField);
        assert_eq!(kind(b"41 31 038 / /x rw - cgroup2 cgroup2 rw\n"), ErrorKind::InvalidField);
        assert_eq!(kind(b"x 31 0:38 / /x rw - cgroup2 cgroup2 rw\n"), ErrorKind::InvalidNumber);
        assert_eq!(kind(b"41 31 0:38 / /x rw - cgroup2 cgroup2 rw extra\n"), ErrorKind::TrailingData);
        assert_eq!(kind(b"41 31 0:38 / /x rw - cgroup2\r cgroup2 rw\n"), ErrorKind::InvalidKey);
    }

    #[test]
    fn selection_prefers_standard_places_and_matching_roots() {
        let pure =
            b"20 1 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n90 20 0:30 / /var/lib/x/cg rw - cgroup2 cgroup2 rw\n";
        let m = find_cgroup2_mount(pure, b"/system.slice").unwrap().unwrap();
        assert_eq!(m.mount_id, 20);
        let m = find_cgroup2_mount(HOST_LINE, b"/").unwrap().unwrap();
        assert_eq!(m.mount_id, 41);
        // A container's view: root /kubepods/pod1 mounted at /sys/fs/cgroup.
        let container = b"5 1 0:30 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        assert!(find_cgroup2_mount(container, b"/kubepods/pod1/c").unwrap().is_some());
        assert!(find_cgroup2_mount(container, b"/kubepods/pod10").unwrap().is_none());
        assert!(find_cgroup2_mount(b"22 27 0:21 / /proc rw - proc proc rw\n", b"/").unwrap().is_none());
        // A cgroup literally named `a\040b`: escaped in mountinfo, raw in /proc/self/cgroup (found by fuzzing).
        let odd = b"5 1 0:30 /a\\134040b /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        assert_eq!(find_cgroup2_mount(odd, b"/a\\040b/c").unwrap().map(|m| m.mount_id), Some(5));
    }
}
