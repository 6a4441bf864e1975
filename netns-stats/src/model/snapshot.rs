//! One reading of a namespace's interfaces, owned, and sums over them.

use std::string::String;
use std::vec::Vec;

use crate::ParseError;
use crate::parse::{DevCounters, Interface, NetDev, NetDevLines};

/// One interface of a [`Snapshot`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct InterfaceCounters {
    /// Interface name. Kernel names may hold non-UTF-8 bytes; those are
    /// replaced by U+FFFD here (real names are ASCII in practice).
    pub name: String,
    /// Its counters, as read.
    pub counters: DevCounters,
}

impl From<&Interface<'_>> for InterfaceCounters {
    fn from(i: &Interface<'_>) -> Self {
        InterfaceCounters { name: String::from_utf8_lossy(i.name).into_owned(), counters: i.counters }
    }
}

impl InterfaceCounters {
    /// Whether this is the loopback device (named `lo` in every namespace,
    /// see [`Interface::is_loopback`](crate::Interface::is_loopback)).
    #[must_use]
    pub fn is_loopback(&self) -> bool {
        self.name == "lo"
    }
}

/// Every interface of one reading of `/proc/net/dev`, in file order.
///
/// ```
/// use stepmon_netns_stats::{NetDev, Snapshot, TotalsOptions};
/// let dev = NetDev::parse(b"h\nh\n lo: 10 1 0 0 0 0 0 0 10 1 0 0 0 0 0 0\n eth0: 5 1 0 0 0 0 0 0 7 2 0 0 0 0 0 0\n")?;
/// let snap = Snapshot::from_net_dev(&dev);
/// assert_eq!(snap.totals(TotalsOptions::default()).counters.rx_bytes, 5);
/// assert_eq!(snap.totals(TotalsOptions { include_loopback: true }).counters.rx_bytes, 15);
/// # Ok::<(), stepmon_netns_stats::ParseError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Snapshot {
    /// The interfaces in file order.
    pub interfaces: Vec<InterfaceCounters>,
}

impl Snapshot {
    /// Copies the interfaces of a parsed file.
    #[must_use]
    pub fn from_net_dev(dev: &NetDev<'_>) -> Snapshot {
        let interfaces = dev.interfaces().map(|i| InterfaceCounters::from(&i)).collect();
        Snapshot { interfaces }
    }

    /// Parses `/proc/net/dev` straight into a snapshot: one pass over the
    /// input ([`NetDevLines`]) where [`NetDev::parse`] + [`from_net_dev`](Self::from_net_dev)
    /// make two. The same errors as [`NetDev::parse`].
    ///
    /// ```
    /// use stepmon_netns_stats::{NetDev, Snapshot};
    /// let input = b"h\nh\n lo: 10 1 0 0 0 0 0 0 10 1 0 0 0 0 0 0\n eth0: 5 1 0 0 0 0 0 0 7 2 0 0 0 0 0 0\n";
    /// assert_eq!(Snapshot::parse(input)?, Snapshot::from_net_dev(&NetDev::parse(input)?));
    /// assert!(Snapshot::parse(b"h\nh\n eth0: 5\n").is_err());
    /// # Ok::<(), stepmon_netns_stats::ParseError>(())
    /// ```
    pub fn parse(input: &[u8]) -> Result<Snapshot, ParseError> {
        let interfaces =
            NetDevLines::new(input)?.map(|i| i.map(|i| InterfaceCounters::from(&i))).collect::<Result<_, _>>()?;
        Ok(Snapshot { interfaces })
    }

    /// The counters of the interface called `name`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&DevCounters> {
        self.interfaces.iter().find(|i| i.name == name).map(|i| &i.counters)
    }

    /// The interfaces [`Totals`] would count with `options`.
    pub fn selected(&self, options: TotalsOptions) -> impl Iterator<Item = &InterfaceCounters> {
        self.interfaces.iter().filter(move |i| options.include_loopback || !i.is_loopback())
    }

    /// Sums the selected interfaces.
    #[must_use]
    pub fn totals(&self, options: TotalsOptions) -> Totals {
        let mut totals = Totals::default();
        for i in self.selected(options) {
            totals.counters = totals.counters.zip_with(&i.counters, u64::saturating_add);
            totals.interfaces = totals.interfaces.saturating_add(1);
        }
        totals
    }
}

/// Which interfaces [`Snapshot::totals`] and [`NetworkSampler`](crate::NetworkSampler) count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TotalsOptions {
    /// Count the loopback device too. Default `false`: traffic a step sends
    /// to itself over `lo` never leaves the step, and BuildKit (which reads
    /// the host end of the veth) cannot see it either.
    pub include_loopback: bool,
}

/// Counters summed over the selected interfaces of one [`Snapshot`].
///
/// Sums saturate at `u64::MAX` (16 EiB; unreachable in practice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Totals {
    /// Column-wise sums.
    pub counters: DevCounters,
    /// How many interfaces were summed.
    pub interfaces: usize,
}
