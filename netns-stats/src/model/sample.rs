//! BuildKit's `NetworkSample` (moby/buildkit
//! `executor/resources/types/types.go`; `docs/data-model.md`, "netStat"),
//! from the step's point of view.

use serde::{Deserialize, Serialize};

use crate::parse::DevCounters;

/// Network traffic of a step since its first reading, serialized exactly like
/// BuildKit's `types.NetworkSample` (`netStat` in `resourceUsage.samples`):
/// camelCase keys, `int64` values, each key **omitted when 0** (Go
/// `omitempty`).
///
/// Because of `omitempty`, a `0` and "not measured" look the same in the
/// JSON (`{}` either way). That is why the sampler that embeds this type also
/// records a separate `missing` reason when no reading was possible; do not
/// infer "no traffic" from an absent key.
///
/// **Direction.** `rx` is what the *step* received, `tx` what it sent: we
/// read the counters from inside the step's network namespace, where an
/// interface's receive counters are the step's. BuildKit reads
/// `/sys/class/net/<veth>/statistics` of the **host** end of the step's veth
/// pair and copies the files 1:1; a packet the step receives is *transmitted*
/// by the host end, so BuildKit's `rxBytes` is what the step sent and its
/// `txBytes` what the step received. We deliberately do not reproduce that
/// swap.
///
/// Mapping from `/proc/net/dev` columns: `rxErrors` = `errs`,
/// `rxDropped` = `drop` (which is `rx_dropped + rx_missed_errors`; BuildKit's
/// sysfs `rx_dropped` lacks the missed part, which is 0 on veth devices),
/// `txErrors` = `errs`, `txDropped` = `drop`.
///
/// ```
/// use stepmon_netns_stats::NetworkSample;
/// let s = NetworkSample { rx_bytes: 1200, tx_bytes: 5_600_000, ..Default::default() };
/// assert_eq!(serde_json::to_string(&s)?, r#"{"rxBytes":1200,"txBytes":5600000}"#);
/// assert_eq!(serde_json::to_string(&NetworkSample::default())?, "{}");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkSample {
    /// Bytes received by the step.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rx_bytes: i64,
    /// Packets received by the step.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rx_packets: i64,
    /// Receive errors.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rx_errors: i64,
    /// Received packets dropped.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rx_dropped: i64,
    /// Bytes sent by the step.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tx_bytes: i64,
    /// Packets sent by the step.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tx_packets: i64,
    /// Transmit errors.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tx_errors: i64,
    /// Packets the step tried to send that were dropped.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tx_dropped: i64,
}

// serde's skip_serializing_if passes a reference.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(v: &i64) -> bool {
    *v == 0
}

/// `u64` counter delta → JSON `int64`, saturating (a delta above `i64::MAX`
/// would be 8 EiB).
fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl NetworkSample {
    /// The sample for counter deltas read inside the step's namespace
    /// (no direction swap, see the type docs).
    #[must_use]
    pub fn from_delta(delta: &DevCounters) -> NetworkSample {
        NetworkSample {
            rx_bytes: to_i64(delta.rx_bytes),
            rx_packets: to_i64(delta.rx_packets),
            rx_errors: to_i64(delta.rx_errs),
            rx_dropped: to_i64(delta.rx_drop),
            tx_bytes: to_i64(delta.tx_bytes),
            tx_packets: to_i64(delta.tx_packets),
            tx_errors: to_i64(delta.tx_errs),
            tx_dropped: to_i64(delta.tx_drop),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape_matches_buildkit() {
        let s = NetworkSample {
            rx_bytes: 1,
            rx_packets: 2,
            rx_errors: 3,
            rx_dropped: 4,
            tx_bytes: 5,
            tx_packets: 6,
            tx_errors: 7,
            tx_dropped: 8,
        };
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"rxBytes":1,"rxPackets":2,"rxErrors":3,"rxDropped":4,"txBytes":5,"txPackets":6,"txErrors":7,"txDropped":8}"#
        );
        let back: NetworkSample = serde_json::from_str(r#"{"txDropped":8,"rxBytes":1}"#).unwrap();
        assert_eq!(back, NetworkSample { rx_bytes: 1, tx_dropped: 8, ..Default::default() });
    }

    #[test]
    fn mapping_from_proc_columns_does_not_swap() {
        let d = DevCounters::from_array([10, 11, 12, 13, 99, 99, 99, 99, 20, 21, 22, 23, 99, 99, 99, 99]);
        let s = NetworkSample::from_delta(&d);
        assert_eq!((s.rx_bytes, s.rx_packets, s.rx_errors, s.rx_dropped), (10, 11, 12, 13));
        assert_eq!((s.tx_bytes, s.tx_packets, s.tx_errors, s.tx_dropped), (20, 21, 22, 23));
        let huge = DevCounters { rx_bytes: u64::MAX, ..Default::default() };
        assert_eq!(NetworkSample::from_delta(&huge).rx_bytes, i64::MAX);
    }
}
