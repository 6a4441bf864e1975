//! The conversion of parsed cgroup values into the JSON data model of step
//! samples (BuildKit's `Sample` and stepmon's additions), whose types are
//! [`stepmon_model::sample`]'s.

use stepmon_model::sample::{Device, LimitJson, MaxToken};

/// A limit as the cgroup file gives it (`max` or a number), in the JSON shape.
#[must_use]
pub fn limit_json(limit: stepmon_cgroupfs_parse::Limit) -> LimitJson {
    match limit {
        stepmon_cgroupfs_parse::Limit::Max => LimitJson::Max(MaxToken::Max),
        stepmon_cgroupfs_parse::Limit::Value(v) => LimitJson::Value(v),
    }
}

/// A block device number as `io.stat` names it, in the JSON shape.
#[must_use]
pub fn device(id: stepmon_cgroupfs_parse::DeviceId) -> Device {
    Device { major: id.major, minor: id.minor }
}
