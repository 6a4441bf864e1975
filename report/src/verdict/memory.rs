//! Memory: OOM kills, limit hits, peak against the limit, what the peak was made of.

use stepmon_model::sample::LimitJson;

use super::pct;
use crate::step::Step;
use stepmon_model::verdict::{MemoryOutcome, MemoryVerdict, Thresholds};

/// Sizes as the summary prints them (one unit and precision rule for both).
fn mib(bytes: u64) -> String {
    crate::units::bytes(bytes)
}

/// Judges `step`.
#[must_use]
#[allow(clippy::cast_precision_loss)]
pub(crate) fn judge(step: &Step, thresholds: &Thresholds) -> MemoryVerdict {
    let m = &step.summary.memory;
    let limit_bytes = step.usage.resource_usage.samples.iter().rev().find_map(|s| match s.stepmon.memory_max? {
        LimitJson::Value(v) => Some(v),
        LimitJson::Max(_) => None,
    });
    let peak_share_of_limit = m.peak_bytes.zip(limit_bytes.filter(|l| *l > 0)).map(|(p, l)| p as f64 / l as f64);
    let parts = m.anon_at_peak_bytes.unwrap_or(0).saturating_add(m.file_at_peak_bytes.unwrap_or(0));
    let share = |v: Option<u64>| v.filter(|_| parts > 0).map(|v| v as f64 / parts as f64);
    let (anon_share, file_share) = (share(m.anon_at_peak_bytes), share(m.file_at_peak_bytes));
    let peak = m.peak_bytes.map(|p| {
        let limit = limit_bytes.map_or_else(String::new, |l| format!(" of a {} limit", mib(l)));
        format!("peak {}{limit}", mib(p))
    });
    let split = anon_share
        .zip(file_share)
        .map(|(a, f)| format!("largest sample {}: {} anonymous, {} page cache", mib(parts), pct(a), pct(f)));
    let peak_process = step.largest_process.clone();
    let largest = peak_process.as_ref().map(|p| {
        let label = p.label.as_ref().map_or_else(String::new, |l| format!(", {l}"));
        format!("largest process {} (pid {}{label}) {}", p.command, p.pid, mib(p.peak_rss_bytes))
    });
    let details = [peak, split, largest.clone()].into_iter().flatten().collect::<Vec<_>>().join(", ");
    let details = if details.is_empty() { String::new() } else { format!(" ({details})") };
    let kills = m.oom_kills.unwrap_or(0).saturating_add(m.oom_group_kills.unwrap_or(0));
    let known = m.peak_bytes.is_some() || m.oom_kills.is_some() || m.anon_at_peak_bytes.is_some();
    let (class, reason) = if kills > 0 {
        let group = m.oom_group_kills.filter(|g| *g > 0).map_or_else(String::new, |g| format!(", {g} group kills"));
        (
            MemoryOutcome::OomKilled,
            format!(
                "OOM-killed: the kernel killed {} process(es) of the step{group}{details}",
                m.oom_kills.unwrap_or(0)
            ),
        )
    } else if m.max_hits.unwrap_or(0) > 0 || m.high_hits.unwrap_or(0) > 0 {
        (
            MemoryOutcome::HitLimit,
            format!(
                "memory limit hit: memory.max {} times, memory.high {} times{details}",
                m.max_hits.unwrap_or(0),
                m.high_hits.unwrap_or(0)
            ),
        )
    } else if let Some(share) = peak_share_of_limit.filter(|s| *s >= thresholds.near_limit_share) {
        (
            MemoryOutcome::NearLimit,
            format!("near the memory limit: the peak reached {} of memory.max{details}", pct(share)),
        )
    } else if known {
        (MemoryOutcome::Ok, format!("memory ok: no OOM kill, no limit hit{details}"))
    } else {
        let largest = largest.map_or_else(String::new, |l| format!("; {l}"));
        (MemoryOutcome::Unknown, format!("memory not measured: no memory controller for the step{largest}"))
    };
    MemoryVerdict {
        class,
        oom_kills: m.oom_kills,
        oom_group_kills: m.oom_group_kills,
        max_hits: m.max_hits,
        high_hits: m.high_hits,
        peak_bytes: m.peak_bytes,
        limit_bytes,
        peak_share_of_limit,
        anon_share,
        file_share,
        peak_process,
        reason,
    }
}
