//! What a reading lacks, and why: the one `missing` entry shape of every
//! stepmon sample (system samples here, step samples in `stepmon-sampler`).

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Why something is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum MissingKind {
    /// The file does not exist (`ENOENT`, or `ENODEV` for a removed cgroup), e.g. `/proc/pressure` without PSI,
    /// `/proc/pressure/irq` without IRQ time accounting.
    NotFound,
    /// The file exists but reading it is not supported (`EOPNOTSUPP`), e.g.
    /// PSI compiled in but disabled (`CONFIG_PSI_DEFAULT_DISABLED` without `psi=1`).
    NotSupported,
    /// Any other I/O error.
    Io,
    /// The file was read but its content could not be parsed.
    Parse,
    /// The file was parsed but lacks this line, key or column on this kernel.
    Absent,
    /// A cgroup controller is not enabled for the cgroup (its parent's
    /// `cgroup.subtree_control` lacks it).
    ControllerNotEnabled,
    /// A cgroup controller is bound to a cgroup v1 hierarchy on this host
    /// (hybrid layout), so cgroup v2 cannot account it.
    ControllerOnCgroupV1,
    /// The running kernel is older than the file or key.
    KernelTooOld,
    /// A kernel build option or boot setting is missing (e.g. swap accounting).
    KernelFeatureMissing,
    /// Pressure stall information is disabled (`CONFIG_PSI`, `psi=1`,
    /// `cgroup.pressure`).
    PsiDisabled,
    /// The file does not exist on the root cgroup.
    NotOnRootCgroup,
    /// The cgroup was removed while being sampled (`ENOENT`/`ENODEV`).
    CgroupRemoved,
    /// Not measured in this configuration (e.g. the network counters of a
    /// step that shares the host's network namespace).
    NotMeasured,
    /// Not supported on this operating system (no cgroup v2, no procfs).
    UnsupportedPlatform,
}

/// One part of a reading that is not there.
///
/// `field` names the part: a reading part (`stat`, `meminfo`, `loadavg`,
/// `cpuPressure`, `memoryPressure`, `ioPressure`, `irqPressure`) or a JSON
/// field path (`procStat`, `cpuStat.steal`, `memoryStat.peak`, ...). `file`
/// is the kernel file it comes from: relative to the procfs root for system
/// samples (`stat`, `pressure/irq`), the cgroup file for step samples
/// (`memory.peak`), empty when no single file is involved.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Missing {
    /// What is missing.
    pub field: Cow<'static, str>,
    /// The kernel file it comes from (see above); may be empty.
    pub file: Cow<'static, str>,
    /// Why, as a category.
    pub kind: MissingKind,
    /// Why, for people (the OS error or the parse error with its position).
    /// Shared: a probe works out the reasons for files absent at open once,
    /// and every sample then repeats them without allocating.
    pub reason: Arc<str>,
}

impl Missing {
    /// A new entry.
    #[must_use]
    pub fn new(
        field: impl Into<Cow<'static, str>>,
        file: impl Into<Cow<'static, str>>,
        kind: MissingKind,
        reason: impl Into<Arc<str>>,
    ) -> Self {
        Missing { field: field.into(), file: file.into(), kind, reason: reason.into() }
    }
}
