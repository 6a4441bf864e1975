//! `/proc/meminfo`: <https://docs.kernel.org/filesystems/proc.html#meminfo>.

use stepmon_cgroupfs_parse::lines::{Fields, Line, Lines, find_either, split_line};
use stepmon_cgroupfs_parse::number::parse_u64;
use stepmon_cgroupfs_parse::{ErrorKind, ParseError, Result};

use super::ascii_key;
use stepmon_cgroupfs_parse::scan::{line_end, spaced_u64};

/// The unit printed after a `/proc/meminfo` value, spec:
/// <https://docs.kernel.org/filesystems/proc.html#meminfo>.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemUnit {
    /// ` kB`: kibibytes (×1024 bytes, despite the spelling).
    Kb,
    /// No unit: a count (the `HugePages_*` page counts).
    Count,
}

/// One `Key: value [kB]` line of `/proc/meminfo`, borrowed from the input, spec:
/// <https://docs.kernel.org/filesystems/proc.html#meminfo>.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemInfoEntry<'a> {
    /// The key, without the `:` (may hold `(`, `)`, `_`: `Active(anon)`).
    pub key: &'a str,
    /// The number as printed (kB for [`MemUnit::Kb`]).
    pub value: u64,
    /// The unit printed after the number.
    pub unit: MemUnit,
    /// 1-based line number.
    pub line: usize,
}

impl MemInfoEntry<'_> {
    /// The value in kB, `None` for a unit-less count.
    #[must_use]
    pub fn kb(&self) -> Option<u64> {
        (self.unit == MemUnit::Kb).then_some(self.value)
    }

    /// The value in bytes (kB × 1024), `None` for a unit-less count or if it
    /// would not fit a `u64`.
    #[must_use]
    pub fn bytes(&self) -> Option<u64> {
        self.kb()?.checked_mul(1024)
    }
}

/// Iterator over every entry of `/proc/meminfo`, known key or not, spec:
/// <https://docs.kernel.org/filesystems/proc.html#meminfo>. Stops after the
/// first error.
///
/// ```
/// use stepmon_sysusage::parse::{MemInfoEntries, MemUnit};
/// let input = b"MemTotal:       24684092 kB\nGPUActive:          12 kB\nHugePages_Free:        0\n";
/// let gpu = MemInfoEntries::new(input).map(Result::unwrap).find(|e| e.key == "GPUActive").unwrap();
/// assert_eq!((gpu.kb(), gpu.bytes()), (Some(12), Some(12 * 1024)));
/// let huge = MemInfoEntries::new(input).nth(2).unwrap()?;
/// assert_eq!((huge.unit, huge.bytes()), (MemUnit::Count, None));
/// # Ok::<(), stepmon_sysusage::parse::ParseError>(())
/// ```
#[derive(Debug, Clone)]
pub struct MemInfoEntries<'a> {
    lines: Lines<'a>,
}

impl<'a> MemInfoEntries<'a> {
    /// Entries of `input`.
    #[must_use]
    pub fn new(input: &'a [u8]) -> Self {
        MemInfoEntries { lines: Lines::new(input) }
    }
}

fn parse_entry<'a>(line: &Line<'a>) -> Result<MemInfoEntry<'a>> {
    if line.bytes.iter().all(|&b| b == b' ' || b == b'\t') {
        return Err(line.error(ErrorKind::EmptyLine));
    }
    let (key, rest, rest_at) = line.split_once(b':').ok_or_else(|| line.error(ErrorKind::MissingSeparator))?;
    let key = ascii_key(key).map_err(|kind| line.error(kind))?;
    let mut fields = Fields::new(rest);
    let (at, value) = fields.next().ok_or_else(|| line.error_at(ErrorKind::MissingField, rest_at))?;
    let value = parse_u64(value).map_err(|kind| line.error_at(kind, rest_at.saturating_add(at)))?;
    let unit = match fields.next() {
        None => MemUnit::Count,
        Some((_, b"kB")) => MemUnit::Kb,
        Some((at, _)) => return Err(line.error_at(ErrorKind::InvalidField, rest_at.saturating_add(at))),
    };
    if let Some((at, _)) = fields.next() {
        return Err(line.error_at(ErrorKind::TrailingData, rest_at.saturating_add(at)));
    }
    Ok(MemInfoEntry { key, value, unit, line: line.number })
}

/// The fast path (see `fast`): `Key:` + spaces + number + (` kB`) + line end,
/// as `meminfo_proc_show()` prints it: the key (not validated here), value,
/// unit and the input after the line; `None` for anything else.
#[inline(always)]
fn fast_entry(input: &[u8]) -> Option<(&[u8], u64, MemUnit, &[u8])> {
    let colon = find_either(b':', b'\n', input)?;
    let (key, [b':', rest @ ..]) = input.split_at_checked(colon)? else { return None };
    let (value, rest) = spaced_u64(rest)?;
    if let Some(next) = line_end(rest) {
        return Some((key, value, MemUnit::Count, next));
    }
    Some((key, value, MemUnit::Kb, line_end(rest.strip_prefix(b" kB")?)?))
}

impl<'a> Iterator for MemInfoEntries<'a> {
    type Item = Result<MemInfoEntry<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let line = self.lines.next()?;
        let entry = parse_entry(&line);
        if entry.is_err() {
            self.lines.finish();
        }
        Some(entry)
    }
}

impl core::iter::FusedIterator for MemInfoEntries<'_> {}

/// Declares [`MemInfo`]: one `Option<u64>` per known key, with its unit.
macro_rules! meminfo_struct {
    ($( $(#[$doc:meta])* $field:ident = $key:literal $unit:ident, )*) => {
        /// Every key `/proc/meminfo` prints on current kernels, spec:
        /// <https://docs.kernel.org/filesystems/proc.html#meminfo>.
        ///
        /// Values are kept **as printed**: kB for size keys (BuildKit's
        /// `SysMemoryStat` wants kB), counts for `HugePages_*`. Use
        /// [`MemInfo::get_bytes`] or [`MemInfoEntry::bytes`] for bytes. A key
        /// the kernel did not print is `None` (config- and version-dependent
        /// keys: see the field docs); unknown keys are ignored here and can be
        /// read with [`MemInfoEntries`].
        ///
        /// ```
        /// use stepmon_sysusage::parse::MemInfo;
        /// let m = MemInfo::parse(b"MemTotal:       24684092 kB\nActive(anon):       1544 kB\nHugePages_Total:       2\n")?;
        /// assert_eq!((m.mem_total, m.active_anon, m.huge_pages_total), (Some(24_684_092), Some(1544), Some(2)));
        /// assert_eq!(m.mem_available, None); // not printed before 3.14
        /// assert_eq!(m.get("Active(anon)"), Some(1544));
        /// assert_eq!(m.get_bytes("HugePages_Total"), None); // a count, not a size
        /// # Ok::<(), stepmon_sysusage::parse::ParseError>(())
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[non_exhaustive]
        pub struct MemInfo {
            $( $(#[$doc])* pub $field: Option<u64>, )*
        }

        impl MemInfo {
            /// The known keys and their units, in the kernel's print order.
            pub const KEYS: &'static [(&'static str, MemUnit)] = &[$( ($key, MemUnit::$unit) ),*];

            /// The field of each of [`KEYS`](Self::KEYS), same index.
            const FIELDS: &'static [fn(&mut MemInfo) -> &mut Option<u64>] = &[$( |m| &mut m.$field ),*];

            fn slot(&mut self, key: &str) -> Option<(&mut Option<u64>, MemUnit)> {
                match key {
                    $( $key => Some((&mut self.$field, MemUnit::$unit)), )*
                    _ => None,
                }
            }

            /// The value of a known key as printed (kB or count); `None` if
            /// the key is unknown or was not printed.
            #[must_use]
            pub fn get(&self, key: &str) -> Option<u64> {
                match key {
                    $( $key => self.$field, )*
                    _ => None,
                }
            }

            /// Every known key with its unit and value, in print order.
            pub fn iter(&self) -> impl Iterator<Item = (&'static str, MemUnit, Option<u64>)> + '_ {
                [$( ($key, MemUnit::$unit, self.$field) ),*].into_iter()
            }
        }
    };
}

meminfo_struct! {
    /// `MemTotal` (kB): usable RAM.
    mem_total = "MemTotal" Kb,
    /// `MemFree` (kB).
    mem_free = "MemFree" Kb,
    /// `MemAvailable` (kB): estimate of memory available without swapping. 3.14.
    mem_available = "MemAvailable" Kb,
    /// `Buffers` (kB).
    buffers = "Buffers" Kb,
    /// `Cached` (kB): page cache, without `SwapCached`.
    cached = "Cached" Kb,
    /// `SwapCached` (kB).
    swap_cached = "SwapCached" Kb,
    /// `Active` (kB).
    active = "Active" Kb,
    /// `Inactive` (kB).
    inactive = "Inactive" Kb,
    /// `Active(anon)` (kB). 2.6.28.
    active_anon = "Active(anon)" Kb,
    /// `Inactive(anon)` (kB). 2.6.28.
    inactive_anon = "Inactive(anon)" Kb,
    /// `Active(file)` (kB). 2.6.28.
    active_file = "Active(file)" Kb,
    /// `Inactive(file)` (kB). 2.6.28.
    inactive_file = "Inactive(file)" Kb,
    /// `Unevictable` (kB). 2.6.28.
    unevictable = "Unevictable" Kb,
    /// `Mlocked` (kB). 2.6.28.
    mlocked = "Mlocked" Kb,
    /// `HighTotal` (kB). `CONFIG_HIGHMEM` only.
    high_total = "HighTotal" Kb,
    /// `HighFree` (kB). `CONFIG_HIGHMEM` only.
    high_free = "HighFree" Kb,
    /// `LowTotal` (kB). `CONFIG_HIGHMEM` only.
    low_total = "LowTotal" Kb,
    /// `LowFree` (kB). `CONFIG_HIGHMEM` only.
    low_free = "LowFree" Kb,
    /// `MmapCopy` (kB). No-MMU kernels only.
    mmap_copy = "MmapCopy" Kb,
    /// `SwapTotal` (kB).
    swap_total = "SwapTotal" Kb,
    /// `SwapFree` (kB).
    swap_free = "SwapFree" Kb,
    /// `Zswap` (kB): compressed size in zswap. `CONFIG_ZSWAP`.
    zswap = "Zswap" Kb,
    /// `Zswapped` (kB): uncompressed size of pages in zswap. `CONFIG_ZSWAP`.
    zswapped = "Zswapped" Kb,
    /// `Dirty` (kB).
    dirty = "Dirty" Kb,
    /// `Writeback` (kB).
    writeback = "Writeback" Kb,
    /// `AnonPages` (kB).
    anon_pages = "AnonPages" Kb,
    /// `Mapped` (kB).
    mapped = "Mapped" Kb,
    /// `Shmem` (kB).
    shmem = "Shmem" Kb,
    /// `KReclaimable` (kB). 4.20.
    k_reclaimable = "KReclaimable" Kb,
    /// `Slab` (kB).
    slab = "Slab" Kb,
    /// `SReclaimable` (kB).
    s_reclaimable = "SReclaimable" Kb,
    /// `SUnreclaim` (kB).
    s_unreclaim = "SUnreclaim" Kb,
    /// `KernelStack` (kB).
    kernel_stack = "KernelStack" Kb,
    /// `ShadowCallStack` (kB). `CONFIG_SHADOW_CALL_STACK`.
    shadow_call_stack = "ShadowCallStack" Kb,
    /// `PageTables` (kB).
    page_tables = "PageTables" Kb,
    /// `SecPageTables` (kB). ≈6.0.
    sec_page_tables = "SecPageTables" Kb,
    /// `Quicklists` (kB). Old kernels with quicklists (removed in 5.5).
    quicklists = "Quicklists" Kb,
    /// `NFS_Unstable` (kB). Always 0 on current kernels.
    nfs_unstable = "NFS_Unstable" Kb,
    /// `Bounce` (kB).
    bounce = "Bounce" Kb,
    /// `WritebackTmp` (kB).
    writeback_tmp = "WritebackTmp" Kb,
    /// `CommitLimit` (kB).
    commit_limit = "CommitLimit" Kb,
    /// `Committed_AS` (kB).
    committed_as = "Committed_AS" Kb,
    /// `VmallocTotal` (kB): 34359738367 on x86-64, so always `u64`.
    vmalloc_total = "VmallocTotal" Kb,
    /// `VmallocUsed` (kB).
    vmalloc_used = "VmallocUsed" Kb,
    /// `VmallocChunk` (kB). Always 0 on current kernels.
    vmalloc_chunk = "VmallocChunk" Kb,
    /// `Percpu` (kB).
    percpu = "Percpu" Kb,
    /// `EarlyMemtestBad` (kB). Only if the early memtest ran.
    early_memtest_bad = "EarlyMemtestBad" Kb,
    /// `HardwareCorrupted` (kB). `CONFIG_MEMORY_FAILURE`; printed with fewer pad columns.
    hardware_corrupted = "HardwareCorrupted" Kb,
    /// `AnonHugePages` (kB). THP.
    anon_huge_pages = "AnonHugePages" Kb,
    /// `ShmemHugePages` (kB). THP.
    shmem_huge_pages = "ShmemHugePages" Kb,
    /// `ShmemPmdMapped` (kB). THP.
    shmem_pmd_mapped = "ShmemPmdMapped" Kb,
    /// `FileHugePages` (kB). THP.
    file_huge_pages = "FileHugePages" Kb,
    /// `FilePmdMapped` (kB). THP.
    file_pmd_mapped = "FilePmdMapped" Kb,
    /// `CmaTotal` (kB). `CONFIG_CMA`.
    cma_total = "CmaTotal" Kb,
    /// `CmaFree` (kB). `CONFIG_CMA`.
    cma_free = "CmaFree" Kb,
    /// `Unaccepted` (kB). `CONFIG_UNACCEPTED_MEMORY`.
    unaccepted = "Unaccepted" Kb,
    /// `Balloon` (kB). 6.15.
    balloon = "Balloon" Kb,
    /// `HugePages_Total` (count of huge pages, no unit). `CONFIG_HUGETLB_PAGE`.
    huge_pages_total = "HugePages_Total" Count,
    /// `HugePages_Free` (count). `CONFIG_HUGETLB_PAGE`.
    huge_pages_free = "HugePages_Free" Count,
    /// `HugePages_Rsvd` (count). `CONFIG_HUGETLB_PAGE`.
    huge_pages_rsvd = "HugePages_Rsvd" Count,
    /// `HugePages_Surp` (count). `CONFIG_HUGETLB_PAGE`.
    huge_pages_surp = "HugePages_Surp" Count,
    /// `Hugepagesize` (kB). `CONFIG_HUGETLB_PAGE`.
    hugepagesize = "Hugepagesize" Kb,
    /// `Hugetlb` (kB). `CONFIG_HUGETLB_PAGE`.
    hugetlb = "Hugetlb" Kb,
    /// `DirectMap4k` (kB). x86.
    direct_map_4k = "DirectMap4k" Kb,
    /// `DirectMap2M` (kB). x86-64.
    direct_map_2m = "DirectMap2M" Kb,
    /// `DirectMap4M` (kB). 32-bit x86 without PAE.
    direct_map_4m = "DirectMap4M" Kb,
    /// `DirectMap1G` (kB). x86-64 with gbpages.
    direct_map_1g = "DirectMap1G" Kb,
}

impl MemInfo {
    /// Parses the whole file. An empty input is [`ErrorKind::Empty`]; a known
    /// key printed with the wrong unit is [`ErrorKind::InvalidField`], and a
    /// size key without ` kB` (a read cut short) [`ErrorKind::MissingField`].
    /// Unknown keys are validated as lines but otherwise ignored; the last of
    /// duplicate keys wins. Never allocates.
    pub fn parse(input: &[u8]) -> Result<Self> {
        if input.is_empty() {
            return Err(ParseError::new(ErrorKind::Empty, 1, 0));
        }
        let mut out = MemInfo::default();
        let (mut rest, mut number) = (input, 0usize);
        // Index in `KEYS` of the key expected next: the kernel prints them in
        // that order, so a key is mostly found with one comparison.
        let mut expected = 0usize;
        while !rest.is_empty() {
            number = number.saturating_add(1);
            if let Some((key, value, unit, next)) = fast_entry(rest) {
                let known = match Self::KEYS.get(expected) {
                    Some((k, _)) if k.as_bytes() == key => Some(expected),
                    _ => Self::KEYS.iter().position(|(k, _)| k.as_bytes() == key),
                };
                let done = match known {
                    Some(index) => match (Self::KEYS.get(index), Self::FIELDS.get(index)) {
                        (Some((_, want)), Some(field)) if *want == unit => {
                            *field(&mut out) = Some(value);
                            expected = index.saturating_add(1);
                            true
                        }
                        // The wrong unit: the general path locates the error.
                        _ => false,
                    },
                    None => ascii_key(key).is_ok(),
                };
                if done {
                    rest = next;
                    continue;
                }
            }
            let start = input.len().saturating_sub(rest.len());
            let (bytes, next) = split_line(rest);
            out.parse_line(&Line { bytes, number, start })?;
            rest = next;
        }
        Ok(out)
    }

    /// The general path: one line of any shape; decides every value and error.
    #[inline(never)]
    fn parse_line(&mut self, line: &Line<'_>) -> Result<()> {
        let entry = parse_entry(line)?;
        if let Some((slot, unit)) = self.slot(entry.key) {
            if unit != entry.unit {
                // Located where the unit is (or should be): the end of the line.
                let kind = if unit == MemUnit::Kb { ErrorKind::MissingField } else { ErrorKind::InvalidField };
                return Err(line.error_at(kind, line.bytes.len()));
            }
            *slot = Some(entry.value);
        }
        Ok(())
    }

    /// The unit of a known key, `None` for unknown keys.
    #[must_use]
    pub fn unit_of(key: &str) -> Option<MemUnit> {
        Self::KEYS.iter().find(|(k, _)| *k == key).map(|(_, unit)| *unit)
    }

    /// The value of a known size key in bytes (kB × 1024); `None` for counts,
    /// unknown or absent keys, or a value that would not fit a `u64`.
    #[must_use]
    pub fn get_bytes(&self, key: &str) -> Option<u64> {
        match Self::unit_of(key)? {
            MemUnit::Kb => self.get(key)?.checked_mul(1024),
            MemUnit::Count => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_units_and_lookup() {
        let m = MemInfo::parse(
            b"MemTotal:       24684092 kB\nVmallocTotal:   34359738367 kB\nHugePages_Surp:        3\nHardwareCorrupted:     5 kB\nFuture:  7 kB\n",
        )
        .unwrap();
        assert_eq!(m.mem_total, Some(24_684_092));
        assert_eq!(m.get_bytes("VmallocTotal"), Some(34_359_738_367 * 1024));
        assert_eq!((m.huge_pages_surp, m.get_bytes("HugePages_Surp")), (Some(3), None));
        assert_eq!(m.hardware_corrupted, Some(5));
        assert_eq!((m.get("Future"), m.get("MemFree")), (None, None));
        assert_eq!(MemInfo::unit_of("Hugepagesize"), Some(MemUnit::Kb));
        assert_eq!(MemInfo::KEYS.len(), m.iter().count());
        assert_eq!(MemInfo::KEYS.first(), Some(&("MemTotal", MemUnit::Kb)));
    }

    #[test]
    fn errors_are_located() {
        let err = |i: &[u8]| {
            let e = MemInfo::parse(i).unwrap_err();
            (e.kind, e.line, e.offset)
        };
        assert_eq!(err(b""), (ErrorKind::Empty, 1, 0));
        assert_eq!(err(b"MemTotal:       24684"), (ErrorKind::MissingField, 1, 21));
        assert_eq!(err(b"MemFree: 1 kB\nMemTo"), (ErrorKind::MissingSeparator, 2, 14));
        assert_eq!(err(b"MemFree: 1 kB\nMemTotal:"), (ErrorKind::MissingField, 2, 23));
        assert_eq!(err(b"HugePages_Total: 1 kB\n"), (ErrorKind::InvalidField, 1, 21));
        assert_eq!(err(b"MemFree: 1 MB\n"), (ErrorKind::InvalidField, 1, 11));
        assert_eq!(err(b"MemFree: 1 kB x\n"), (ErrorKind::TrailingData, 1, 14));
        assert_eq!(err(b"MemFree: -1 kB\n"), (ErrorKind::InvalidNumber, 1, 9));
        assert_eq!(err(b"MemFree: 1 kB\n\n"), (ErrorKind::EmptyLine, 2, 14));
        assert_eq!(err(b"Mem\x01: 1 kB\n"), (ErrorKind::InvalidKey, 1, 0));
        assert_eq!(err(b": 1 kB\n"), (ErrorKind::InvalidKey, 1, 0));
    }

    #[test]
    fn fast_path_agrees_with_the_general_path() {
        let base: &[u8] = b"MemTotal:       24684092 kB\nFuture:  7 kB\nHugePages_Total:       0\nDirectMap2M:    9 kB\nCached: 1 kB\nHugePages_Free: 1 kB\nZ: 18446744073709551615 kB\n";
        let general = |input: &[u8]| -> Result<MemInfo> {
            if input.is_empty() {
                return Err(ParseError::new(ErrorKind::Empty, 1, 0));
            }
            let mut out = MemInfo::default();
            for line in Lines::new(input) {
                out.parse_line(&line)?;
            }
            Ok(out)
        };
        let check = |input: &[u8]| assert_eq!(MemInfo::parse(input), general(input), "{input:?}");
        stepmon_cgroupfs_parse::testing::for_each_damaged(&mut base.to_vec(), b" \t\n09x:\r(\0", check);
    }

    #[test]
    fn last_duplicate_wins() {
        assert_eq!(MemInfo::parse(b"MemFree: 1 kB\nMemFree: 2 kB\n").unwrap().mem_free, Some(2));
    }
}
