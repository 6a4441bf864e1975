//! What a step's sources ([`stepmon_model::source`]: where each number of
//! a run came from) imply for its numbers.

use stepmon_model::source::{Bound, Group};

/// Whether `step`'s numbers of `group` are a lower bound.
#[must_use]
pub fn is_lower_bound(step: &crate::Step, group: Group) -> bool {
    step.sources.get(group).is_some_and(|s| s.bound == Bound::LowerBound)
}
