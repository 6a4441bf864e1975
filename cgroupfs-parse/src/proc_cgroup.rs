//! `/proc/<pid>/cgroup`: <https://docs.kernel.org/admin-guide/cgroup-v2.html#processes>.

use crate::error::{ErrorKind, Result};
use crate::lines::{Line, Lines};
use crate::number::parse_u32;

const DELETED: &[u8] = b" (deleted)";

/// One line `ID:CONTROLLERS:PATH` of `/proc/<pid>/cgroup`, spec:
/// <https://docs.kernel.org/admin-guide/cgroup-v2.html#processes>.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CgroupEntry<'a> {
    /// Hierarchy ID; `0` is the cgroup v2 hierarchy.
    pub hierarchy_id: u32,
    /// Comma separated v1 controllers (`cpu,cpuacct`, `name=systemd`); empty for v2.
    pub controllers: &'a str,
    /// The cgroup path relative to the reader's cgroup-namespace root
    /// (may start with `/..`), without a ` (deleted)` suffix. Bytes, since
    /// cgroup names need not be UTF-8.
    pub path: &'a [u8],
    /// The kernel appended ` (deleted)`: the cgroup was removed (zombie).
    pub deleted: bool,
}

impl<'a> CgroupEntry<'a> {
    /// Whether this is the cgroup v2 line (`0::PATH`).
    #[must_use]
    pub fn is_unified(&self) -> bool {
        self.hierarchy_id == 0 && self.controllers.is_empty()
    }

    /// The v1 controller names of this line.
    pub fn controller_names(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.controllers.split(',').filter(|c| !c.is_empty())
    }

    fn parse(line: Line<'a>) -> Result<CgroupEntry<'a>> {
        let (id, rest, rest_at) = line.split_once(b':').ok_or(line.error(ErrorKind::MissingSeparator))?;
        let hierarchy_id = parse_u32(id).map_err(|k| line.error(k))?;
        let colon = crate::lines::find_byte(b':', rest).ok_or(line.error_at(ErrorKind::MissingSeparator, rest_at))?;
        let controllers = rest.get(..colon).unwrap_or_default();
        let path_at = rest_at.saturating_add(colon).saturating_add(1);
        let path = rest.get(colon.saturating_add(1)..).unwrap_or_default();
        let controllers = if controllers.iter().all(|&b| b.is_ascii_graphic()) {
            core::str::from_utf8(controllers).map_err(|_| line.error_at(ErrorKind::InvalidKey, rest_at))?
        } else {
            return Err(line.error_at(ErrorKind::InvalidKey, rest_at));
        };
        if path.first() != Some(&b'/') || path.iter().any(|&b| b < b' ' || b == 0x7f) {
            return Err(line.error_at(ErrorKind::InvalidField, path_at));
        }
        let (path, deleted) = match path.strip_suffix(DELETED) {
            Some(stripped) => (stripped, true),
            None => (path, false),
        };
        Ok(CgroupEntry { hierarchy_id, controllers, path, deleted })
    }
}

/// Iterator over the lines of `/proc/<pid>/cgroup`. Stops after the first error.
///
/// ```
/// use stepmon_cgroupfs_parse::proc_cgroup::{ProcCgroup, unified_entry};
/// let input = b"1:cpu:/\n0::/user.slice/session-1.scope\n";
/// assert_eq!(ProcCgroup::new(input).count(), 2);
/// assert_eq!(unified_entry(input)?.unwrap().path, b"/user.slice/session-1.scope");
/// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ProcCgroup<'a> {
    lines: Lines<'a>,
}

impl<'a> ProcCgroup<'a> {
    /// Lines of `input`.
    #[must_use]
    pub fn new(input: &'a [u8]) -> Self {
        ProcCgroup { lines: Lines::new(input) }
    }
}

impl<'a> Iterator for ProcCgroup<'a> {
    type Item = Result<CgroupEntry<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let entry = CgroupEntry::parse(self.lines.next()?);
        if entry.is_err() {
            self.lines.finish();
        }
        Some(entry)
    }
}

impl core::iter::FusedIterator for ProcCgroup<'_> {}

/// The cgroup v2 (`0::`) line, if any. Pure v1 hosts have none; the whole
/// input is validated either way.
pub fn unified_entry(input: &[u8]) -> Result<Option<CgroupEntry<'_>>> {
    let mut found = None;
    for entry in ProcCgroup::new(input) {
        let entry = entry?;
        if entry.is_unified() && found.is_none() {
            found = Some(entry);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hybrid_and_odd_paths() {
        let input = b"4:memory:/redacted/0123\n9:name=systemd:/\n0::/a:b/c (deleted)\n";
        let all: std::vec::Vec<_> = ProcCgroup::new(input).map(Result::unwrap).collect();
        assert_eq!(all[0].controller_names().collect::<std::vec::Vec<_>>(), ["memory"]);
        assert!(!all[1].is_unified());
        let v2 = unified_entry(input).unwrap().unwrap();
        assert_eq!((v2.path, v2.deleted), (&b"/a:b/c"[..], true));
        assert!(unified_entry(b"1:cpu:/\n").unwrap().is_none());
        assert_eq!(unified_entry(b"0::/../../x\n").unwrap().unwrap().path, b"/../../x");
    }

    #[test]
    fn malformed() {
        let kind = |i: &[u8]| ProcCgroup::new(i).next().unwrap().unwrap_err().kind;
        assert_eq!(kind(b"0/\n"), ErrorKind::MissingSeparator);
        assert_eq!(kind(b"0:/\n"), ErrorKind::MissingSeparator);
        assert_eq!(kind(b"x::/\n"), ErrorKind::InvalidNumber);
        assert_eq!(kind(b"0::\n"), ErrorKind::InvalidField);
        assert_eq!(kind(b"0::/a\r\n"), ErrorKind::InvalidField);
        assert_eq!(kind(b"0:c pu:/\n"), ErrorKind::InvalidKey);
    }
}
