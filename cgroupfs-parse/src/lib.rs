//! Zero-copy parsers for Linux cgroup v2 interface files and the `/proc`
//! files used to find cgroups, following
//! <https://docs.kernel.org/admin-guide/cgroup-v2.html>.
//!
//! * Input is `&[u8]` (what `read`/`pread` filled); output is a `Copy`
//!   struct of `Option<u64>` or a view borrowing the input. No I/O, no
//!   allocation, no `unsafe`, `no_std`.
//! * Keys are looked up by name: unknown keys are ignored, missing keys are
//!   `None`. Malformed input is a [`ParseError`] carrying line and byte
//!   offset; no input makes a parser panic (each entry point is fuzzed).
//!
//! ```
//! use stepmon_cgroupfs_parse::CpuStat;
//! let stat = CpuStat::parse(b"usage_usec 21958700\nuser_usec 9918915\nsystem_usec 12039785\n")?;
//! assert_eq!(stat.usage_usec, Some(21_958_700));
//! assert_eq!(stat.nr_throttled, None); // cpu controller not enabled here
//! # Ok::<(), stepmon_cgroupfs_parse::ParseError>(())
//! ```
//!
//! | file | parser |
//! |---|---|
//! | `cpu.stat`, `cpu.stat.local`, `cpu.max` | [`CpuStat`], [`CpuStatLocal`], [`CpuMax`] |
//! | `memory.stat` | [`MemoryStat`] |
//! | `memory.events`, `memory.events.local` | [`MemoryEvents`] |
//! | `memory.current`, `.peak`, `.swap.current`, `.swap.peak`, `pids.current`, `pids.peak` | [`single::parse_u64`] |
//! | `memory.min`, `.low`, `.high`, `.max`, `.swap.max`, `pids.max` | [`Limit`] |
//! | `io.stat` | [`IoStat`] |
//! | `pids.events`, `pids.events.local` | [`PidsEvents`] |
//! | `cgroup.events` | [`CgroupEvents`] |
//! | `cgroup.stat` | [`CgroupStat`] |
//! | `cgroup.controllers`, `cgroup.subtree_control` | [`ControllerList`] |
//! | `cgroup.procs`, `cgroup.threads` | [`PidList`] |
//! | `cgroup.type` | [`CgroupType`] |
//! | `/proc/self/mountinfo` | [`mountinfo::MountInfo`] |
//! | `/proc/self/cgroup` | [`proc_cgroup::ProcCgroup`] |
//! | `*.pressure` | the `stepmon-psi` crate |
//! | cgroup v1: `memory.stat`, `memory.oom_control`, `memory.*limit_in_bytes`, `cpuacct.stat`, v1 `cpu.stat`, `cpu.cfs_quota_us`, `blkio.throttle.io_service*` | [`v1`] (table there) |
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects,
        clippy::unreachable,
        clippy::todo
    )
)]

#[cfg(all(feature = "std", not(test)))]
extern crate std;

pub mod error;
pub mod format;
pub mod lines;
pub mod number;
pub mod scan;
pub mod testing;

mod cgroup_core;
mod cpu;
mod io;
mod memory;
mod pids;

pub mod mountinfo;
pub mod proc_cgroup;
pub mod v1;

pub use cgroup_core::{CgroupEvents, CgroupStat, CgroupType, ControllerList, PidList, SubsysCount};
pub use cpu::{CpuMax, CpuStat, CpuStatLocal};
pub use error::{ErrorKind, ParseError, Result};
pub use format::single::{self, Limit};
pub use io::{DeviceId, IoDeviceStat, IoStat, IoTotals};
pub use memory::{MemoryEvents, MemoryStat};
pub use pids::PidsEvents;
// The v1 types at the root too, beside the v2 ones (their names say v1
// where a v2 type of the same file exists).
pub use v1::{
    BlkioDeviceStat, BlkioStat, BlkioTotals, CpuStatLocalV1, CpuStatV1, CpuacctStat, MemoryStatV1, OomControl,
};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
