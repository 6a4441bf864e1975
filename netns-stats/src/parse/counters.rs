//! The 16 counters of one `/proc/net/dev` line.

/// The 16 counters of one interface, in the column order of `/proc/net/dev`
/// (spec: <https://docs.kernel.org/filesystems/proc.html#networking-info-in-proc-net>;
/// printed by `dev_seq_printf_stats()` in `net/core/net-procfs.c`).
///
/// The names follow the file's column headers with an `rx_`/`tx_` prefix.
/// Several columns are sums of finer counters (`dev_seq_printf_stats()`,
/// <https://github.com/torvalds/linux/blob/master/net/core/net-procfs.c>):
/// `rx_drop` = `rx_dropped + rx_missed_errors`, `rx_frame` = length + over +
/// crc + frame errors, `tx_carrier` = carrier + aborted + window + heartbeat
/// errors. [`SysfsStatistics::dev_counters`](crate::SysfsStatistics::dev_counters)
/// builds the same sums from sysfs.
///
/// All 16 columns are present on every line of every kernel since 2.6, so
/// they are plain `u64`: a line with fewer columns is an error, not a `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DevCounters {
    /// Bytes received.
    pub rx_bytes: u64,
    /// Packets received.
    pub rx_packets: u64,
    /// Receive errors (`rx_errors`).
    pub rx_errs: u64,
    /// Received packets dropped: `rx_dropped + rx_missed_errors`.
    pub rx_drop: u64,
    /// Receive FIFO overruns (`rx_fifo_errors`).
    pub rx_fifo: u64,
    /// Framing errors: `rx_length_errors + rx_over_errors + rx_crc_errors + rx_frame_errors`.
    pub rx_frame: u64,
    /// Compressed packets received (`rx_compressed`).
    pub rx_compressed: u64,
    /// Multicast packets received (`multicast`).
    pub rx_multicast: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Transmit errors (`tx_errors`).
    pub tx_errs: u64,
    /// Transmitted packets dropped (`tx_dropped`).
    pub tx_drop: u64,
    /// Transmit FIFO errors (`tx_fifo_errors`).
    pub tx_fifo: u64,
    /// Collisions (`collisions`).
    pub tx_colls: u64,
    /// Carrier errors: `tx_carrier_errors + tx_aborted_errors + tx_window_errors + tx_heartbeat_errors`.
    pub tx_carrier: u64,
    /// Compressed packets transmitted (`tx_compressed`).
    pub tx_compressed: u64,
}

impl DevCounters {
    /// Number of counter columns on a `/proc/net/dev` line.
    pub const COLUMNS: usize = 16;

    /// Field names in column order (the Rust field names).
    pub const NAMES: [&'static str; Self::COLUMNS] = [
        "rx_bytes",
        "rx_packets",
        "rx_errs",
        "rx_drop",
        "rx_fifo",
        "rx_frame",
        "rx_compressed",
        "rx_multicast",
        "tx_bytes",
        "tx_packets",
        "tx_errs",
        "tx_drop",
        "tx_fifo",
        "tx_colls",
        "tx_carrier",
        "tx_compressed",
    ];

    /// Builds the counters from the 16 columns in file order.
    #[must_use]
    pub const fn from_array(c: [u64; Self::COLUMNS]) -> Self {
        let [
            rx_bytes,
            rx_packets,
            rx_errs,
            rx_drop,
            rx_fifo,
            rx_frame,
            rx_compressed,
            rx_multicast,
            tx_bytes,
            tx_packets,
            tx_errs,
            tx_drop,
            tx_fifo,
            tx_colls,
            tx_carrier,
            tx_compressed,
        ] = c;
        DevCounters {
            rx_bytes,
            rx_packets,
            rx_errs,
            rx_drop,
            rx_fifo,
            rx_frame,
            rx_compressed,
            rx_multicast,
            tx_bytes,
            tx_packets,
            tx_errs,
            tx_drop,
            tx_fifo,
            tx_colls,
            tx_carrier,
            tx_compressed,
        }
    }

    /// The 16 columns in file order.
    #[must_use]
    pub const fn to_array(&self) -> [u64; Self::COLUMNS] {
        [
            self.rx_bytes,
            self.rx_packets,
            self.rx_errs,
            self.rx_drop,
            self.rx_fifo,
            self.rx_frame,
            self.rx_compressed,
            self.rx_multicast,
            self.tx_bytes,
            self.tx_packets,
            self.tx_errs,
            self.tx_drop,
            self.tx_fifo,
            self.tx_colls,
            self.tx_carrier,
            self.tx_compressed,
        ]
    }

    /// Combines two sets column by column (e.g. `u64::saturating_sub` for a
    /// delta, `u64::saturating_add` for a sum).
    #[must_use]
    pub fn zip_with(&self, other: &DevCounters, mut f: impl FnMut(u64, u64) -> u64) -> DevCounters {
        let (a, b) = (self.to_array(), other.to_array());
        let mut out = [0u64; Self::COLUMNS];
        for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
            *o = f(x, y);
        }
        DevCounters::from_array(out)
    }

    /// Whether any column of `self` is smaller than the same column of
    /// `earlier` (the counters went backwards: device recreated or reset).
    #[must_use]
    pub fn any_below(&self, earlier: &DevCounters) -> bool {
        self.to_array().iter().zip(earlier.to_array()).any(|(&now, before)| now < before)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_round_trip_keeps_column_order() {
        let cols: [u64; 16] = core::array::from_fn(|i| i as u64 + 1);
        let c = DevCounters::from_array(cols);
        assert_eq!((c.rx_bytes, c.rx_multicast, c.tx_bytes, c.tx_compressed), (1, 8, 9, 16));
        assert_eq!(c.to_array(), cols);
    }

    #[test]
    fn zip_and_below() {
        let a = DevCounters::from_array([5; 16]);
        let mut b = DevCounters::from_array([3; 16]);
        assert_eq!(a.zip_with(&b, u64::saturating_sub), DevCounters::from_array([2; 16]));
        assert!(!a.any_below(&b));
        b.tx_colls = 6;
        assert!(a.any_below(&b));
    }
}
