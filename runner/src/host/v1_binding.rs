//! Which cgroup v1 hierarchy a controller is bound to (`/proc/cgroups`).

use serde::Serialize;

/// A controller bound to a cgroup v1 hierarchy.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct V1Binding {
    /// The v1 controller name (`blkio` for `io`).
    pub controller: String,
    /// The v1 hierarchy ID.
    pub hierarchy: u32,
}
