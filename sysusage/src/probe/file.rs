//! The procfs files a reading consists of.

/// One of the files [`SysProbe`](super::SysProbe) reads, relative to the procfs root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProcFile {
    /// `stat`: CPU times, counters.
    Stat,
    /// `meminfo`.
    Meminfo,
    /// `loadavg`.
    Loadavg,
    /// `pressure/cpu`.
    PressureCpu,
    /// `pressure/memory`.
    PressureMemory,
    /// `pressure/io`.
    PressureIo,
    /// `pressure/irq` (6.1+, `CONFIG_IRQ_TIME_ACCOUNTING`).
    PressureIrq,
}

impl ProcFile {
    /// Every file, in reading order.
    pub const ALL: [ProcFile; 7] = [
        ProcFile::Stat,
        ProcFile::Meminfo,
        ProcFile::Loadavg,
        ProcFile::PressureCpu,
        ProcFile::PressureMemory,
        ProcFile::PressureIo,
        ProcFile::PressureIrq,
    ];

    /// Path relative to the procfs root.
    #[must_use]
    pub fn path(self) -> &'static str {
        match self {
            ProcFile::Stat => "stat",
            ProcFile::Meminfo => "meminfo",
            ProcFile::Loadavg => "loadavg",
            ProcFile::PressureCpu => "pressure/cpu",
            ProcFile::PressureMemory => "pressure/memory",
            ProcFile::PressureIo => "pressure/io",
            ProcFile::PressureIrq => "pressure/irq",
        }
    }

    /// The [`SysReading`](super::SysReading) part it fills, as named in [`Missing`](stepmon_model::missing::Missing).
    #[must_use]
    pub fn field(self) -> &'static str {
        match self {
            ProcFile::Stat => "stat",
            ProcFile::Meminfo => "meminfo",
            ProcFile::Loadavg => "loadavg",
            ProcFile::PressureCpu => "cpuPressure",
            ProcFile::PressureMemory => "memoryPressure",
            ProcFile::PressureIo => "ioPressure",
            ProcFile::PressureIrq => "irqPressure",
        }
    }

    /// Index into per-file arrays (of the Linux-only probe).
    #[cfg(target_os = "linux")]
    pub(crate) fn index(self) -> usize {
        match self {
            ProcFile::Stat => 0,
            ProcFile::Meminfo => 1,
            ProcFile::Loadavg => 2,
            ProcFile::PressureCpu => 3,
            ProcFile::PressureMemory => 4,
            ProcFile::PressureIo => 5,
            ProcFile::PressureIrq => 6,
        }
    }
}
