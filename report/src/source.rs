//! Where each number of a run came from ([`stepmon_model::source`]'s types,
//! re-exported), and what a step's sources imply for its numbers.

pub use stepmon_model::source::*;

/// Whether `step`'s numbers of `group` are a lower bound.
#[must_use]
pub fn is_lower_bound(step: &crate::Step, group: Group) -> bool {
    step.sources.get(group).is_some_and(|s| s.bound == Bound::LowerBound)
}
