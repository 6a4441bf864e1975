//! What the step waited for, from its PSI stall time over the whole step.

use serde::{Deserialize, Serialize};

use super::{Thresholds, ThrottlingVerdict, pct};
use crate::step::Step;

/// The resource a step waited for most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Bottleneck {
    /// Tasks of the step waited for CPU for at least the threshold share of
    /// the wall time (more than for memory or IO).
    CpuBound,
    /// ... waited for memory (reclaim, swap-in, refaults).
    MemoryBound,
    /// ... waited for block IO.
    IoBound,
    /// No resource reached the threshold: the step ran as fast as it could.
    NotStalled,
    /// No stall time was measured (PSI off, or no pressure files).
    Unknown,
}

/// What the step waited for: per resource, the share of the wall time in
/// which some task of the step was stalled on it (the `some` line's `total`
/// delta, <https://docs.kernel.org/accounting/psi.html#cgroup2-interface>).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BottleneckVerdict {
    /// The class.
    pub class: Bottleneck,
    /// CPU stall share of the wall time.
    pub cpu_stall_share: Option<f64>,
    /// Memory stall share.
    pub memory_stall_share: Option<f64>,
    /// IO stall share.
    pub io_stall_share: Option<f64>,
    /// Whether the CPU stall is explained by the step's own `cpu.max`: a
    /// throttled task is runnable but not running, which PSI counts as CPU
    /// pressure ([`ThrottlingVerdict`] has the throttled time itself).
    pub cpu_stall_from_own_limit: Option<bool>,
    /// In words.
    pub reason: String,
}

impl BottleneckVerdict {
    /// Judges `step`.
    #[must_use]
    pub fn of(step: &Step, thresholds: &Thresholds, throttling: &ThrottlingVerdict) -> BottleneckVerdict {
        let s = &step.summary;
        let shares = [
            (Bottleneck::CpuBound, "CPU", s.cpu_stall.some_share),
            (Bottleneck::MemoryBound, "memory", s.memory_stall.some_share),
            (Bottleneck::IoBound, "IO", s.io_stall.some_share),
        ];
        let measured: Vec<_> = shares.iter().filter_map(|(c, n, v)| v.map(|v| (*c, *n, v))).collect();
        let worst = measured.iter().copied().max_by(|a, b| a.2.total_cmp(&b.2));
        let cpu_stall_from_own_limit = throttling.throttled;
        let all = measured.iter().map(|(_, n, v)| format!("{n} {}", pct(*v))).collect::<Vec<_>>().join(", ");
        let stalled_seconds = [
            ("CPU", s.cpu_stall.some_seconds),
            ("memory", s.memory_stall.some_seconds),
            ("IO", s.io_stall.some_seconds),
        ]
        .into_iter()
        .filter_map(|(n, v)| Some(format!("{n} {:.2} s", v?)))
        .collect::<Vec<_>>();
        let (class, reason) = match worst {
            None if !stalled_seconds.is_empty() => (
                Bottleneck::Unknown,
                format!(
                    "bottleneck unknown: the step's wall time is unknown, so its stall time ({}) has no share",
                    stalled_seconds.join(", ")
                ),
            ),
            None => {
                (Bottleneck::Unknown, "bottleneck unknown: no stall time (PSI) was measured for the step".to_owned())
            }
            Some((class, name, share)) if share >= thresholds.stall_share => {
                let cause = match (class, cpu_stall_from_own_limit) {
                    (Bottleneck::CpuBound, Some(true)) => "; its own cpu.max throttled it",
                    (Bottleneck::CpuBound, _) => "; other work competed for the CPUs",
                    _ => "",
                };
                (
                    class,
                    format!(
                        "{name}-bound: some task of the step waited for {name} {} of the wall time{cause} (stalled: {all}; threshold {})",
                        pct(share),
                        pct(thresholds.stall_share)
                    ),
                )
            }
            Some(_) => (
                Bottleneck::NotStalled,
                format!(
                    "not stalled: the step waited for no resource {} of the wall time or more (stalled: {all})",
                    pct(thresholds.stall_share)
                ),
            ),
        };
        BottleneckVerdict {
            class,
            cpu_stall_share: s.cpu_stall.some_share,
            memory_stall_share: s.memory_stall.some_share,
            io_stall_share: s.io_stall.some_share,
            cpu_stall_from_own_limit,
            reason,
        }
    }
}
