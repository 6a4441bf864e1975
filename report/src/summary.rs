//! The numbers a person reads first: [`stepmon_model::summary`]'s, which
//! the runner fills as the step ends; re-exported where report's users
//! found them.

pub use stepmon_model::summary::{Baseline, of, with_baseline};
