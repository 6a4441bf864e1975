//! A step's events ([`stepmon_model::event`]: `stepmon.events` of a run
//! document, the `stepEvent` lines of a job record) in words, each at its
//! time into the step, for every view's timeline.
//!
//! ```
//! use stepmon_model::event::{MemoryBound, MemoryNearLimit, StepEvent};
//! use stepmon_report::event::describe;
//!
//! let mut memory = MemoryNearLimit::new(
//!     MemoryBound::OwnLimit,
//!     "/sys/fs/cgroup/stepmon-run.1.2/memory.max".into(),
//!     200 << 20,
//!     184 << 20,
//!     0.9,
//! );
//! memory.trend_bytes_per_second = Some(20.0 * 1048576.0);
//! let event = StepEvent::memory_near_limit("2026-12-04T10:00:12.3Z".parse()?, 12.3, memory);
//! assert_eq!(
//!     describe(&event, None),
//!     "memory 92.0% of memory.max (184.0 MiB of 200.0 MiB, growing 20.0 MiB/s) at 12.30 s"
//! );
//! # Ok::<(), jiff::Error>(())
//! ```

use jiff::Timestamp;
use stepmon_model::event::{EventKind, MemoryBound, StepEvent};

use crate::step::Step;
use crate::units::{bytes, percent, seconds};

/// Seconds from the step's start to `event`: as the event says, else from
/// `start` (the step's start); `None` when neither is known.
#[must_use]
pub fn seconds_into(event: &StepEvent, start: Option<Timestamp>) -> Option<f64> {
    event.elapsed_seconds.or_else(|| start.map(|s| event.at.duration_since(s).as_secs_f64()))
}

/// What bounded the memory, as short as it can be said: the step's own
/// limit by its file's name (`memory.max`), an enclosing cgroup's by its
/// limit file's path, the machine's available memory in words.
fn bound(bound: MemoryBound, file: &str) -> String {
    match bound {
        MemoryBound::OwnLimit => file.rsplit('/').next().unwrap_or(file).to_owned(),
        // The bound is the step's usage plus that cgroup's headroom.
        MemoryBound::EnclosingLimit => format!("what {file} leaves it"),
        _ => bound.describe().to_owned(),
    }
}

/// `event` in words, at its time into the step (`start`: the step's start,
/// for an event that does not say).
#[must_use]
pub fn describe(event: &StepEvent, start: Option<Timestamp>) -> String {
    let when = seconds_into(event, start).map_or_else(|| format!("at {}", event.at), |s| format!("at {}", seconds(s)));
    match (event.kind, &event.memory) {
        (EventKind::MemoryNearLimit, Some(m)) => {
            let trend = match m.trend_bytes_per_second {
                Some(rate) if rate > 0.0 => format!(", growing {}/s", rate_bytes(rate)),
                Some(rate) if rate < 0.0 => format!(", shrinking {}/s", rate_bytes(-rate)),
                _ => String::new(),
            };
            format!(
                "memory {} of {} ({} of {}{trend}) {when}",
                percent(m.share),
                bound(m.bound, &m.file),
                bytes(m.usage_bytes),
                bytes(m.limit_bytes)
            )
        }
        (EventKind::MemoryNearLimit, None) => format!("memory near its limit {when}"),
        _ => format!("an event of a kind this stepmon does not know {when}"),
    }
}

/// A rate of bytes a second, in the units of [`bytes`].
fn rate_bytes(bytes_per_second: f64) -> String {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // rounded, ≥ 0
    let whole = bytes_per_second.max(0.0).round() as u64;
    bytes(whole)
}

/// The kind of `event` in a few words (a trace event's name, a marker's).
#[must_use]
pub fn name(event: &StepEvent) -> &'static str {
    match event.kind {
        EventKind::MemoryNearLimit => "memory near its limit",
        _ => "event",
    }
}

/// An event of a step, placed on the step's time axis.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Placed<'a> {
    /// The event.
    pub event: &'a StepEvent,
    /// Seconds from [`Step::time_origin`] (where its charts' and trace's
    /// time starts) to it; `None` when the step has no time origin.
    pub offset_seconds: Option<f64>,
    /// It in words ([`describe`]).
    pub words: String,
}

/// The events of `step`, in time order, placed on its time axis.
#[must_use]
pub fn of_step(step: &Step) -> Vec<Placed<'_>> {
    let Some(run) = &step.run else { return Vec::new() };
    let mut events: Vec<&StepEvent> = run.events.iter().collect();
    events.sort_by_key(|e| e.at);
    let origin = step.time_origin();
    events
        .into_iter()
        .map(|event| Placed {
            event,
            offset_seconds: origin.map(|o| event.at.duration_since(o).as_secs_f64()),
            words: describe(event, step.start),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use stepmon_model::event::MemoryNearLimit;

    fn event(json: &str) -> StepEvent {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn each_bound_and_kind_in_words_at_its_time() {
        let start: Timestamp = "2026-12-04T10:00:00Z".parse().unwrap();
        let mut memory =
            MemoryNearLimit::new(MemoryBound::Machine, "/proc/meminfo".into(), 8 << 30, 7_730_941_133, 0.9);
        memory.trend_bytes_per_second = Some(-1_048_576.0);
        let mut machine = StepEvent::memory_near_limit("2026-12-04T10:01:05Z".parse().unwrap(), 65.0, memory);
        assert_eq!(
            describe(&machine, Some(start)),
            "memory 90.0% of the machine's available memory (7.2 GiB of 8.0 GiB, shrinking 1.0 MiB/s) at 1m5.0s"
        );
        // Without its own elapsed time: from the step's start, else the time.
        machine.elapsed_seconds = None;
        assert!(describe(&machine, Some(start)).ends_with(" at 1m5.0s"), "{}", describe(&machine, Some(start)));
        assert!(describe(&machine, None).ends_with(" at 2026-12-04T10:01:05Z"), "{}", describe(&machine, None));
        let enclosing = MemoryNearLimit::new(
            MemoryBound::EnclosingLimit,
            "/sys/fs/cgroup/ci.slice/memory.max".into(),
            1 << 30,
            1 << 30,
            0.9,
        );
        let enclosing = StepEvent::memory_near_limit(start, 0.25, enclosing);
        assert_eq!(
            describe(&enclosing, None),
            "memory 100.0% of what /sys/fs/cgroup/ci.slice/memory.max leaves it (1.0 GiB of 1.0 GiB) at 250.0 ms"
        );
        let newer = event(r#"{"at": "2026-12-04T10:00:03Z", "kind": "diskFull"}"#);
        assert_eq!(describe(&newer, Some(start)), "an event of a kind this stepmon does not know at 3.00 s");
    }
}
