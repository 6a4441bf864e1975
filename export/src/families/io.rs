//! Block IO bytes and the peak number of tasks.

use super::{Family, Kind, u};

pub(super) const FAMILIES: &[Family] = &[
    Family {
        name: "stepmon_step_io_read_bytes",
        kind: Kind::Counter,
        unit: Some("bytes"),
        help: "Bytes the step read from block devices (io.stat rbytes).",
        points: |x| u(x.step.summary.io.read_bytes),
    },
    Family {
        name: "stepmon_step_io_write_bytes",
        kind: Kind::Counter,
        unit: Some("bytes"),
        help: "Bytes the step wrote to block devices (io.stat wbytes).",
        points: |x| u(x.step.summary.io.write_bytes),
    },
    Family {
        name: "stepmon_step_pids_peak",
        kind: Kind::Gauge,
        unit: None,
        help: "Most tasks in the step at once (pids.peak, else the highest pids.current seen).",
        points: |x| u(x.step.summary.pids_peak),
    },
];
