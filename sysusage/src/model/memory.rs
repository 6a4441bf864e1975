//! `SysMemoryStat` (BuildKit: `executor/resources/types/systypes.go`).

use serde::{Deserialize, Serialize};

use crate::parse::MemInfo;

/// BuildKit's `SysMemoryStat`: eleven `/proc/meminfo` keys in **kB** (not
/// bytes, unlike the cgroup memory fields), each serialized as `null` when
/// the kernel did not print it (Go `*uint64` without omitempty). Spec of the
/// source: <https://docs.kernel.org/filesystems/proc.html#meminfo>.
///
/// `swap` is `SwapTotal`, not swap in use; `SwapFree` is not part of
/// BuildKit's model (our [`SysSampleExt::swap_free`](super::SysSampleExt::swap_free) has it).
///
/// ```
/// use stepmon_sysusage::{model::SysMemoryStat, parse::MemInfo};
/// let m = MemInfo::parse(b"MemTotal: 100 kB\nSwapTotal: 0 kB\n")?;
/// let json = serde_json::to_string(&SysMemoryStat::from_meminfo(&m)).unwrap();
/// assert_eq!(json, r#"{"total":100,"free":null,"available":null,"buffers":null,"cached":null,"active":null,"inactive":null,"swap":0,"dirty":null,"writeback":null,"slab":null}"#);
/// # Ok::<(), stepmon_sysusage::parse::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SysMemoryStat {
    /// `MemTotal`, kB.
    pub total: Option<u64>,
    /// `MemFree`, kB.
    pub free: Option<u64>,
    /// `MemAvailable`, kB (3.14+).
    pub available: Option<u64>,
    /// `Buffers`, kB.
    pub buffers: Option<u64>,
    /// `Cached`, kB.
    pub cached: Option<u64>,
    /// `Active`, kB.
    pub active: Option<u64>,
    /// `Inactive`, kB.
    pub inactive: Option<u64>,
    /// `SwapTotal`, kB.
    pub swap: Option<u64>,
    /// `Dirty`, kB.
    pub dirty: Option<u64>,
    /// `Writeback`, kB.
    pub writeback: Option<u64>,
    /// `Slab`, kB.
    pub slab: Option<u64>,
}

impl SysMemoryStat {
    /// The BuildKit fields of a parsed `/proc/meminfo`.
    #[must_use]
    pub fn from_meminfo(m: &MemInfo) -> Self {
        SysMemoryStat {
            total: m.mem_total,
            free: m.mem_free,
            available: m.mem_available,
            buffers: m.buffers,
            cached: m.cached,
            active: m.active,
            inactive: m.inactive,
            swap: m.swap_total,
            dirty: m.dirty,
            writeback: m.writeback,
            slab: m.slab,
        }
    }
}
