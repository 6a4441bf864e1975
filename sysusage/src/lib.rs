//! Whole-machine resource usage from procfs, the way BuildKit's system sampler
//! records it (`sysUsage` and the per-step `sysCPUStat`), plus what BuildKit leaves out.
//!
//! Three layers, each usable on its own:
//!
//! * [`parse`] — zero-copy parsers for `/proc/stat`, `/proc/meminfo` and
//!   `/proc/loadavg` (`/proc/pressure/*` is parsed by [`stepmon_psi`]).
//!   `&[u8]` in, `Copy` structs or views borrowing the input out; no I/O, no
//!   allocation, `no_std` (build with `--no-default-features` to get only this).
//! * [`probe`] (feature `std`) — [`SysProbe`](probe::SysProbe) keeps the files
//!   open below a configurable procfs root (default `/proc`) and re-reads them
//!   with `pread` at offset 0; anything it cannot read is reported in a
//!   [`Missing`](stepmon_model::missing::Missing) list instead of failing the whole reading.
//! * [`model`] (feature `std`) — the readings as BuildKit's `SysSample`,
//!   `SysCPUStat`, `ProcStat`, `SysMemoryStat` and `Pressure` JSON shapes
//!   (the types are `stepmon-model`'s), with our additions under a separate
//!   `stepmon` key.
//!
//! ```
//! use stepmon_sysusage::parse::{KernelStat, MemInfo};
//! let stat = KernelStat::parse(b"cpu  10 0 5 100 1 0 0 2 0 0\ncpu0 10 0 5 100 1 0 0 2 0 0\nctxt 42\n")?;
//! assert_eq!(stat.total.unwrap().steal, Some(2));
//! assert_eq!(stat.counters.ctxt, Some(42));
//! let mem = MemInfo::parse(b"MemTotal:       24684092 kB\nHugePages_Total:       0\n")?;
//! assert_eq!(mem.mem_total, Some(24_684_092)); // kB, as printed
//! assert_eq!(mem.get_bytes("MemTotal"), Some(24_684_092 * 1024));
//! # Ok::<(), stepmon_sysusage::parse::ParseError>(())
//! ```
#![cfg_attr(not(any(feature = "std", test)), no_std)]
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

pub mod parse;

#[cfg(feature = "std")]
pub mod model;
#[cfg(feature = "std")]
pub mod probe;

/// How a live unit test says it cannot run here (shared by the workspace's tests).
#[cfg(all(test, feature = "std", target_os = "linux"))]
use stepmon_testsupport::skip as test_skip;

/// The README's code blocks, compiled as doctests so they cannot rot.
#[cfg(all(doctest, feature = "std"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
