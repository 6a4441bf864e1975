//! Why a field is absent: every absent value of a sample comes with one.

use serde::{Deserialize, Serialize};

/// The class of reason, stable for machines to match on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum MissingReason {
    /// The controller is not enabled for this cgroup (its parent's
    /// `cgroup.subtree_control` lacks it).
    ControllerNotEnabled,
    /// The controller is bound to a cgroup v1 hierarchy on this host
    /// (hybrid layout), so cgroup v2 cannot account it.
    ControllerOnCgroupV1,
    /// The running kernel is older than the file or key.
    KernelTooOld,
    /// A kernel build option or boot setting is missing (e.g. swap accounting).
    KernelFeatureMissing,
    /// Pressure stall information is disabled (`CONFIG_PSI`, `psi=1`,
    /// `cgroup.pressure`), or reads fail with `EOPNOTSUPP`.
    PsiDisabled,
    /// The file does not exist on the root cgroup.
    NotOnRootCgroup,
    /// The cgroup was removed (`ENOENT`/`ENODEV`).
    CgroupRemoved,
    /// Reading failed for another reason.
    ReadFailed,
    /// The content did not parse.
    ParseFailed,
    /// Not measured in this configuration (e.g. network counters of a step
    /// that shares the host's network namespace).
    NotMeasured,
    /// Not supported on this operating system.
    UnsupportedPlatform,
}

/// One absent field and why.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Missing {
    /// The JSON path of the absent field, e.g. `memoryStat`,
    /// `memoryStat.peak`, `cpuStat.nrThrottled`, `stepmon.pidsPeak`.
    pub field: String,
    /// The reason class.
    pub reason: MissingReason,
    /// A sentence for humans (file, errno, kernel version needed, hint).
    pub detail: String,
}

impl Missing {
    /// A new entry.
    pub fn new(field: impl Into<String>, reason: MissingReason, detail: impl Into<String>) -> Self {
        Missing { field: field.into(), reason, detail: detail.into() }
    }
}
