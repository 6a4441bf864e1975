//! Network counters of a Linux network namespace, as a build step sees them.
//!
//! * [`parse`] — zero-copy, allocation-free, `no_std` parsers for
//!   `/proc/net/dev` ([`NetDev`]) and the single-value files of
//!   `/sys/class/net/<if>/statistics/` ([`SysfsStatistics`]).
//! * [`read`] (feature `std`, Linux only) — [`NetnsCounters`] reads `/proc/net/dev` *as
//!   seen from inside* a namespace named by a path (`/proc/<pid>/ns/net`,
//!   `/run/netns/<name>`), by opening it on a short-lived thread that
//!   `setns`-ed into that namespace; [`SysfsInterface`] reads the sysfs
//!   statistics of the caller's own namespace.
//! * [`model`] (feature `std`) — owned [`Snapshot`]s, [`Totals`] without
//!   loopback by default, and BuildKit's [`NetworkSample`](stepmon_model::network::NetworkSample) relative to the
//!   first reading, produced by [`NetworkSampler`].
//!
//! Direction is the **step's**: `rx` is what the step received. The counters
//! are read from inside the step's namespace, where an interface's receive
//! counters are the step's receive counters. BuildKit instead reads the
//! *host* end of the step's veth pair, whose `rx` is what the step *sent*, and
//! copies it 1:1, so its `rxBytes`/`txBytes` are swapped relative to ours
//! for the same traffic (see the crate README).
//!
//! ```
//! use stepmon_netns_stats::NetDev;
//! let dev = NetDev::parse(b"Inter-|   Receive  |  Transmit\n face |bytes packets|bytes packets\n\
//!     lo: 3193 29 0 0 0 0 0 0 3193 29 0 0 0 0 0 0\n\
//!   eth0: 47463650 2772 0 0 0 0 0 0 324676 3317 0 0 0 0 0 0\n")?;
//! let eth0 = dev.get(b"eth0").unwrap();
//! assert_eq!((eth0.rx_bytes, eth0.tx_packets), (47_463_650, 3317));
//! assert_eq!(dev.len(), 2);
//! # Ok::<(), stepmon_netns_stats::ParseError>(())
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
// The reader needs procfs, setns and rustix's Linux APIs; the parsers and the
// model build on every platform (the sampler's API is cross-platform).
#[cfg(all(feature = "std", target_os = "linux"))]
pub mod read;

#[cfg(feature = "std")]
pub use model::{InterfaceCounters, NetworkSampler, SampleOutcome, Snapshot, Totals, TotalsOptions};
pub use parse::{DevCounters, Interface, NetDev, NetDevLines, StatFile, SysfsStatistics};
#[cfg(all(feature = "std", target_os = "linux"))]
pub use read::{Error, NetnsCounters, SysfsInterface};
pub use stepmon_cgroupfs_parse::{ErrorKind, ParseError, Result};

/// The README's example, compiled and run as a doctest.
#[cfg(all(doctest, feature = "std", target_os = "linux"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
