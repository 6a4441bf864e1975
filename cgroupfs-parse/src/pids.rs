//! PID controller files: <https://docs.kernel.org/admin-guide/cgroup-v2.html#pid-interface-files>.
//! `pids.current`/`pids.peak` use [`crate::single::parse_u64`], `pids.max` [`crate::Limit`].

use crate::format::flat::{U64, flat_u64_struct};

flat_u64_struct! {
    /// `pids.events` (4.8) and `pids.events.local` (6.11), flat keyed, spec:
    /// <https://docs.kernel.org/admin-guide/cgroup-v2.html#pid-interface-files>.
    ///
    /// ```
    /// assert_eq!(stepmon_cgroupfs_parse::PidsEvents::parse(b"max 3\n").unwrap().max, Some(3));
    /// ```
    pub struct PidsEvents {
        /// Times the `pids.max` limit was hit (fork failed).
        max = "max" via U64,
    }
}
