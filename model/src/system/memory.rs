//! `SysMemoryStat` (BuildKit: `executor/resources/types/systypes.go`).

use serde::{Deserialize, Serialize};

/// BuildKit's `SysMemoryStat`: eleven `/proc/meminfo` keys in **kB** (not
/// bytes, unlike the cgroup memory fields), each serialized as `null` when
/// the kernel did not print it (Go `*uint64` without omitempty). Spec of the
/// source: <https://docs.kernel.org/filesystems/proc.html#meminfo>.
///
/// `swap` is `SwapTotal`, not swap in use; `SwapFree` is not part of
/// BuildKit's model (our [`SysSampleExt::swap_free`](super::SysSampleExt::swap_free) has it).
///
/// `stepmon-sysusage` fills it from a parsed `/proc/meminfo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
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
