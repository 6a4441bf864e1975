//! Parsers: `&[u8]` in, borrowed views or `Copy` structs out. No I/O, no
//! allocation, `no_std`; no input makes them panic.
//!
//! | file | parser |
//! |---|---|
//! | `/proc/net/dev`, `/proc/<pid>/net/dev`, `/proc/thread-self/net/dev` | [`NetDev`], [`NetDevLines`] |
//! | `/sys/class/net/<if>/statistics/<counter>` | [`SysfsStatistics::set`], [`StatFile`] |

mod counters;
mod ifname;
mod net_dev;
mod sysfs;

pub use counters::DevCounters;
pub use ifname::{MAX_NAME_LEN, validate_name};
pub use net_dev::{Interface, Interfaces, NetDev, NetDevLines};
pub use sysfs::{StatFile, SysfsStatistics};
