//! The critical path: the chain of actions that bounded the build's wall
//! time, from their start and end times alone.
//!
//! The method: start from the action that ended last; its predecessor is
//! the action that ended latest at or before it started (within
//! [`SLACK_SECONDS`]: the build tool needs a moment to notice an end and
//! start what waited for it); and so on until no action ended before the
//! one reached. Its limit: without the build tool's dependency graph
//! (cargo's unit graph is not in the record) "ended latest before it
//! started" is the most likely dependency, not a known one — an action
//! that waited for a job slot, not for its input, looks the same. What the
//! chain does not cover (before its first action, between two of them,
//! after its last) is time the build spent outside its actions on that
//! path: cargo itself, build scripts run, linking outside a launcher.

use super::BuildAction;

/// How long after an action's end the next on the chain may start and
/// still count as waiting for it: a build tool's reaction (cargo starts a
/// unit within milliseconds of its dependency's end; the launcher's own
/// start-up comes on top).
pub const SLACK_SECONDS: f64 = 0.02;

/// The chain of actions that bounded the build's wall time.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct CriticalPath {
    /// The actions on it, in time order (indices into the build's actions).
    pub actions: Vec<usize>,
    /// Their wall time summed.
    pub action_seconds: f64,
    /// The time on the path outside its actions: from the build's start to
    /// its first action, between actions, and from its last to the build's
    /// end (when the build's wall time is known).
    pub outside_seconds: f64,
}

/// The critical path of `actions` in a build of `wall` seconds.
#[must_use]
pub fn path(actions: &[BuildAction], wall: Option<f64>) -> CriticalPath {
    let Some(last) = (0..actions.len()).max_by(|a, b| actions[*a].end.total_cmp(&actions[*b].end).then(b.cmp(a)))
    else {
        return CriticalPath { outside_seconds: wall.unwrap_or(0.0), ..CriticalPath::default() };
    };
    // The actions by end: each step back is a search, not a scan of all
    // (a build of 10,000 actions may have a chain of thousands).
    let mut by_end: Vec<usize> = (0..actions.len()).collect();
    by_end.sort_by(|a, b| actions[*a].end.total_cmp(&actions[*b].end).then(a.cmp(b)));
    let mut chain = vec![last];
    let mut at = last;
    while let Some(previous) = before(actions, &by_end, at) {
        chain.push(previous);
        at = previous;
    }
    chain.reverse();
    let action_seconds = chain.iter().map(|&i| actions[i].span()).sum();
    let mut outside = actions[chain[0]].start.max(0.0);
    for pair in chain.windows(2) {
        outside += (actions[pair[1]].start - actions[pair[0]].end).max(0.0);
    }
    if let Some(wall) = wall {
        outside += (wall - actions[last].end).max(0.0);
    }
    CriticalPath { actions: chain, action_seconds, outside_seconds: outside }
}

/// The action the chain steps back to from `at`: among those that started
/// before it and ended by its start (within [`SLACK_SECONDS`]), the latest
/// end; a tie goes to the longer (it held the chain longer), then to the
/// earlier in the job. `by_end`: every action's index, by end.
fn before(actions: &[BuildAction], by_end: &[usize], at: usize) -> Option<usize> {
    let start = actions[at].start;
    let until = by_end.partition_point(|&i| actions[i].end <= start + SLACK_SECONDS);
    let mut best: Option<usize> = None;
    for &i in by_end[..until].iter().rev() {
        if let Some(b) = best
            && actions[i].end < actions[b].end
        {
            break;
        }
        if i == at || actions[i].start >= start {
            continue;
        }
        let better = match best {
            None => true,
            Some(b) => actions[i].span() > actions[b].span() || (actions[i].span() == actions[b].span() && i < b),
        };
        if better {
            best = Some(i);
        }
    }
    best
}
