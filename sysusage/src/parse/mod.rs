//! Zero-copy parsers for the procfs files of whole-machine usage.
//!
//! | file | parser | spec |
//! |---|---|---|
//! | `/proc/stat` | [`KernelStat`] (+ [`CpuTimes`], [`PerCpu`], [`Softirqs`]) | <https://docs.kernel.org/filesystems/proc.html#miscellaneous-kernel-statistics-in-proc-stat> |
//! | `/proc/meminfo` | [`MemInfo`], [`MemInfoEntries`] | <https://docs.kernel.org/filesystems/proc.html#meminfo> |
//! | `/proc/PID/{stat,status,io}` | [`ProcStat`], [`ProcStatus`], [`ProcIo`] | <https://docs.kernel.org/filesystems/proc.html#process-specific-subdirectories> |
//! | `/proc/PID/smaps_rollup` | [`SmapsRollup`] | <https://docs.kernel.org/filesystems/proc.html#proc-pid-smaps-rollup> |
//! | `/proc/PID/cmdline` | [`CmdLine`] (+ [`Args`]) | <https://docs.kernel.org/filesystems/proc.html#process-specific-subdirectories>, proc_pid_cmdline(5) |
//! | `/proc/loadavg` | [`LoadAvg`] | <https://docs.kernel.org/filesystems/proc.html#kernel-data> |
//! | `/proc/pressure/{cpu,memory,io,irq}` | [`stepmon_psi::Pressure`] | <https://docs.kernel.org/accounting/psi.html#pressure-interface> |
//!
//! Everything here is `no_std` and never allocates (this module uses only
//! `core`; `cargo build --no-default-features` builds nothing else). Malformed
//! input is a [`ParseError`] with line and byte offset; no input panics.
//! Values are the kernel's raw units: clock ticks (USER_HZ) for CPU times, kB
//! for most meminfo keys; conversions live in the `model` module (feature `std`).

mod cmdline;
mod columns;
mod cpu;
mod loadavg;
mod meminfo;
mod process;
mod stat;

pub use cmdline::{Args, CmdLine};
pub use cpu::{CpuTimes, PerCpuTimes};
pub use loadavg::LoadAvg;
pub use meminfo::{MemInfo, MemInfoEntries, MemInfoEntry, MemUnit};
pub use process::{ProcIo, ProcStat, ProcStatus, SmapsRollup};
pub use stat::{KernelStat, PerCpu, Softirqs, StatCounters};
pub use stepmon_cgroupfs_parse::number::Hundredths;
pub use stepmon_cgroupfs_parse::{ErrorKind, ParseError, Result};
pub use stepmon_psi::{Pressure, PressureLine};

/// Validates a procfs key: non-empty printable ASCII. Keys are matched
/// against known names by the callers, so this only rejects garbage (control
/// bytes, `\r`, non-ASCII) early with a typed error.
pub(crate) fn ascii_key(bytes: &[u8]) -> core::result::Result<&str, ErrorKind> {
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_graphic) {
        return Err(ErrorKind::InvalidKey);
    }
    core::str::from_utf8(bytes).map_err(|_| ErrorKind::InvalidKey)
}
