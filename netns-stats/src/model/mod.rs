//! Owned readings and BuildKit's `NetworkSample` (feature `std`).
//!
//! * [`Snapshot`]: every interface of one reading, owned.
//! * [`Totals`]: the counters of the selected interfaces summed; loopback
//!   is left out unless [`TotalsOptions::include_loopback`].
//! * [`NetworkSampler`]: turns successive snapshots into a
//!   [`NetworkSample`](stepmon_model::network::NetworkSample) relative to the first one, surviving interfaces that
//!   appear, vanish or are recreated.

mod sample;
mod sampler;
mod snapshot;

pub use sample::sample_of_delta;
pub use sampler::{NetworkSampler, SampleOutcome};
pub use snapshot::{InterfaceCounters, Snapshot, Totals, TotalsOptions};
