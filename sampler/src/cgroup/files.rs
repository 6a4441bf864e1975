//! The cgroup files a step sample reads, what each belongs to, and since
//! when and under which settings the kernel creates each.

use core::fmt;

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

    /// The first release whose cgroup v2 has the controller.
    pub(crate) fn since(self) -> Version {
        match self {
            Controller::Cpu => CPU_CONTROLLER,
            Controller::Memory | Controller::Io | Controller::Pids => CGROUP_V2,
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

/// A Linux release, as the "since" of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Version {
    major: u8,
    minor: u8,
}

impl Version {
    pub(crate) const fn new(major: u8, minor: u8) -> Version {
        Version { major, minor }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// cgroup v2 left development in Linux 4.5 with `cgroup.controllers`,
/// `cgroup.events` and the memory, io and pids controllers
/// (<https://kernelnewbies.org/Linux_4.5>).
pub(crate) const CGROUP_V2: Version = Version::new(4, 5);
/// The cpu controller came to cgroup v2 in Linux 4.15
/// (<https://kernelnewbies.org/Linux_4.15>).
const CPU_CONTROLLER: Version = Version::new(4, 15);
/// Pressure stall information, with the cgroup `*.pressure` files, came in
/// Linux 4.20 (<https://kernelnewbies.org/Linux_4.20>).
const PSI: Version = Version::new(4, 20);

/// Since which release the kernel creates a file: in a non-root cgroup,
/// and at the root when that came later.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Since {
    pub(crate) version: Version,
    pub(crate) root: Option<Version>,
}

impl Since {
    const fn new(version: Version) -> Since {
        Since { version, root: None }
    }

    const fn with_root(version: Version, root: Version) -> Since {
        Since { version, root: Some(root) }
    }

    /// The release for a non-root cgroup, or for the root.
    pub(crate) fn at(self, is_root: bool) -> Version {
        match self.root {
            Some(root) if is_root => root,
            _ => self.version,
        }
    }
}

impl fmt::Display for Since {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.root {
            Some(root) => write!(f, "{} (root: {root})", self.version),
            None => write!(f, "{}", self.version),
        }
    }
}

/// A setting besides the kernel's release that decides whether a file
/// exists. The files that need the same setting come and go together, so
/// one of them present shows the setting is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gate {
    /// PSI (`CONFIG_PSI`, `psi=1`, `cgroup.pressure`): writing 0 to
    /// `cgroup.pressure` hides every `*.pressure` file of the cgroup at once
    /// (`cgroup_pressure_write` in kernel/cgroup/cgroup.c), and without PSI
    /// none is created.
    Psi,
    /// Swap accounting: `memory.swap.current` and `memory.swap.peak` are
    /// both of mm/memcontrol.c's `swap_files`, added together or not at all.
    SwapAccounting,
    /// `CONFIG_IRQ_TIME_ACCOUNTING`, which only `irq.pressure` needs.
    IrqTimeAccounting,
}

impl Gate {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Gate::Psi => "pressure stall information",
            Gate::SwapAccounting => "swap accounting",
            Gate::IrqTimeAccounting => "IRQ time accounting",
        }
    }
}

/// What an absent file means beyond "controller not enabled".
#[derive(Debug, Clone, Copy)]
pub(crate) enum Requirement {
    /// Core file of every cgroup (since the given release).
    Core(Since),
    /// PSI (`CONFIG_PSI`, `psi=1`, `cgroup.pressure`).
    Psi,
    /// Needs a kernel at least this new once the controller is enabled.
    Kernel(Version),
    /// Created with the controller whenever it is enabled, on every kernel
    /// whose cgroup v2 has the controller (since the given release).
    WithController(Since),
    /// Needs a kernel feature (and a release at least this new).
    Feature(&'static str, Version),
}

impl Requirement {
    /// The first release that creates the file (where its controller is
    /// enabled and its [`Gate`]s are on).
    pub(crate) fn since(self) -> Since {
        match self {
            Requirement::Core(since) | Requirement::WithController(since) => since,
            Requirement::Psi => Since::new(PSI),
            Requirement::Kernel(version) | Requirement::Feature(_, version) => Since::new(version),
        }
    }
}

pub(crate) struct FileInfo {
    pub(crate) name: &'static str,
    /// JSON path of the field this file fills.
    pub(crate) field: &'static str,
    pub(crate) controller: Option<Controller>,
    pub(crate) requirement: Requirement,
    /// Absent on the root cgroup.
    pub(crate) not_on_root: bool,
    /// The settings the file needs besides the release.
    pub(crate) gates: &'static [Gate],
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

    /// The file whose name is `name`, if the probe reads one of that name.
    pub(crate) fn named(name: &[u8]) -> Option<CgroupFile> {
        CgroupFile::ALL.into_iter().find(|file| file.info().name.as_bytes() == name)
    }

    pub(crate) fn info(self) -> FileInfo {
        use Controller::{Cpu, Io, Memory, Pids};
        use Requirement::{Core, Feature, Kernel, Psi, WithController};
        const V: fn(u8, u8) -> Version = Version::new;
        const PSI_GATE: &[Gate] = &[Gate::Psi];
        const SWAP_GATE: &[Gate] = &[Gate::SwapAccounting];
        let with_memory = WithController(Since::new(CGROUP_V2));
        let with_pids = WithController(Since::new(CGROUP_V2));
        let (name, field, controller, requirement, not_on_root, gates): (_, _, _, _, _, &'static [Gate]) = match self {
            CgroupFile::CpuStat => {
                ("cpu.stat", "cpuStat", None, Core(Since::with_root(CPU_CONTROLLER, V(5, 8))), false, &[])
            }
            CgroupFile::CpuPressure => ("cpu.pressure", "cpuStat.pressure", None, Psi, false, PSI_GATE),
            CgroupFile::CpuMax => {
                ("cpu.max", "stepmon.cpuMaxQuotaUsec", Some(Cpu), WithController(Since::new(CPU_CONTROLLER)), true, &[])
            }
            CgroupFile::MemoryStat => (
                "memory.stat",
                "memoryStat",
                Some(Memory),
                WithController(Since::with_root(CGROUP_V2, V(6, 0))),
                false,
                &[],
            ),
            CgroupFile::MemoryEvents => ("memory.events", "stepmon.memoryEvents", Some(Memory), with_memory, true, &[]),
            CgroupFile::MemoryPeak => ("memory.peak", "memoryStat.peak", Some(Memory), Kernel(V(5, 19)), true, &[]),
            CgroupFile::MemoryCurrent => {
                ("memory.current", "stepmon.memoryCurrent", Some(Memory), with_memory, true, &[])
            }
            CgroupFile::MemorySwapCurrent => (
                "memory.swap.current",
                "memoryStat.swapBytes",
                Some(Memory),
                Feature("swap accounting (CONFIG_SWAP, swapaccount)", CGROUP_V2),
                true,
                SWAP_GATE,
            ),
            CgroupFile::MemorySwapPeak => {
                ("memory.swap.peak", "stepmon.memorySwapPeak", Some(Memory), Kernel(V(6, 5)), true, SWAP_GATE)
            }
            CgroupFile::MemoryMax => ("memory.max", "stepmon.memoryMax", Some(Memory), with_memory, true, &[]),
            CgroupFile::MemoryHigh => ("memory.high", "stepmon.memoryHigh", Some(Memory), with_memory, true, &[]),
            CgroupFile::MemoryPressure => ("memory.pressure", "memoryStat.pressure", None, Psi, false, PSI_GATE),
            // io.stat is the io controller's own file (block/blk-cgroup.c):
            // with io enabled it exists; at the root since 5.9.
            CgroupFile::IoStat => {
                ("io.stat", "ioStat", Some(Io), WithController(Since::with_root(CGROUP_V2, V(5, 9))), false, &[])
            }
            CgroupFile::IoPressure => ("io.pressure", "ioStat.pressure", None, Psi, false, PSI_GATE),
            CgroupFile::PidsCurrent => ("pids.current", "pidsStat.current", Some(Pids), with_pids, true, &[]),
            CgroupFile::PidsPeak => ("pids.peak", "stepmon.pidsPeak", Some(Pids), Kernel(V(6, 1)), true, &[]),
            CgroupFile::PidsMax => ("pids.max", "stepmon.pidsMax", Some(Pids), with_pids, true, &[]),
            CgroupFile::IrqPressure => (
                "irq.pressure",
                "stepmon.irqPressure",
                None,
                Feature("Linux 6.1+ with CONFIG_IRQ_TIME_ACCOUNTING", V(6, 1)),
                false,
                &[Gate::Psi, Gate::IrqTimeAccounting],
            ),
            CgroupFile::CgroupEvents => {
                ("cgroup.events", "stepmon.populated", None, Core(Since::new(CGROUP_V2)), true, &[])
            }
        };
        FileInfo { name, field, controller, requirement, not_on_root, gates }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_the_position_in_all() {
        for (position, file) in CgroupFile::ALL.iter().enumerate() {
            assert_eq!(file.index(), position, "{file:?}");
            assert_eq!(CgroupFile::named(file.info().name.as_bytes()), Some(*file));
        }
        assert_eq!(CgroupFile::named(b"cgroup.controllers"), None);
    }

    #[test]
    fn releases_print_as_the_kernel_numbers_them() {
        assert_eq!(CgroupFile::CpuStat.info().requirement.since().to_string(), "4.15 (root: 5.8)");
        assert_eq!(CgroupFile::MemoryPeak.info().requirement.since().to_string(), "5.19");
        assert!(Version::new(4, 20) > Version::new(4, 5) && Version::new(5, 0) > Version::new(4, 20));
        assert_eq!(CgroupFile::IoStat.info().requirement.since().at(true), Version::new(5, 9));
        assert_eq!(CgroupFile::IoStat.info().requirement.since().at(false), CGROUP_V2);
    }
}
