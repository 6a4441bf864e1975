//! The cgroup files a step sample reads, what each belongs to, and why one
//! can be absent.

use crate::model::{Missing, MissingKind};

/// A controller whose files live in a cgroup only when it is enabled there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Controller {
    Cpu,
    Memory,
    Io,
    Pids,
}

impl Controller {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Controller::Cpu => "cpu",
            Controller::Memory => "memory",
            Controller::Io => "io",
            Controller::Pids => "pids",
        }
    }

    /// The sample object that holds this controller's BuildKit fields.
    pub(crate) fn object(self) -> &'static str {
        match self {
            Controller::Cpu => "cpuStat",
            Controller::Memory => "memoryStat",
            Controller::Io => "ioStat",
            Controller::Pids => "pidsStat",
        }
    }
}

/// Every file of a step sample, in read order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CgroupFile {
    CpuStat,
    CpuPressure,
    CpuMax,
    MemoryStat,
    MemoryEvents,
    MemoryPeak,
    MemoryCurrent,
    MemorySwapCurrent,
    MemorySwapPeak,
    MemoryMax,
    MemoryHigh,
    MemoryPressure,
    IoStat,
    IoPressure,
    PidsCurrent,
    PidsPeak,
    PidsMax,
    IrqPressure,
    CgroupEvents,
}

/// What an absent file means beyond "controller not enabled".
#[derive(Debug, Clone, Copy)]
pub(crate) enum Requirement {
    /// Core file of every cgroup (since the given version).
    Core(&'static str),
    /// PSI (`CONFIG_PSI`, `psi=1`, `cgroup.pressure`).
    Psi,
    /// Needs a kernel at least this new once the controller is enabled.
    Kernel(&'static str),
    /// Created with the controller whenever it is enabled, on every kernel
    /// whose cgroup v2 has the controller (since the given version): absent
    /// with another of the controller's files present is no old kernel.
    WithController(&'static str),
    /// Needs a kernel feature once the controller is enabled.
    Feature(&'static str),
}

pub(crate) struct FileInfo {
    pub(crate) name: &'static str,
    /// JSON path of the field this file fills.
    pub(crate) field: &'static str,
    pub(crate) controller: Option<Controller>,
    pub(crate) requirement: Requirement,
    /// Absent on the root cgroup.
    pub(crate) not_on_root: bool,
}

impl CgroupFile {
    pub(crate) const ALL: [CgroupFile; 19] = [
        CgroupFile::CpuStat,
        CgroupFile::CpuPressure,
        CgroupFile::CpuMax,
        CgroupFile::MemoryStat,
        CgroupFile::MemoryEvents,
        CgroupFile::MemoryPeak,
        CgroupFile::MemoryCurrent,
        CgroupFile::MemorySwapCurrent,
        CgroupFile::MemorySwapPeak,
        CgroupFile::MemoryMax,
        CgroupFile::MemoryHigh,
        CgroupFile::MemoryPressure,
        CgroupFile::IoStat,
        CgroupFile::IoPressure,
        CgroupFile::PidsCurrent,
        CgroupFile::PidsPeak,
        CgroupFile::PidsMax,
        CgroupFile::IrqPressure,
        CgroupFile::CgroupEvents,
    ];

    /// Position in [`CgroupFile::ALL`] (the declaration order, checked by a test).
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    pub(crate) fn info(self) -> FileInfo {
        use Controller::{Cpu, Io, Memory, Pids};
        use Requirement::{Core, Feature, Kernel, Psi, WithController};
        let (name, field, controller, requirement, not_on_root) = match self {
            CgroupFile::CpuStat => ("cpu.stat", "cpuStat", None, Core("4.15 (root: 5.8)"), false),
            CgroupFile::CpuPressure => ("cpu.pressure", "cpuStat.pressure", None, Psi, false),
            CgroupFile::CpuMax => ("cpu.max", "stepmon.cpuMaxQuotaUsec", Some(Cpu), WithController("4.15"), true),
            CgroupFile::MemoryStat => {
                ("memory.stat", "memoryStat", Some(Memory), WithController("4.5 (root: 6.0)"), false)
            }
            CgroupFile::MemoryEvents => {
                ("memory.events", "stepmon.memoryEvents", Some(Memory), WithController("4.5"), true)
            }
            CgroupFile::MemoryPeak => ("memory.peak", "memoryStat.peak", Some(Memory), Kernel("5.19"), true),
            CgroupFile::MemoryCurrent => {
                ("memory.current", "stepmon.memoryCurrent", Some(Memory), WithController("4.5"), true)
            }
            CgroupFile::MemorySwapCurrent => (
                "memory.swap.current",
                "memoryStat.swapBytes",
                Some(Memory),
                Feature("swap accounting (CONFIG_SWAP, swapaccount)"),
                true,
            ),
            CgroupFile::MemorySwapPeak => {
                ("memory.swap.peak", "stepmon.memorySwapPeak", Some(Memory), Kernel("6.5"), true)
            }
            CgroupFile::MemoryMax => ("memory.max", "stepmon.memoryMax", Some(Memory), WithController("4.5"), true),
            CgroupFile::MemoryHigh => ("memory.high", "stepmon.memoryHigh", Some(Memory), WithController("4.5"), true),
            CgroupFile::MemoryPressure => ("memory.pressure", "memoryStat.pressure", None, Psi, false),
            CgroupFile::IoStat => ("io.stat", "ioStat", Some(Io), Feature("CONFIG_BLK_CGROUP (root: 5.9)"), false),
            CgroupFile::IoPressure => ("io.pressure", "ioStat.pressure", None, Psi, false),
            CgroupFile::PidsCurrent => ("pids.current", "pidsStat.current", Some(Pids), WithController("4.5"), true),
            CgroupFile::PidsPeak => ("pids.peak", "stepmon.pidsPeak", Some(Pids), Kernel("6.1"), true),
            CgroupFile::PidsMax => ("pids.max", "stepmon.pidsMax", Some(Pids), WithController("4.5"), true),
            CgroupFile::IrqPressure => (
                "irq.pressure",
                "stepmon.irqPressure",
                None,
                Feature("Linux 6.1+ with CONFIG_IRQ_TIME_ACCOUNTING"),
                false,
            ),
            CgroupFile::CgroupEvents => ("cgroup.events", "stepmon.populated", None, Core("4.5"), true),
        };
        FileInfo { name, field, controller, requirement, not_on_root }
    }
}

/// Where the probe stands: which controllers the cgroup has, which are
/// bound to cgroup v1 on this host, whether it is the root.
#[derive(Debug, Clone, Default)]
pub(crate) struct Context {
    /// The cgroup's `cgroup.controllers` (enabled for it by its parent).
    pub(crate) enabled: Vec<String>,
    /// Controllers bound to a v1 hierarchy (`/proc/cgroups` hierarchy ≠ 0).
    pub(crate) on_v1: Vec<String>,
    pub(crate) is_root: bool,
    /// Per controller, the first of its files that could be opened, if any:
    /// proof that the kernel has the controller in cgroup v2 here.
    pub(crate) present: Vec<(Controller, &'static str)>,
}

impl Context {
    fn has(&self, controller: Controller) -> bool {
        self.enabled.iter().any(|c| c == controller.name())
    }

    /// The entry for a file that does not exist: the field to report, the
    /// file that tells, why.
    pub(crate) fn absent(&self, file: CgroupFile) -> Missing {
        let (field, source, kind, reason) = self.why_absent(file);
        Missing::new(field, source, kind, reason)
    }

    fn why_absent(&self, file: CgroupFile) -> (&'static str, &'static str, MissingKind, String) {
        let info = file.info();
        if let Some(controller) = info.controller
            && !self.has(controller)
        {
            let name = controller.name();
            // Without the cpu controller cpu.stat still exists (core keys);
            // only the cpu-controller fields are absent, so name those.
            let object = if controller == Controller::Cpu { info.field } else { controller.object() };
            return if self.on_v1.iter().any(|c| c == name) {
                (
                    object,
                    "cgroup.controllers",
                    MissingKind::ControllerOnCgroupV1,
                    format!(
                        "the {name} controller is bound to a cgroup v1 hierarchy on this host (hybrid layout), so cgroup v2 cannot account it"
                    ),
                )
            } else {
                (
                    object,
                    "cgroup.controllers",
                    MissingKind::ControllerNotEnabled,
                    format!(
                        "the {name} controller is not enabled for this cgroup (add +{name} to the parent's cgroup.subtree_control)"
                    ),
                )
            };
        }
        if self.is_root && info.not_on_root {
            return (
                info.field,
                info.name,
                MissingKind::NotOnRootCgroup,
                format!("{} does not exist on the root cgroup", info.name),
            );
        }
        if let Requirement::WithController(_) = info.requirement
            && let Some(controller) = info.controller
            && let Some(&(_, present)) = self.present.iter().find(|(c, _)| *c == controller)
        {
            return (
                info.field,
                info.name,
                MissingKind::NotFound,
                format!(
                    "{} does not exist although {present} does: the kernel creates {} in every cgroup with the {} controller, so this directory is not as the kernel made it (a copy, or files removed)",
                    info.name,
                    info.name,
                    controller.name()
                ),
            );
        }
        match info.requirement {
            Requirement::Psi => (
                info.field,
                info.name,
                MissingKind::PsiDisabled,
                format!(
                    "{} is absent: pressure stall information is disabled (CONFIG_PSI, boot with psi=1, or cgroup.pressure is 0)",
                    info.name
                ),
            ),
            Requirement::Kernel(version) | Requirement::WithController(version) => (
                info.field,
                info.name,
                MissingKind::KernelTooOld,
                format!("{} needs Linux {version} or newer", info.name),
            ),
            Requirement::Feature(feature) => {
                (info.field, info.name, MissingKind::KernelFeatureMissing, format!("{} needs {feature}", info.name))
            }
            Requirement::Core(version) => (
                info.field,
                info.name,
                MissingKind::KernelTooOld,
                format!("{} is absent (a core cgroup file since Linux {version})", info.name),
            ),
        }
    }
}

impl Context {
    /// The entries for a `cpu.stat` without the bandwidth keys (`nr_periods`,
    /// `nr_throttled`, `throttled_usec`): the cpu controller is bound to v1
    /// or not enabled, or the kernel lacks `CONFIG_CFS_BANDWIDTH`.
    pub(crate) fn cpu_bandwidth_absent(&self) -> [Missing; 3] {
        let cpu_enabled = self.has(Controller::Cpu);
        let (kind, reason) = if self.on_v1.iter().any(|c| c == "cpu") && !cpu_enabled {
            (
                MissingKind::ControllerOnCgroupV1,
                "the cpu controller is bound to a cgroup v1 hierarchy on this host (hybrid layout); cpu.stat has only the core usage keys",
            )
        } else if !cpu_enabled {
            (
                MissingKind::ControllerNotEnabled,
                "the cpu controller is not enabled for this cgroup; cpu.stat has only the core usage keys",
            )
        } else {
            (MissingKind::KernelFeatureMissing, "cpu.stat has no bandwidth keys (CONFIG_CFS_BANDWIDTH)")
        };
        ["cpuStat.nrPeriods", "cpuStat.nrThrottled", "cpuStat.throttledNanos"]
            .map(|field| Missing::new(field, "cpu.stat", kind, reason))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_the_position_in_all() {
        for (position, file) in CgroupFile::ALL.iter().enumerate() {
            assert_eq!(file.index(), position, "{file:?}");
        }
    }

    /// The probe adds an entry made at open without searching the list for
    /// its field unless a read failed (`Reader::note_fixed`): that needs the
    /// cpu bandwidth entries to name fields no file's entry names.
    #[test]
    fn no_file_names_a_cpu_bandwidth_field() {
        let context =
            Context { enabled: Vec::new(), on_v1: vec!["cpu".to_owned()], is_root: false, present: Vec::new() };
        for bandwidth in context.cpu_bandwidth_absent() {
            for file in CgroupFile::ALL {
                let info = file.info();
                let object = info.controller.map(Controller::object);
                assert!(info.field != bandwidth.field && object != Some(&*bandwidth.field), "{file:?}");
                for context in [
                    Context { enabled: Vec::new(), on_v1: Vec::new(), is_root: false, present: Vec::new() },
                    Context { enabled: Vec::new(), on_v1: vec!["cpu".to_owned()], is_root: true, present: Vec::new() },
                ] {
                    assert_ne!(context.absent(file).field, bandwidth.field, "{file:?}");
                }
            }
        }
    }
}
