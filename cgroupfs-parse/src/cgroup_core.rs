//! cgroup core files: <https://docs.kernel.org/admin-guide/cgroup-v2.html#core-interface-files>.

use crate::error::Result;
use crate::format::flat::{self, FlatEntry};
use crate::format::list::{NewlineList, SpaceList};
use crate::format::single::{flag, parse_text};
use crate::number::parse_u32;

/// `cgroup.events` (flat keyed; not on the root), spec:
/// <https://docs.kernel.org/admin-guide/cgroup-v2.html#core-interface-files>.
///
/// ```
/// let e = stepmon_cgroupfs_parse::CgroupEvents::parse(b"populated 1\nfrozen 0\n").unwrap();
/// assert_eq!((e.populated, e.frozen), (Some(true), Some(false)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct CgroupEvents {
    /// A live process is in this cgroup or a descendant. 4.5.
    pub populated: Option<bool>,
    /// The cgroup is frozen. 5.2.
    pub frozen: Option<bool>,
}

impl CgroupEvents {
    /// Parses `cgroup.events`; values must be `0` or `1`.
    pub fn parse(input: &[u8]) -> Result<CgroupEvents> {
        match CgroupEvents::parse_kernel_layout(input) {
            Some(out) => Ok(out),
            None => CgroupEvents::parse_general(input),
        }
    }

    /// The file exactly as `cgroup_events_show()` (`kernel/cgroup/cgroup.c`)
    /// prints it, `"populated %d\nfrozen %d\n"` with flags `0`/`1`, read as
    /// one pattern; `None` for anything else (an older kernel without
    /// `frozen`, a new key, any error), which the general parser decides.
    #[inline]
    fn parse_kernel_layout(input: &[u8]) -> Option<CgroupEvents> {
        let flag = |b: &u8| match b {
            b'0' => Some(false),
            b'1' => Some(true),
            _ => None,
        };
        let (populated, rest) = input.strip_prefix(b"populated ")?.split_first()?;
        let (frozen, rest) = rest.strip_prefix(b"\nfrozen ")?.split_first()?;
        (rest == b"\n").then_some(CgroupEvents { populated: Some(flag(populated)?), frozen: Some(flag(frozen)?) })
    }

    /// Any flat keyed layout: decides every value and error.
    fn parse_general(input: &[u8]) -> Result<CgroupEvents> {
        let mut out = CgroupEvents::default();
        flat::for_each(input, |entry| {
            match entry.key {
                "populated" => out.populated = Some(entry.convert(flag)?),
                "frozen" => out.frozen = Some(entry.convert(flag)?),
                _ => {}
            }
            Ok(())
        })?;
        Ok(out)
    }
}

/// A per-controller count of `cgroup.stat` (`nr_subsys_<ctrl>` or
/// `nr_dying_subsys_<ctrl>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubsysCount<'a> {
    /// Controller name (`cpu`, `memory`, `perf_event`, ...).
    pub controller: &'a str,
    /// The count.
    pub count: u64,
}

/// `cgroup.stat` (flat keyed), spec:
/// <https://docs.kernel.org/admin-guide/cgroup-v2.html#core-interface-files>.
///
/// ```
/// use stepmon_cgroupfs_parse::CgroupStat;
/// let s = CgroupStat::parse(b"nr_descendants 2\nnr_subsys_memory 3\nnr_dying_descendants 1\nnr_dying_subsys_memory 1\n")?;
/// assert_eq!((s.nr_descendants, s.nr_dying_descendants), (Some(2), Some(1)));
/// assert_eq!(s.subsystem("memory"), Some(3));
/// assert_eq!(s.dying_subsystems().map(|c| c.controller).collect::<Vec<_>>(), ["memory"]);
/// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CgroupStat<'a> {
    input: &'a [u8],
    /// Visible descendant cgroups. 4.14.
    pub nr_descendants: Option<u64>,
    /// Removed descendants still pinned by resources (e.g. page cache). 4.14.
    pub nr_dying_descendants: Option<u64>,
}

const LIVE_PREFIX: &str = "nr_subsys_";
const DYING_PREFIX: &str = "nr_dying_subsys_";

impl<'a> CgroupStat<'a> {
    /// Parses and validates `cgroup.stat`.
    pub fn parse(input: &'a [u8]) -> Result<CgroupStat<'a>> {
        let mut out = CgroupStat { input, nr_descendants: None, nr_dying_descendants: None };
        flat::for_each(input, |entry| {
            match entry.key {
                "nr_descendants" => out.nr_descendants = Some(entry.value_u64()?),
                "nr_dying_descendants" => out.nr_dying_descendants = Some(entry.value_u64()?),
                key if key.starts_with(LIVE_PREFIX) || key.starts_with(DYING_PREFIX) => {
                    entry.value_u64()?;
                }
                _ => {}
            }
            Ok(())
        })?;
        Ok(out)
    }

    fn counts(&self, prefix: &'static str) -> impl Iterator<Item = SubsysCount<'a>> + 'a {
        flat::FlatKeyed::new(self.input).filter_map(move |entry: Result<FlatEntry<'a>>| {
            let entry = entry.ok()?;
            let controller = entry.key.strip_prefix(prefix)?;
            Some(SubsysCount { controller, count: entry.value_u64().ok()? })
        })
    }

    /// Live controller states per controller (`nr_subsys_<ctrl>`, 6.12+).
    pub fn subsystems(&self) -> impl Iterator<Item = SubsysCount<'a>> + 'a {
        self.counts(LIVE_PREFIX)
    }

    /// Dying controller states per controller (`nr_dying_subsys_<ctrl>`, 6.12+).
    pub fn dying_subsystems(&self) -> impl Iterator<Item = SubsysCount<'a>> + 'a {
        self.counts(DYING_PREFIX)
    }

    /// `nr_subsys_<controller>`, if printed.
    #[must_use]
    pub fn subsystem(&self, controller: &str) -> Option<u64> {
        self.subsystems().find(|c| c.controller == controller).map(|c| c.count)
    }
}

/// `cgroup.controllers` or `cgroup.subtree_control` (space separated), spec:
/// <https://docs.kernel.org/admin-guide/cgroup-v2.html#core-interface-files>.
/// An empty file is an empty list.
///
/// ```
/// use stepmon_cgroupfs_parse::ControllerList;
/// let c = ControllerList::parse(b"cpu io memory pids\n")?;
/// assert!(c.contains("memory") && !c.contains("hugetlb"));
/// assert_eq!(c.len(), 4);
/// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControllerList<'a> {
    input: &'a [u8],
    len: usize,
}

impl<'a> ControllerList<'a> {
    /// Parses and validates the list.
    pub fn parse(input: &'a [u8]) -> Result<ControllerList<'a>> {
        let mut len = 0usize;
        for item in SpaceList::new(input) {
            item?;
            len = len.saturating_add(1);
        }
        Ok(ControllerList { input, len })
    }

    /// The controller names, in file order.
    pub fn iter(&self) -> impl Iterator<Item = &'a str> + 'a {
        SpaceList::new(self.input).filter_map(Result::ok)
    }

    /// Whether `controller` is listed.
    #[must_use]
    pub fn contains(&self, controller: &str) -> bool {
        self.iter().any(|c| c == controller)
    }

    /// Number of controllers.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// `cgroup.procs` or `cgroup.threads` (newline separated PIDs/TIDs,
/// unordered, possibly repeated), spec:
/// <https://docs.kernel.org/admin-guide/cgroup-v2.html#core-interface-files>.
///
/// ```
/// use stepmon_cgroupfs_parse::PidList;
/// let p = PidList::parse(b"42\n7\n")?;
/// assert_eq!(p.iter().collect::<Vec<_>>(), [42, 7]);
/// assert!(PidList::parse(b"")?.is_empty());
/// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PidList<'a> {
    input: &'a [u8],
    len: usize,
}

impl<'a> PidList<'a> {
    /// Parses and validates the list.
    pub fn parse(input: &'a [u8]) -> Result<PidList<'a>> {
        let mut len = 0usize;
        for line in NewlineList::new(input) {
            let line = line?;
            parse_u32(line.bytes).map_err(|kind| line.error(kind))?;
            len = len.saturating_add(1);
        }
        Ok(PidList { input, len })
    }

    /// The PIDs, in file order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + 'a {
        NewlineList::new(self.input).filter_map(|line| parse_u32(line.ok()?.bytes).ok())
    }

    /// Number of entries (repeats included).
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the cgroup has no member.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// `cgroup.type` (single value), spec:
/// <https://docs.kernel.org/admin-guide/cgroup-v2.html#core-interface-files>.
///
/// ```
/// use stepmon_cgroupfs_parse::CgroupType;
/// assert_eq!(CgroupType::parse(b"domain threaded\n").unwrap(), CgroupType::DomainThreaded);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CgroupType<'a> {
    /// A normal domain cgroup.
    Domain,
    /// The root of a threaded subtree.
    DomainThreaded,
    /// A domain in an invalid state (cannot be populated or enable controllers).
    DomainInvalid,
    /// A threaded cgroup.
    Threaded,
    /// A value unknown to this crate (kept for forward compatibility).
    Other(&'a str),
}

impl<'a> CgroupType<'a> {
    /// Parses `cgroup.type`.
    pub fn parse(input: &'a [u8]) -> Result<CgroupType<'a>> {
        Ok(match parse_text(input)? {
            "domain" => CgroupType::Domain,
            "domain threaded" => CgroupType::DomainThreaded,
            "domain invalid" => CgroupType::DomainInvalid,
            "threaded" => CgroupType::Threaded,
            other => CgroupType::Other(other),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn events_edges() {
        assert_eq!(
            CgroupEvents::parse(b"populated 0\n").unwrap(),
            CgroupEvents { populated: Some(false), frozen: None }
        );
        assert_eq!(CgroupEvents::parse(b"populated 2\n").unwrap_err().kind, ErrorKind::InvalidFlag);
        assert_eq!(CgroupEvents::parse(b"").unwrap(), CgroupEvents::default());
    }

    /// The one-pattern read agrees with the general parser on the kernel's
    /// output cut anywhere and with any byte replaced.
    #[test]
    fn events_fast_path_agrees_with_the_general_path() {
        let kernel = b"populated 1\nfrozen 0\n";
        assert!(CgroupEvents::parse_kernel_layout(kernel).is_some(), "the kernel's layout takes the fast path");
        let check = |input: &[u8]| {
            if let Some(fast) = CgroupEvents::parse_kernel_layout(input) {
                assert_eq!(
                    Ok(fast),
                    CgroupEvents::parse_general(input),
                    "{:?}",
                    std::string::String::from_utf8_lossy(input)
                );
            }
            assert_eq!(CgroupEvents::parse(input), CgroupEvents::parse_general(input));
        };
        crate::testing::for_each_damaged(&mut kernel.to_vec(), b"012 \n\tx", check);
        check(b"populated 0\nfrozen 1\nfuture 1\n");
    }

    #[test]
    fn stat_rejects_bad_subsys_values() {
        assert_eq!(CgroupStat::parse(b"nr_subsys_cpu x\n").unwrap_err().kind, ErrorKind::InvalidNumber);
        let s = CgroupStat::parse(b"nr_descendants 0\nfuture_thing abc\n").unwrap();
        assert_eq!(s.subsystems().count(), 0);
    }

    #[test]
    fn lists_and_type() {
        assert!(ControllerList::parse(b"").unwrap().is_empty());
        assert!(ControllerList::parse(b"cpu\x00\n").is_err());
        assert_eq!(PidList::parse(b"1\nx\n").unwrap_err().line, 2);
        assert_eq!(PidList::parse(b"4294967296\n").unwrap_err().kind, ErrorKind::Overflow);
        assert_eq!(CgroupType::parse(b"weird\n").unwrap(), CgroupType::Other("weird"));
        assert!(CgroupType::parse(b"").is_err());
    }
}
