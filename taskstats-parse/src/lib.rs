//! Zero-copy parsers for the two kernel interfaces that report a step's
//! processes one by one:
//!
//! * **taskstats** over generic netlink
//!   (<https://docs.kernel.org/accounting/taskstats.html>, struct layout in
//!   `include/uapi/linux/taskstats.h`): the `TASKSTATS` family id from the
//!   controller's `CTRL_CMD_GETFAMILY` reply ([`ctrl`]), and the per-task
//!   record sent at every exit or in answer to `TASKSTATS_CMD_GET`
//!   ([`taskstats`]);
//! * the **proc connector** (`NETLINK_CONNECTOR`, `include/uapi/linux/cn_proc.h`,
//!   `include/uapi/linux/connector.h`): fork, exec and exit events ([`cn_proc`]).
//!
//! Underneath both, [`netlink`] walks the messages of one datagram
//! (netlink(7), `include/uapi/linux/netlink.h`) and [`genl`] the generic
//! netlink header and attributes (`include/uapi/linux/genetlink.h`).
//!
//! All integers are in host byte order, as netlink sends them. Every output
//! borrows the input or is `Copy`; no allocation, no `unsafe`, and no input
//! makes a parser panic: bad bytes are an [`Error`].
//!
//! ```
//! use stepmon_taskstats_parse::{netlink::Messages, taskstats::TaskstatsReply};
//! let datagram = include_bytes!("../tests/data/exit-sh.bin");
//! let message = Messages::new(datagram).next().unwrap()?;
//! let reply = TaskstatsReply::parse(message.payload)?;
//! let (pid, stats) = reply.pid.unwrap();
//! assert_eq!(stats.comm(), b"sh");
//! assert_eq!(stats.pid(), Some(pid));
//! # Ok::<(), stepmon_taskstats_parse::Error>(())
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

mod bytes;
pub mod cn_proc;
pub mod ctrl;
mod error;
pub mod genl;
pub mod netlink;
pub mod taskstats;

pub use error::{Error, Result};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
