//! `/sys/class/net/<if>/statistics/*`: one SINGLE value (`u64` + `\n`) per
//! file, documented in `Documentation/ABI/testing/sysfs-class-net-statistics`
//! (<https://docs.kernel.org/admin-guide/abi-testing.html>). Parsing each file
//! reuses the cgroup single-value parser, which has the same grammar.

use stepmon_cgroupfs_parse::Result;
use stepmon_cgroupfs_parse::format::single::parse_u64;

use super::counters::DevCounters;

macro_rules! stat_files {
    ($($variant:ident => $field:ident, $doc:literal;)*) => {
        /// One file of `/sys/class/net/<if>/statistics/`, spec:
        /// <https://docs.kernel.org/admin-guide/abi-testing.html>
        /// (`sysfs-class-net-statistics`). All 24 exist since 2.6.12 except
        /// `rx_nohandler` (4.6).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum StatFile {
            $(#[doc = $doc] $variant,)*
        }

        impl StatFile {
            /// Every file, in alphabetical order (the order of `ls`).
            pub const ALL: &'static [StatFile] = &[$(StatFile::$variant,)*];

            /// The file name.
            #[must_use]
            pub const fn name(self) -> &'static str {
                match self {
                    $(StatFile::$variant => stringify!($field),)*
                }
            }

            /// The file for a name, `None` for an unknown one.
            #[must_use]
            pub fn from_name(name: &[u8]) -> Option<StatFile> {
                StatFile::ALL.iter().copied().find(|f| f.name().as_bytes() == name)
            }
        }

        /// The statistics files of one interface, spec:
        /// <https://docs.kernel.org/admin-guide/abi-testing.html>
        /// (`sysfs-class-net-statistics`). A field is `None` until its file
        /// was read ([`SysfsStatistics::set`]); a file the kernel does not
        /// have stays `None`.
        ///
        /// ```
        /// use stepmon_netns_stats::{StatFile, SysfsStatistics};
        /// let mut s = SysfsStatistics::default();
        /// s.set(StatFile::RxBytes, b"3193\n")?;
        /// assert_eq!((s.rx_bytes, s.tx_bytes), (Some(3193), None));
        /// assert!(s.set(StatFile::TxBytes, b"").is_err());
        /// # Ok::<(), stepmon_netns_stats::ParseError>(())
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[non_exhaustive]
        pub struct SysfsStatistics {
            $(#[doc = $doc] pub $field: Option<u64>,)*
        }

        impl SysfsStatistics {
            /// The value read from `file`, if any.
            #[must_use]
            pub fn get(&self, file: StatFile) -> Option<u64> {
                match file {
                    $(StatFile::$variant => self.$field,)*
                }
            }

            fn slot(&mut self, file: StatFile) -> &mut Option<u64> {
                match file {
                    $(StatFile::$variant => &mut self.$field,)*
                }
            }
        }
    };
}

stat_files! {
    Collisions => collisions, "Collisions (`collisions`).";
    Multicast => multicast, "Multicast packets received (`multicast`).";
    RxBytes => rx_bytes, "Bytes received (`rx_bytes`).";
    RxCompressed => rx_compressed, "Compressed packets received (`rx_compressed`).";
    RxCrcErrors => rx_crc_errors, "Packets with a CRC error (`rx_crc_errors`).";
    RxDropped => rx_dropped, "Received packets dropped (`rx_dropped`; `/proc/net/dev` adds `rx_missed_errors`).";
    RxErrors => rx_errors, "Receive errors (`rx_errors`).";
    RxFifoErrors => rx_fifo_errors, "Receive FIFO overruns (`rx_fifo_errors`).";
    RxFrameErrors => rx_frame_errors, "Frame alignment errors (`rx_frame_errors`).";
    RxLengthErrors => rx_length_errors, "Length errors (`rx_length_errors`).";
    RxMissedErrors => rx_missed_errors, "Packets missed by the host (`rx_missed_errors`).";
    RxNohandler => rx_nohandler, "Packets dropped for lack of a protocol handler (`rx_nohandler`, 4.6).";
    RxOverErrors => rx_over_errors, "Receive ring overruns (`rx_over_errors`).";
    RxPackets => rx_packets, "Packets received (`rx_packets`).";
    TxAbortedErrors => tx_aborted_errors, "Aborted transmissions (`tx_aborted_errors`).";
    TxBytes => tx_bytes, "Bytes transmitted (`tx_bytes`).";
    TxCarrierErrors => tx_carrier_errors, "Carrier errors (`tx_carrier_errors`).";
    TxCompressed => tx_compressed, "Compressed packets transmitted (`tx_compressed`).";
    TxDropped => tx_dropped, "Transmitted packets dropped (`tx_dropped`).";
    TxErrors => tx_errors, "Transmit errors (`tx_errors`).";
    TxFifoErrors => tx_fifo_errors, "Transmit FIFO errors (`tx_fifo_errors`).";
    TxHeartbeatErrors => tx_heartbeat_errors, "Heartbeat errors (`tx_heartbeat_errors`).";
    TxPackets => tx_packets, "Packets transmitted (`tx_packets`).";
    TxWindowErrors => tx_window_errors, "Late collisions (`tx_window_errors`).";
}

impl StatFile {
    /// The eight files BuildKit reads for its `NetworkSample`
    /// (`util/network/cniprovider/cni_linux.go`).
    pub const SAMPLE: &'static [StatFile] = &[
        StatFile::RxBytes,
        StatFile::RxPackets,
        StatFile::RxErrors,
        StatFile::RxDropped,
        StatFile::TxBytes,
        StatFile::TxPackets,
        StatFile::TxErrors,
        StatFile::TxDropped,
    ];
}

impl SysfsStatistics {
    /// Parses the content of `file` (one `u64` and `\n`) and stores it.
    /// Errors are those of
    /// [`single::parse_u64`](stepmon_cgroupfs_parse::format::single::parse_u64):
    /// empty, not a number, overflow, more than one line.
    pub fn set(&mut self, file: StatFile, content: &[u8]) -> Result<()> {
        *self.slot(file) = Some(parse_u64(content)?);
        Ok(())
    }

    /// The `/proc/net/dev` columns computed from these files the way
    /// `dev_seq_printf_stats()` does (same source counters, same `u64`
    /// wrapping sums). `None` unless every file involved was read
    /// (`rx_nohandler` is not involved).
    #[must_use]
    pub fn dev_counters(&self) -> Option<DevCounters> {
        // The kernel adds these in C `u64` arithmetic, which wraps.
        let sum = |parts: &[Option<u64>]| parts.iter().try_fold(0u64, |acc, p| p.map(|v| acc.wrapping_add(v)));
        Some(DevCounters {
            rx_bytes: self.rx_bytes?,
            rx_packets: self.rx_packets?,
            rx_errs: self.rx_errors?,
            rx_drop: sum(&[self.rx_dropped, self.rx_missed_errors])?,
            rx_fifo: self.rx_fifo_errors?,
            rx_frame: sum(&[self.rx_length_errors, self.rx_over_errors, self.rx_crc_errors, self.rx_frame_errors])?,
            rx_compressed: self.rx_compressed?,
            rx_multicast: self.multicast?,
            tx_bytes: self.tx_bytes?,
            tx_packets: self.tx_packets?,
            tx_errs: self.tx_errors?,
            tx_drop: self.tx_dropped?,
            tx_fifo: self.tx_fifo_errors?,
            tx_colls: self.collisions?,
            tx_carrier: sum(&[
                self.tx_carrier_errors,
                self.tx_aborted_errors,
                self.tx_window_errors,
                self.tx_heartbeat_errors,
            ])?,
            tx_compressed: self.tx_compressed?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stepmon_cgroupfs_parse::ErrorKind;

    #[test]
    fn names_round_trip_and_are_sorted() {
        assert_eq!(StatFile::ALL.len(), 24);
        for &f in StatFile::ALL {
            assert_eq!(StatFile::from_name(f.name().as_bytes()), Some(f));
        }
        assert!(StatFile::ALL.windows(2).all(|w| w[0].name() < w[1].name()));
        assert_eq!(StatFile::from_name(b"rx_bytes\n"), None);
    }

    #[test]
    fn composites_need_every_part() {
        let mut s = SysfsStatistics::default();
        for (i, &f) in StatFile::ALL.iter().enumerate() {
            s.set(f, format!("{}\n", i + 1).as_bytes()).unwrap();
        }
        let c = s.dev_counters().unwrap();
        // rx_dropped(6) + rx_missed_errors(11); length(10)+over(13)+crc(5)+frame(9).
        assert_eq!((c.rx_drop, c.rx_frame), (17, 37));
        // carrier(17) + aborted(15) + window(24) + heartbeat(22).
        assert_eq!(c.tx_carrier, 78);
        s.rx_missed_errors = None;
        assert_eq!(s.dev_counters(), None);
        assert_eq!(s.set(StatFile::RxBytes, b"1\n2\n").unwrap_err().kind, ErrorKind::TrailingData);
    }
}
