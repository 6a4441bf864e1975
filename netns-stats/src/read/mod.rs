//! I/O (feature `std`): reading the counters of a network namespace.
//!
//! * [`NetnsCounters`] — `/proc/net/dev` as seen from inside any namespace
//!   given by a path, re-readable from any thread (the way to measure a step).
//! * [`SysfsInterface`] — `/sys/class/net/<if>/statistics/*`. Only for the
//!   namespace that **mounted** `/sys` (normally the host's): sysfs shows the
//!   network namespace of the sysfs mount, not of the reading thread, so a
//!   `setns` does not change what it shows.

mod error;
mod netns;
mod sysfs;

pub use error::Error;
pub use netns::NetnsCounters;
pub use sysfs::SysfsInterface;
