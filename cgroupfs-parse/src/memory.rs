//! Memory controller files: <https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files>.
//! Single-value files (`memory.current`, `memory.peak`, `memory.max`, ...)
//! use [`crate::single::parse_u64`] and [`crate::Limit`].

use crate::format::flat::{U64, flat_u64_struct};

flat_u64_struct! {
    /// `memory.stat` (flat keyed), spec:
    /// <https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files>.
    ///
    /// Every key the spec lists; amounts are bytes, the `pg*`, `workingset_*`,
    /// `thp_*`, `numa_*`, `zswp*`, `swp*` and `pswp*` keys are event counts.
    /// Which keys exist depends on kernel version and config (see the README).
    ///
    /// ```
    /// let m = stepmon_cgroupfs_parse::MemoryStat::parse(b"anon 4096\nfile 8192\npgfault 12\n").unwrap();
    /// assert_eq!((m.anon, m.file, m.pgfault, m.shmem), (Some(4096), Some(8192), Some(12), None));
    /// ```
    pub struct MemoryStat {
        /// Anonymous memory (bytes).
        anon = "anon" via U64,
        /// Page cache (bytes).
        file = "file" via U64,
        /// Total kernel memory (bytes). 5.18 (≈).
        kernel = "kernel" via U64,
        /// Kernel stacks (bytes).
        kernel_stack = "kernel_stack" via U64,
        /// Page tables (bytes).
        pagetables = "pagetables" via U64,
        /// Secondary page tables, e.g. KVM (bytes). 6.0 (≈).
        sec_pagetables = "sec_pagetables" via U64,
        /// Per-CPU kernel allocations (bytes).
        percpu = "percpu" via U64,
        /// Network transmission buffers (bytes).
        sock = "sock" via U64,
        /// vmalloc-backed memory (bytes).
        vmalloc = "vmalloc" via U64,
        /// Swap-backed shared memory incl. tmpfs (bytes).
        shmem = "shmem" via U64,
        /// zswap compression backend memory (bytes). `CONFIG_ZSWAP`.
        zswap = "zswap" via U64,
        /// Memory swapped out to zswap (bytes). `CONFIG_ZSWAP`.
        zswapped = "zswapped" via U64,
        /// Incompressible pages stored in zswap (bytes). Recent, `CONFIG_ZSWAP`.
        zswap_incomp = "zswap_incomp" via U64,
        /// Mapped page cache (bytes).
        file_mapped = "file_mapped" via U64,
        /// Dirty page cache (bytes).
        file_dirty = "file_dirty" via U64,
        /// Page cache under writeback (bytes).
        file_writeback = "file_writeback" via U64,
        /// Swap cache (bytes). `CONFIG_SWAP`.
        swapcached = "swapcached" via U64,
        /// Anonymous transparent huge pages (bytes). THP.
        anon_thp = "anon_thp" via U64,
        /// File transparent huge pages (bytes). THP.
        file_thp = "file_thp" via U64,
        /// Shmem transparent huge pages (bytes). THP.
        shmem_thp = "shmem_thp" via U64,
        /// Inactive anonymous LRU (bytes).
        inactive_anon = "inactive_anon" via U64,
        /// Active anonymous LRU (bytes).
        active_anon = "active_anon" via U64,
        /// Inactive file LRU (bytes).
        inactive_file = "inactive_file" via U64,
        /// Active file LRU (bytes).
        active_file = "active_file" via U64,
        /// Unevictable memory (bytes).
        unevictable = "unevictable" via U64,
        /// Reclaimable slab (bytes).
        slab_reclaimable = "slab_reclaimable" via U64,
        /// Unreclaimable slab (bytes).
        slab_unreclaimable = "slab_unreclaimable" via U64,
        /// Total slab, the sum of the two above (bytes).
        slab = "slab" via U64,
        /// HugeTLB pages (bytes); only with the `memory_hugetlb_accounting` mount option. 6.6.
        hugetlb = "hugetlb" via U64,
        /// Refaults of evicted anonymous pages.
        workingset_refault_anon = "workingset_refault_anon" via U64,
        /// Refaults of evicted file pages.
        workingset_refault_file = "workingset_refault_file" via U64,
        /// Refaulted anonymous pages activated immediately.
        workingset_activate_anon = "workingset_activate_anon" via U64,
        /// Refaulted file pages activated immediately.
        workingset_activate_file = "workingset_activate_file" via U64,
        /// Restored anonymous pages that were active before reclaim.
        workingset_restore_anon = "workingset_restore_anon" via U64,
        /// Restored file pages that were active before reclaim.
        workingset_restore_file = "workingset_restore_file" via U64,
        /// Shadow nodes reclaimed.
        workingset_nodereclaim = "workingset_nodereclaim" via U64,
        /// Pages demoted by kswapd.
        pgdemote_kswapd = "pgdemote_kswapd" via U64,
        /// Pages demoted by direct reclaim.
        pgdemote_direct = "pgdemote_direct" via U64,
        /// Pages demoted by khugepaged.
        pgdemote_khugepaged = "pgdemote_khugepaged" via U64,
        /// Pages demoted by proactive reclaim. Recent.
        pgdemote_proactive = "pgdemote_proactive" via U64,
        /// Pages promoted by NUMA balancing. `CONFIG_NUMA_BALANCING`.
        pgpromote_success = "pgpromote_success" via U64,
        /// Pages scanned, total.
        pgscan = "pgscan" via U64,
        /// Pages reclaimed, total.
        pgsteal = "pgsteal" via U64,
        /// Pages swapped in.
        pswpin = "pswpin" via U64,
        /// Pages swapped out.
        pswpout = "pswpout" via U64,
        /// Pages scanned by kswapd.
        pgscan_kswapd = "pgscan_kswapd" via U64,
        /// Pages scanned directly.
        pgscan_direct = "pgscan_direct" via U64,
        /// Pages scanned by khugepaged.
        pgscan_khugepaged = "pgscan_khugepaged" via U64,
        /// Pages scanned proactively. Recent.
        pgscan_proactive = "pgscan_proactive" via U64,
        /// Pages reclaimed by kswapd.
        pgsteal_kswapd = "pgsteal_kswapd" via U64,
        /// Pages reclaimed directly.
        pgsteal_direct = "pgsteal_direct" via U64,
        /// Pages reclaimed by khugepaged.
        pgsteal_khugepaged = "pgsteal_khugepaged" via U64,
        /// Pages reclaimed proactively (`memory.reclaim`). Recent.
        pgsteal_proactive = "pgsteal_proactive" via U64,
        /// Page faults.
        pgfault = "pgfault" via U64,
        /// Major page faults.
        pgmajfault = "pgmajfault" via U64,
        /// Pages scanned on the active LRU.
        pgrefill = "pgrefill" via U64,
        /// Pages moved to the active LRU.
        pgactivate = "pgactivate" via U64,
        /// Pages moved to the inactive LRU.
        pgdeactivate = "pgdeactivate" via U64,
        /// Pages postponed to be freed under pressure.
        pglazyfree = "pglazyfree" via U64,
        /// Reclaimed lazyfree pages.
        pglazyfreed = "pglazyfreed" via U64,
        /// Zero-filled pages swapped in without IO. Recent, `CONFIG_SWAP`.
        swpin_zero = "swpin_zero" via U64,
        /// Zero-filled pages swapped out without IO. Recent, `CONFIG_SWAP`.
        swpout_zero = "swpout_zero" via U64,
        /// Pages moved into memory from zswap. `CONFIG_ZSWAP`.
        zswpin = "zswpin" via U64,
        /// Pages moved out of memory to zswap. `CONFIG_ZSWAP`.
        zswpout = "zswpout" via U64,
        /// Pages written back from zswap to swap. `CONFIG_ZSWAP`.
        zswpwb = "zswpwb" via U64,
        /// THPs allocated on fault.
        thp_fault_alloc = "thp_fault_alloc" via U64,
        /// THPs allocated by collapsing.
        thp_collapse_alloc = "thp_collapse_alloc" via U64,
        /// THPs swapped out whole.
        thp_swpout = "thp_swpout" via U64,
        /// THPs split before swap-out.
        thp_swpout_fallback = "thp_swpout_fallback" via U64,
        /// Pages migrated by NUMA balancing.
        numa_pages_migrated = "numa_pages_migrated" via U64,
        /// PTEs updated by NUMA balancing.
        numa_pte_updates = "numa_pte_updates" via U64,
        /// NUMA hinting faults.
        numa_hint_faults = "numa_hint_faults" via U64,
    }
}

flat_u64_struct! {
    /// `memory.events` and `memory.events.local` (flat keyed), spec:
    /// <https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files>.
    ///
    /// ```
    /// let e = stepmon_cgroupfs_parse::MemoryEvents::parse(b"low 0\nhigh 3\nmax 1\noom 1\noom_kill 1\noom_group_kill 0\n").unwrap();
    /// assert_eq!((e.oom_kill, e.sock_throttled), (Some(1), None));
    /// ```
    pub struct MemoryEvents {
        /// Reclaims of a cgroup below its `memory.low` protection.
        low = "low" via U64,
        /// Throttling by `memory.high`.
        high = "high" via U64,
        /// Hits of `memory.max`.
        max = "max" via U64,
        /// OOM situations (allocation failed at the limit).
        oom = "oom" via U64,
        /// Processes killed by the OOM killer. 4.13 (≈).
        oom_kill = "oom_kill" via U64,
        /// Group OOM kills (`memory.oom.group`). 5.17.
        oom_group_kill = "oom_group_kill" via U64,
        /// Socket memory throttling events. Recent (≈6.17–6.18).
        sock_throttled = "sock_throttled" via U64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_key_is_known_once() {
        let mut keys = std::vec::Vec::from(MemoryStat::KEYS);
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), MemoryStat::KEYS.len());
        assert_eq!(MemoryStat::KEYS.len(), 72);
    }

    /// `parse_into` overwrites what an earlier file left, and leaves the
    /// default on error, on the fast and on the general path.
    #[test]
    fn parse_into_overwrites_and_resets_on_error() {
        let mut m = MemoryStat::default();
        m.parse_into(b"anon 1\nfile 2\nshmem 3\n").unwrap();
        assert_eq!((m.anon, m.file, m.shmem), (Some(1), Some(2), Some(3)));
        m.parse_into(b"file 5\n").unwrap();
        assert_eq!((m.anon, m.file, m.shmem), (None, Some(5), None));
        m.parse_into(b"anon\t7\n").unwrap_err();
        assert_eq!(m, MemoryStat::default());
        m.parse_into(b"anon 1\nfile x\n").unwrap_err();
        assert_eq!(m, MemoryStat::default());
        m.parse_into(b"anon  8\n").unwrap_err();
        assert_eq!(m, MemoryStat::default());
        let input = b"anon 9\nfuture key\nfile 10\n";
        m.parse_into(input).unwrap();
        assert_eq!(m, MemoryStat::parse(input).unwrap());
    }

    #[test]
    fn memory_events_full() {
        let e = MemoryEvents::parse(b"low 1\nhigh 2\nmax 3\noom 4\noom_kill 5\noom_group_kill 6\nsock_throttled 7\n")
            .unwrap();
        assert_eq!(e.iter().map(|(_, v)| v.unwrap()).collect::<std::vec::Vec<_>>(), [1, 2, 3, 4, 5, 6, 7]);
    }
}
