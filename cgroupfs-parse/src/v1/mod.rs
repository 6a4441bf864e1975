//! Parsers for cgroup v1 interface files, for hosts where the controllers
//! stepmon reads are bound to v1 hierarchies (hybrid and v1-only layouts):
//! <https://docs.kernel.org/admin-guide/cgroup-v1/index.html>.
//!
//! Same rules as the v2 parsers: `&[u8]` in, `Copy` structs of `Option<u64>`
//! or views borrowing the input out, no allocation, keys by name (unknown
//! keys ignored, the last of duplicate keys wins), a located
//! [`ParseError`](crate::ParseError) on malformed input.
//!
//! | file | parser |
//! |---|---|
//! | `memory.stat` | [`MemoryStatV1`] |
//! | `memory.oom_control` | [`OomControl`] |
//! | `memory.usage_in_bytes`, `.max_usage_in_bytes`, `.failcnt`, `.memsw.usage_in_bytes`, `.memsw.max_usage_in_bytes`, `.memsw.failcnt`, `.kmem.usage_in_bytes` | [`single::parse_u64`](crate::single::parse_u64) |
//! | `memory.limit_in_bytes`, `.memsw.limit_in_bytes`, `.soft_limit_in_bytes` | [`limit_in_bytes`] |
//! | `cpuacct.stat` | [`CpuacctStat`] |
//! | `cpuacct.usage`, `.usage_user`, `.usage_sys` (ns) | [`single::parse_u64`](crate::single::parse_u64) |
//! | `cpu.stat`, `cpu.stat.local` | [`CpuStatV1`], [`CpuStatLocalV1`] |
//! | `cpu.cfs_quota_us` | [`cfs_quota_us`] |
//! | `cpu.cfs_period_us`, `cpu.cfs_burst_us` (µs) | [`single::parse_u64`](crate::single::parse_u64) |
//! | `blkio.throttle.io_service_bytes[_recursive]`, `blkio.throttle.io_serviced[_recursive]` (and the `blkio.bfq.*`/CFQ files of the same layout) | [`BlkioStat`] |
//! | `pids.current`, `pids.peak` | [`single::parse_u64`](crate::single::parse_u64) |
//! | `pids.max` | [`Limit`](crate::Limit) (`max` or a number, as in v2) |
//! | `pids.events` | [`PidsEvents`](crate::PidsEvents) (v1 prints the same `max N` line) |
//!
//! The pids files of v1 have the v2 format
//! (<https://docs.kernel.org/admin-guide/cgroup-v1/pids.html>): `pids.max`
//! holds `max` or a number, `pids.events` the line `max N` (on v1 always
//! the cgroup's own events: forks that failed at this cgroup's limit).
//!
//! ```
//! use stepmon_cgroupfs_parse::v1::{MemoryStatV1, limit_in_bytes};
//! use stepmon_cgroupfs_parse::Limit;
//! let stat = MemoryStatV1::parse(b"cache 8192\nrss 4096\ntotal_cache 8192\ntotal_rss 4096\n")?;
//! assert_eq!((stat.total_rss, stat.total_shmem), (Some(4096), None));
//! assert_eq!(limit_in_bytes(b"9223372036854771712\n")?, Limit::Max);
//! # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
//! ```

mod blkio;
mod cpu;
mod memory;

pub use blkio::{BlkioDeviceStat, BlkioDevices, BlkioStat, BlkioTotals};
pub use cpu::{CpuStatLocalV1, CpuStatV1, CpuacctStat, cfs_quota_us};
pub use memory::{MemoryStatV1, OomControl, UNLIMITED_BYTES_MIN, limit_from_bytes, limit_in_bytes};
