//! `/proc/net/dev` counter deltas as BuildKit's `NetworkSample` (moby/buildkit
//! `executor/resources/types/types.go`; `docs/data-model.md`, "netStat"),
//! from the step's point of view.

use stepmon_model::network::NetworkSample;

use crate::parse::DevCounters;

/// `u64` counter delta → JSON `int64`, saturating (a delta above `i64::MAX`
/// would be 8 EiB).
fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The sample for counter deltas read inside the step's namespace
/// (no direction swap, see the type docs).
#[must_use]
pub fn sample_of_delta(delta: &DevCounters) -> NetworkSample {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_from_proc_columns_does_not_swap() {
        let d = DevCounters::from_array([10, 11, 12, 13, 99, 99, 99, 99, 20, 21, 22, 23, 99, 99, 99, 99]);
        let s = sample_of_delta(&d);
        assert_eq!((s.rx_bytes, s.rx_packets, s.rx_errors, s.rx_dropped), (10, 11, 12, 13));
        assert_eq!((s.tx_bytes, s.tx_packets, s.tx_errors, s.tx_dropped), (20, 21, 22, 23));
        let huge = DevCounters { rx_bytes: u64::MAX, ..Default::default() };
        assert_eq!(sample_of_delta(&huge).rx_bytes, i64::MAX);
    }
}
