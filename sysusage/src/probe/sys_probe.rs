//! [`SysProbe`]: held file descriptors below a procfs root, re-read with `pread`.

use std::io;
use std::num::NonZeroU64;
use std::path::{Path, PathBuf};

use stepmon_fdread::{Dir, HeldFile};

use super::file::ProcFile;
use super::reading::{StatSnapshot, SysReading};
use crate::parse::{LoadAvg, MemInfo, Pressure};
use stepmon_model::missing::{Missing, MissingKind};

/// USER_HZ when the aux vector does not tell (100 on every mainstream architecture).
pub const DEFAULT_USER_HZ: u64 = 100;

/// How [`SysProbe`] gets the bytes of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ReadStrategy {
    /// Open every file once and re-read it with `pread` from offset 0 on
    /// each reading (the default). A file that failed to open or read is
    /// re-opened on the next reading, except one that a real procfs said is
    /// absent (`ENOENT`, `ENODEV`, `EOPNOTSUPP`) when the probe opened it:
    /// procfs creates its entries at boot from the kernel's configuration
    /// (`/proc/pressure/irq` exists only with `CONFIG_IRQ_TIME_ACCOUNTING`,
    /// `/proc/pressure` only with PSI enabled), so such a file cannot appear
    /// later, and retrying its `openat` on every reading only costs time.
    #[default]
    HeldPread,
    /// `openat` + `read` until EOF + `close` on every reading. Use it for
    /// replay directories whose files are replaced between readings (a held
    /// descriptor would keep reading the old file), or to compare costs.
    OpenReadClose,
}

/// A file's descriptor (when held).
#[derive(Debug, Default)]
struct Slot {
    file: Option<HeldFile>,
    /// The entry every reading reports for a file a procfs root said is
    /// absent at open (see [`ReadStrategy::HeldPread`]), built once.
    absent: Option<Missing>,
}

/// Reads `/proc/{stat,meminfo,loadavg,pressure/*}` below a configurable
/// procfs root (default `/proc`; tests and replay use a directory of captured
/// files with the same layout).
///
/// ```no_run
/// use stepmon_sysusage::{model::sys_sample, probe::SysProbe};
/// let mut probe = SysProbe::open("/proc")?;
/// let first = probe.read();
/// std::thread::sleep(std::time::Duration::from_secs(2));
/// let second = probe.read();
/// for m in &second.missing {
///     eprintln!("no {}: {}", m.field, m.reason); // e.g. irqPressure without IRQ time accounting
/// }
/// let sample = sys_sample(&second, Some(&first));
/// println!("{}", serde_json::to_string(&sample).unwrap());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct SysProbe {
    root: PathBuf,
    dir: Dir,
    strategy: ReadStrategy,
    user_hz: NonZeroU64,
    slots: [Slot; ProcFile::ALL.len()],
    /// Every file's bytes of the last reading, one after another: one
    /// buffer instead of one a file, so a start of `stepmon` touches one to
    /// three fresh pages of memory for them instead of six (each first
    /// touch is a page fault).
    buf: Vec<u8>,
    /// `cpuN` lines of the last good `/proc/stat`: the capacity for the
    /// next reading's per-CPU list, so it is allocated once at its size.
    cpus_seen: usize,
}

impl SysProbe {
    /// Opens the procfs root `root` and, with the default
    /// [`ReadStrategy::HeldPread`], every file below it. Fails only if `root`
    /// cannot be opened as a directory; missing files show up in each
    /// reading's [`missing`](SysReading::missing) list.
    pub fn open(root: impl AsRef<Path>) -> io::Result<Self> {
        Self::open_with(root, ReadStrategy::default())
    }

    /// [`open`](Self::open) with an explicit [`ReadStrategy`].
    pub fn open_with(root: impl AsRef<Path>, strategy: ReadStrategy) -> io::Result<Self> {
        let root = root.as_ref().to_path_buf();
        let dir = Dir::open(&root)?;
        let hz = NonZeroU64::new(rustix::param::clock_ticks_per_second())
            .or(NonZeroU64::new(DEFAULT_USER_HZ))
            .unwrap_or(NonZeroU64::MIN);
        let mut probe =
            SysProbe { root, dir, strategy, user_hz: hz, slots: Default::default(), buf: Vec::new(), cpus_seen: 0 };
        if strategy == ReadStrategy::HeldPread {
            let procfs = is_procfs(&probe.dir);
            for file in ProcFile::ALL {
                let Some(slot) = probe.slots.get_mut(file.index()) else { continue };
                match HeldFile::open_at(&probe.dir, file.path()) {
                    Ok(held) => slot.file = Some(held),
                    Err(e) if procfs && is_permanent(&e) => slot.absent = Some(missing_file(file, &e)),
                    // Reported by the first `read`, which retries.
                    Err(_) => {}
                }
            }
        }
        Ok(probe)
    }

    /// The procfs root this probe reads.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How files are read.
    #[must_use]
    pub fn strategy(&self) -> ReadStrategy {
        self.strategy
    }

    /// Clock ticks per second used to turn `/proc/stat` ticks into seconds:
    /// `AT_CLKTCK` from the aux vector (what `sysconf(_SC_CLK_TCK)` returns).
    #[must_use]
    pub fn user_hz(&self) -> NonZeroU64 {
        self.user_hz
    }

    /// Overrides USER_HZ, for captures taken on a machine with another value.
    pub fn set_user_hz(&mut self, user_hz: NonZeroU64) {
        self.user_hz = user_hz;
    }

    /// The whole content of one file, read until EOF. The bytes live in a
    /// buffer the probe keeps: once it has grown to fit, reading with
    /// [`ReadStrategy::HeldPread`] makes no allocation.
    pub fn read_file(&mut self, file: ProcFile) -> io::Result<&[u8]> {
        self.buf.clear();
        let range = self.append_file(file)?;
        Ok(self.buf.get(range).unwrap_or_default())
    }

    /// Appends the content of `file` to the buffer; where it is there.
    fn append_file(&mut self, file: ProcFile) -> io::Result<std::ops::Range<usize>> {
        let slot = self.slots.get_mut(file.index()).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        match self.strategy {
            ReadStrategy::HeldPread => {
                let held = match slot.file.take() {
                    Some(held) => held,
                    None => HeldFile::open_at(&self.dir, file.path())?,
                };
                // stat, meminfo, loadavg and pressure/* are `single_open`
                // files: one pread each.
                let range = held.read_single_append(&mut self.buf)?;
                // Kept only after a good read: after an error the next reading
                // re-opens (the file may have been replaced or come back).
                slot.file = Some(held);
                Ok(range)
            }
            ReadStrategy::OpenReadClose => HeldFile::open_at(&self.dir, file.path())?.read_append(&mut self.buf),
        }
    }

    /// Reads and parses every file. Never fails as a whole: parts that could
    /// not be read or parsed are `None` and listed in
    /// [`missing`](SysReading::missing).
    pub fn read(&mut self) -> SysReading {
        let mut reading = SysReading::new(jiff::Timestamp::now(), self.user_hz);
        // Every file first, then every parse: a parser run right after a
        // system call is slower (see `CgroupProbe::read` in stepmon-sampler).
        self.buf.clear();
        let read = ProcFile::ALL.map(|file| {
            let absent = self.slots.get(file.index()).is_none_or(|slot| slot.absent.is_some());
            if absent {
                None
            } else {
                let start = self.buf.len();
                let range = self.append_file(file);
                // A failed read may have left part of the file behind.
                if range.is_err() {
                    self.buf.truncate(start);
                }
                Some(range)
            }
        });
        for (file, read) in ProcFile::ALL.into_iter().zip(read) {
            let Some(slot) = self.slots.get(file.index()) else { continue };
            if let Some(absent) = &slot.absent {
                reading.missing.push(absent.clone());
                continue;
            }
            match read {
                Some(Ok(range)) => {
                    parse_into(file, self.buf.get(range).unwrap_or_default(), self.cpus_seen, &mut reading)
                }
                Some(Err(e)) => reading.missing.push(missing_file(file, &e)),
                None => {}
            }
        }
        if let Some(stat) = &reading.stat {
            self.cpus_seen = stat.per_cpu.len();
        }
        reading
    }
}

/// The category of an I/O error reading a kernel file.
#[cfg(target_os = "linux")]
#[must_use]
pub fn missing_kind(error: &std::io::Error) -> MissingKind {
    if stepmon_fdread::is_gone(error) || error.kind() == std::io::ErrorKind::NotFound {
        MissingKind::NotFound
    } else if stepmon_fdread::is_unsupported(error) {
        MissingKind::NotSupported
    } else {
        MissingKind::Io
    }
}

/// The `missing` entry of a file that could not be opened or read.
fn missing_file(file: ProcFile, e: &io::Error) -> Missing {
    Missing::new(file.field(), file.path(), missing_kind(e), e.to_string())
}

/// Whether an open error says the file is not there or not supported,
/// rather than something that may pass (`EACCES`, `EMFILE`, `EINTR`, ...).
fn is_permanent(e: &io::Error) -> bool {
    stepmon_fdread::is_gone(e) || stepmon_fdread::is_unsupported(e) || e.kind() == io::ErrorKind::NotFound
}

/// Whether `dir` is on a procfs mount (not a directory of captured files,
/// whose files may come and go).
fn is_procfs(dir: &Dir) -> bool {
    rustix::fs::fstatfs(dir).is_ok_and(|fs| fs.f_type == rustix::fs::PROC_SUPER_MAGIC)
}

/// Parses the bytes of `file` into its part of `reading`, or records why not.
/// `cpus` is the expected number of `cpuN` lines (the capacity to reserve).
fn parse_into(file: ProcFile, bytes: &[u8], cpus: usize, reading: &mut SysReading) {
    let parse_error =
        |e: crate::parse::ParseError| Missing::new(file.field(), file.path(), MissingKind::Parse, e.to_string());
    let result = match file {
        ProcFile::Stat => StatSnapshot::parse(bytes, cpus).map(|s| reading.stat = Some(s)),
        ProcFile::Meminfo => MemInfo::parse(bytes).map(|m| reading.meminfo = Some(m)),
        ProcFile::Loadavg => LoadAvg::parse(bytes).map(|l| reading.loadavg = Some(l)),
        ProcFile::PressureCpu | ProcFile::PressureMemory | ProcFile::PressureIo | ProcFile::PressureIrq => {
            match Pressure::parse(bytes) {
                Ok(p) if p.some.is_none() && p.full.is_none() => {
                    let reason = "no `some` or `full` line";
                    reading.missing.push(Missing::new(file.field(), file.path(), MissingKind::Parse, reason));
                    Ok(())
                }
                Ok(p) => {
                    let slot = match file {
                        ProcFile::PressureCpu => &mut reading.cpu_pressure,
                        ProcFile::PressureMemory => &mut reading.memory_pressure,
                        ProcFile::PressureIo => &mut reading.io_pressure,
                        _ => &mut reading.irq_pressure,
                    };
                    *slot = Some(p);
                    Ok(())
                }
                Err(e) => Err(e),
            }
        }
    };
    if let Err(e) = result {
        reading.missing.push(parse_error(e));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_real_procfs_remembers_absent_files() {
        assert!(is_procfs(&Dir::open("/proc").unwrap()));
        // Any existing directory that is not procfs; nothing is created.
        assert!(!is_procfs(&Dir::open(std::env::temp_dir()).unwrap()));
        let mut probe = SysProbe::open("/proc").unwrap();
        let absent: Vec<&str> =
            ProcFile::ALL.iter().filter(|f| probe.slots[f.index()].absent.is_some()).map(|f| f.path()).collect();
        for file in ProcFile::ALL {
            let exists = std::path::Path::new("/proc").join(file.path()).exists();
            assert_eq!(absent.contains(&file.path()), !exists, "{}", file.path());
        }
        if absent.is_empty() {
            crate::test_skip::accepted(
                "only_a_real_procfs_remembers_absent_files (the reuse check)",
                crate::test_skip::EVERY_PROC_FILE_PRESENT,
                "every file is present",
            );
            return;
        }
        let (first, second) = (probe.read(), probe.read());
        for path in absent {
            let entry = |r: &SysReading| r.missing.iter().find(|m| m.file == path).cloned().unwrap();
            assert_eq!(entry(&first), entry(&second));
            assert_eq!(entry(&first).kind, MissingKind::NotFound, "{path}");
        }
    }
}
