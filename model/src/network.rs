//! BuildKit's `NetworkSample`, from the step's point of view. The type:
//! <https://github.com/moby/buildkit/blob/master/executor/resources/types/types.go>;
//! BuildKit's sampler, which reads the host end of the step's veth pair
//! (`/sys/class/net/<veth>/statistics`):
//! <https://github.com/moby/buildkit/blob/master/util/network/cniprovider/cni_linux.go>,
//! made relative to the step's start in `cniNS.Sample` of
//! <https://github.com/moby/buildkit/blob/master/util/network/cniprovider/cni.go>.

use serde::{Deserialize, Serialize};

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
/// use stepmon_model::network::NetworkSample;
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
}
