//! Zero-copy parser for Linux Pressure Stall Information: the
//! `/proc/pressure/{cpu,memory,io,irq}` files and the cgroup v2
//! `{cpu,memory,io,irq}.pressure` files, which share one format
//! (<https://docs.kernel.org/accounting/psi.html#pressure-interface>).
//!
//! Averages are exact fixed-point hundredths ([`Hundredths`]), totals are µs
//! as `u64`; [`StallDelta`] turns two readings into stall time and share of
//! wall time. `no_std`, no allocation, no `unsafe`.
//!
//! ```
//! use stepmon_psi::{Pressure, StallDelta};
//! use core::time::Duration;
//! let before = Pressure::parse(b"some avg10=0.00 avg60=0.00 avg300=0.00 total=1000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")?;
//! let after = Pressure::parse(b"some avg10=3.77 avg60=1.14 avg300=0.59 total=251000\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")?;
//! assert_eq!(after.some.unwrap().avg10.unwrap().to_string(), "3.77");
//! let d = StallDelta::between(&before, &after, Duration::from_secs(1));
//! assert_eq!(d.some_usec, Some(250_000));
//! assert_eq!(d.some_percent_of_wall(), Some(25.0));
//! # Ok::<(), stepmon_psi::ParseError>(())
//! ```
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

mod delta;
mod pressure;

pub use delta::StallDelta;
pub use pressure::{Pressure, PressureLine};
pub use stepmon_cgroupfs_parse::number::Hundredths;
pub use stepmon_cgroupfs_parse::{ErrorKind, ParseError, Result};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
