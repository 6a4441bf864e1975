//! What a reading lacks, and why.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// Why something is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
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
}

/// One part of a reading that is not there.
///
/// `field` names the part: a reading part (`stat`, `meminfo`, `loadavg`,
/// `cpuPressure`, `memoryPressure`, `ioPressure`, `irqPressure`) or a JSON
/// field path (`procStat`, `cpuStat.steal`, ...). `file` is the path below the
/// procfs root (`stat`, `pressure/irq`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Missing {
    /// What is missing.
    pub field: Cow<'static, str>,
    /// The procfs file it comes from, relative to the procfs root.
    pub file: Cow<'static, str>,
    /// Why, as a category.
    pub kind: MissingKind,
    /// Why, for people (the OS error or the parse error with its position).
    pub reason: String,
}

impl Missing {
    /// A new entry.
    #[must_use]
    pub fn new(
        field: impl Into<Cow<'static, str>>,
        file: impl Into<Cow<'static, str>>,
        kind: MissingKind,
        reason: impl Into<String>,
    ) -> Self {
        Missing { field: field.into(), file: file.into(), kind, reason: reason.into() }
    }

    /// The category of an I/O error.
    #[must_use]
    pub fn kind_of(error: &std::io::Error) -> MissingKind {
        if stepmon_fdread::is_gone(error) || error.kind() == std::io::ErrorKind::NotFound {
            MissingKind::NotFound
        } else if stepmon_fdread::is_unsupported(error) {
            MissingKind::NotSupported
        } else {
            MissingKind::Io
        }
    }
}
