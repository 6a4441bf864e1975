//! Network bytes of the step's own network namespace.

use super::{Family, Kind, u};

pub(super) const FAMILIES: &[Family] = &[
    Family {
        name: "stepmon_step_network_receive_bytes",
        kind: Kind::Counter,
        unit: Some("bytes"),
        help: "Bytes the step received (its own network namespace only).",
        points: |x| u(x.step.summary.net_rx_bytes),
    },
    Family {
        name: "stepmon_step_network_transmit_bytes",
        kind: Kind::Counter,
        unit: Some("bytes"),
        help: "Bytes the step sent (its own network namespace only).",
        points: |x| u(x.step.summary.net_tx_bytes),
    },
];
