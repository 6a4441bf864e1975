//! Memory controller v1 files:
//! <https://docs.kernel.org/admin-guide/cgroup-v1/memory.html>.

use crate::error::Result;
use crate::format::flat::{U64, flat_u64_struct};
use crate::format::single::{self, Limit};

flat_u64_struct! {
    /// v1 `memory.stat` (flat keyed), spec: "5.2 stat file" of
    /// <https://docs.kernel.org/admin-guide/cgroup-v1/memory.html#stat-file>.
    ///
    /// Amounts are bytes, `pg*` are event counts. The unprefixed keys are
    /// this cgroup's own ("per-memory cgroup local status"); `total_<counter>`
    /// is "the hierarchical version of `<counter>`, which in addition to the
    /// cgroup's own value includes the sum of all hierarchical children's
    /// values". Of the `total_*` keys only those a step summary uses are
    /// kept. Which keys exist depends on kernel version and config (e.g.
    /// `swap`/`swapcached` need `CONFIG_SWAP` and swap accounting, the
    /// `workingset_*` keys are recent); missing keys are `None`.
    ///
    /// # v2 equivalents
    ///
    /// v2 `memory.stat` is hierarchical
    /// (<https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files>),
    /// so its counterparts are the `total_*` keys. Both versions print the
    /// same kernel counters under other names (`memcg1_stat_names` in
    /// `mm/memcontrol-v1.c`, `memory_stats` in `mm/memcontrol.c`):
    ///
    /// | v2 / BuildKit `memoryStat` | v1 |
    /// |---|---|
    /// | `anon` | `total_rss`: anonymous memory (THP included). **Not** `rss + shmem`: on both versions shmem/tmpfs is page cache, counted in `file`/`cache`, not in `anon`/`rss` (v1 doc: "Only anonymous and swap cache memory is listed as part of 'rss' stat") |
    /// | `file` | `total_cache` (page cache incl. tmpfs/shmem) |
    /// | `shmem` | `total_shmem` |
    /// | `file_mapped` | `total_mapped_file` |
    /// | `file_dirty` | `total_dirty` |
    /// | `file_writeback` | `total_writeback` |
    /// | `anon_thp` | `total_rss_huge` |
    /// | `inactive_file`, `active_file` | `total_inactive_file`, `total_active_file` |
    /// | `pgfault`, `pgmajfault` | `total_pgfault`, `total_pgmajfault` |
    /// | `swapBytes` (`memory.swap.current`) | `total_swap` (bytes of swap used; v2 has no `memory.stat` key for it) |
    /// | `kernel` | no `memory.stat` key; `memory.kmem.usage_in_bytes` |
    /// | `sock` | no `memory.stat` key; `memory.kmem.tcp.usage_in_bytes` covers TCP only |
    /// | `kernel_stack`, `page_tables` (`pagetables`), `vmalloc`, `slab`, `pgscan`, `pgsteal` | none in v1 |
    ///
    /// `pgpgin`/`pgpgout` are v1 only: charging and uncharging events, not
    /// IO.
    ///
    /// ```
    /// use stepmon_cgroupfs_parse::{Limit, v1::MemoryStatV1};
    /// let m = MemoryStatV1::parse(b"cache 8192\nrss 4096\nhierarchical_memory_limit 9223372036854771712\ntotal_rss 4096\n")?;
    /// assert_eq!((m.rss, m.total_rss, m.total_cache), (Some(4096), Some(4096), None));
    /// assert_eq!(m.hierarchical_memory_limit(), Some(Limit::Max));
    /// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
    /// ```
    pub struct MemoryStatV1 {
        /// Page cache, tmpfs/shmem included (bytes).
        cache = "cache" via U64,
        /// Anonymous and swap cache memory, transparent huge pages included,
        /// tmpfs/shmem not (bytes).
        rss = "rss" via U64,
        /// Anonymous transparent huge pages (bytes).
        rss_huge = "rss_huge" via U64,
        /// Swap-backed page cache, tmpfs and shm (bytes); part of `cache`.
        shmem = "shmem" via U64,
        /// Mapped file pages, tmpfs/shmem included (bytes).
        mapped_file = "mapped_file" via U64,
        /// Page cache waiting to be written back (bytes).
        dirty = "dirty" via U64,
        /// Page cache queued for writeback (bytes).
        writeback = "writeback" via U64,
        /// Refaults of evicted anonymous pages. Recent.
        workingset_refault_anon = "workingset_refault_anon" via U64,
        /// Refaults of evicted file pages. Recent.
        workingset_refault_file = "workingset_refault_file" via U64,
        /// Swap used (bytes). With swap accounting only.
        swap = "swap" via U64,
        /// Swap cache in memory (bytes). With swap accounting only.
        swapcached = "swapcached" via U64,
        /// Charging events (a page accounted to the cgroup); not IO.
        pgpgin = "pgpgin" via U64,
        /// Uncharging events; not IO.
        pgpgout = "pgpgout" via U64,
        /// Page faults.
        pgfault = "pgfault" via U64,
        /// Major page faults.
        pgmajfault = "pgmajfault" via U64,
        /// Anonymous and swap cache memory on the inactive LRU (bytes).
        inactive_anon = "inactive_anon" via U64,
        /// Anonymous and swap cache memory on the active LRU (bytes).
        active_anon = "active_anon" via U64,
        /// File-backed and lazily freed anonymous memory on the inactive LRU (bytes).
        inactive_file = "inactive_file" via U64,
        /// File-backed memory on the active LRU (bytes).
        active_file = "active_file" via U64,
        /// Memory that cannot be reclaimed, e.g. mlocked (bytes).
        unevictable = "unevictable" via U64,
        /// The lowest memory limit of this cgroup and its ancestors (bytes);
        /// "unlimited" is a huge number, see
        /// [`hierarchical_memory_limit`](Self::hierarchical_memory_limit()).
        hierarchical_memory_limit = "hierarchical_memory_limit" via U64,
        /// The same for memory+swap (bytes). With swap accounting only.
        hierarchical_memsw_limit = "hierarchical_memsw_limit" via U64,
        /// `cache` of this cgroup and its descendants (v2 `file`).
        total_cache = "total_cache" via U64,
        /// `rss` of this cgroup and its descendants (v2 `anon`).
        total_rss = "total_rss" via U64,
        /// `rss_huge` of this cgroup and its descendants (v2 `anon_thp`).
        total_rss_huge = "total_rss_huge" via U64,
        /// `shmem` of this cgroup and its descendants (v2 `shmem`).
        total_shmem = "total_shmem" via U64,
        /// `mapped_file` of this cgroup and its descendants (v2 `file_mapped`).
        total_mapped_file = "total_mapped_file" via U64,
        /// `dirty` of this cgroup and its descendants (v2 `file_dirty`).
        total_dirty = "total_dirty" via U64,
        /// `writeback` of this cgroup and its descendants (v2 `file_writeback`).
        total_writeback = "total_writeback" via U64,
        /// `swap` of this cgroup and its descendants.
        total_swap = "total_swap" via U64,
        /// `pgfault` of this cgroup and its descendants (v2 `pgfault`).
        total_pgfault = "total_pgfault" via U64,
        /// `pgmajfault` of this cgroup and its descendants (v2 `pgmajfault`).
        total_pgmajfault = "total_pgmajfault" via U64,
        /// `inactive_file` of this cgroup and its descendants (v2 `inactive_file`).
        total_inactive_file = "total_inactive_file" via U64,
        /// `active_file` of this cgroup and its descendants (v2 `active_file`).
        total_active_file = "total_active_file" via U64,
    }
}

impl MemoryStatV1 {
    /// `hierarchical_memory_limit` as a [`Limit`] ([`limit_from_bytes`]).
    #[must_use]
    pub fn hierarchical_memory_limit(&self) -> Option<Limit> {
        self.hierarchical_memory_limit.map(limit_from_bytes)
    }

    /// `hierarchical_memsw_limit` as a [`Limit`] ([`limit_from_bytes`]).
    #[must_use]
    pub fn hierarchical_memsw_limit(&self) -> Option<Limit> {
        self.hierarchical_memsw_limit.map(limit_from_bytes)
    }
}

flat_u64_struct! {
    /// `memory.oom_control` (flat keyed), spec: "10. OOM Control" of
    /// <https://docs.kernel.org/admin-guide/cgroup-v1/memory.html#cgroup-v1-memory-oom-control>.
    ///
    /// `oom_kill_disable` and `under_oom` are flags printed as `0`/`1`
    /// (kept as numbers, see [`OomControl::oom_kill_disabled`] and
    /// [`OomControl::is_under_oom`]); `oom_kill` is a count (4.13 ≈) and the
    /// v1 counterpart of v2 `memory.events` `oom_kill`. v1 has no
    /// counterpart of the other `memory.events` keys; `memory.failcnt` (times
    /// usage hit `memory.limit_in_bytes`) comes closest to `max`.
    ///
    /// ```
    /// use stepmon_cgroupfs_parse::v1::OomControl;
    /// let o = OomControl::parse(b"oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")?;
    /// assert_eq!((o.oom_kill, o.oom_kill_disabled(), o.is_under_oom()), (Some(1), Some(false), Some(false)));
    /// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
    /// ```
    pub struct OomControl {
        /// `1` when the OOM killer is disabled for this cgroup (tasks wait
        /// instead of being killed).
        oom_kill_disable = "oom_kill_disable" via U64,
        /// `1` while the cgroup is out of memory and its tasks wait.
        under_oom = "under_oom" via U64,
        /// Processes of this cgroup killed by the OOM killer. 4.13 (≈).
        oom_kill = "oom_kill" via U64,
    }
}

impl OomControl {
    /// Whether `oom_kill_disable` is set (any non-zero value).
    #[must_use]
    pub fn oom_kill_disabled(&self) -> Option<bool> {
        self.oom_kill_disable.map(|v| v != 0)
    }

    /// Whether `under_oom` is set (any non-zero value).
    #[must_use]
    pub fn is_under_oom(&self) -> Option<bool> {
        self.under_oom.map(|v| v != 0)
    }
}

/// The smallest value a v1 memory limit file reads as when no limit is set.
///
/// v1 limits are page counts; "no limit" is `PAGE_COUNTER_MAX` pages
/// (`LONG_MAX / PAGE_SIZE` on 64-bit kernels, `include/linux/page_counter.h`)
/// and the files print pages × `PAGE_SIZE`: 9223372036854771712 with 4 KiB
/// pages (what an unlimited cgroup prints on x86-64),
/// 9223372036854759424 with 16 KiB and 9223372036854710272 with 64 KiB
/// pages (arm64, ppc64le). A written limit is clamped to `PAGE_COUNTER_MAX`
/// pages, so no finite limit reads larger. This is the value for the largest
/// page size Linux supports (256 KiB), `2^63 − 2^18`: every value from here
/// up is "unlimited" whatever the page size. 32-bit kernels print a smaller value
/// (`LONG_MAX` pages) that is read as a finite limit.
pub const UNLIMITED_BYTES_MIN: u64 = (1 << 63) - (1 << 18);

/// A v1 memory limit in bytes as a [`Limit`]: [`Limit::Max`] from
/// [`UNLIMITED_BYTES_MIN`] up, else the value.
///
/// ```
/// use stepmon_cgroupfs_parse::{Limit, v1::limit_from_bytes};
/// assert_eq!(limit_from_bytes(9_223_372_036_854_771_712), Limit::Max);
/// assert_eq!(limit_from_bytes(33_554_432), Limit::Value(32 << 20));
/// ```
#[must_use]
pub fn limit_from_bytes(bytes: u64) -> Limit {
    if bytes >= UNLIMITED_BYTES_MIN { Limit::Max } else { Limit::Value(bytes) }
}

/// Parses a v1 memory limit file (`memory.limit_in_bytes`,
/// `memory.memsw.limit_in_bytes`, `memory.soft_limit_in_bytes`): one number
/// of bytes ([`single::parse_u64`]), read with [`limit_from_bytes`]. Spec:
/// the control file summary and "2.4 Swap Extension" of
/// <https://docs.kernel.org/admin-guide/cgroup-v1/memory.html>.
///
/// ```
/// use stepmon_cgroupfs_parse::{Limit, v1::limit_in_bytes};
/// assert_eq!(limit_in_bytes(b"9223372036854771712\n")?, Limit::Max);
/// assert_eq!(limit_in_bytes(b"33554432\n")?, Limit::Value(32 << 20));
/// assert!(limit_in_bytes(b"max\n").is_err(), "v1 has no `max` token");
/// # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
/// ```
pub fn limit_in_bytes(input: &[u8]) -> Result<Limit> {
    single::parse_u64(input).map(limit_from_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_valid_and_in_print_order() {
        for keys in [MemoryStatV1::KEYS, OomControl::KEYS] {
            let mut sorted = std::vec::Vec::from(keys);
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), keys.len());
            for key in keys {
                assert_eq!(crate::format::ascii_key(key.as_bytes()), Ok(*key));
            }
        }
        // The kernel's order (6.18 capture) takes the fast path.
        let capture = include_bytes!("../../tests/data/hybrid-6.18-v1/memory/memory.stat");
        assert!(MemoryStatV1::parse_fast(capture).is_some());
    }

    #[test]
    fn fast_path_agrees_with_the_general_parser() {
        let mut input = include_bytes!("../../tests/data/hybrid-6.18-v1/memory-oom/memory.stat").to_vec();
        // Miri interprets every parse: there the first lines and one substitute.
        let substitutes: &[u8] = if cfg!(miri) {
            input.truncate(40);
            b"x"
        } else {
            b"09 \n\t-_x"
        };
        crate::testing::for_each_damaged(&mut input, substitutes, |input| {
            let general = MemoryStatV1::parse_general(input);
            assert_eq!(MemoryStatV1::parse(input), general, "{}", String::from_utf8_lossy(input));
            if let Some(fast) = MemoryStatV1::parse_fast(input) {
                assert_eq!(Ok(fast), general, "{}", String::from_utf8_lossy(input));
            }
        });
    }

    #[test]
    fn unlimited_boundary() {
        assert_eq!(limit_from_bytes(UNLIMITED_BYTES_MIN), Limit::Max);
        assert_eq!(limit_from_bytes(UNLIMITED_BYTES_MIN - 1), Limit::Value(UNLIMITED_BYTES_MIN - 1));
        assert_eq!(limit_from_bytes(u64::MAX), Limit::Max);
        // PAGE_COUNTER_MAX × PAGE_SIZE for every 64-bit page size.
        for shift in [12u32, 14, 16, 18] {
            let page = 1u64 << shift;
            assert_eq!(limit_from_bytes((i64::MAX as u64 / page) * page), Limit::Max, "{page}");
        }
    }
}
