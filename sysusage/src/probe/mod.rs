//! Reading the procfs files: [`SysProbe`] keeps them open below a procfs
//! root and re-reads them with `pread` at offset 0.
//!
//! seq_file-backed procfs files regenerate their content on every read from
//! offset 0, so holding the file descriptors saves an `openat` + `close`
//! pair per file and sample (<https://docs.kernel.org/filesystems/seq_file.html>). Every file is
//! read until EOF into a buffer that is kept and grows to fit (`/proc/stat`
//! exceeds 4 KiB on large machines).
//!
//! Failures are data, not errors: a [`SysReading`] carries whatever could be
//! read plus one [`Missing`](stepmon_model::missing::Missing) entry per file that could not (no
//! `/proc/pressure` when PSI is off, `EOPNOTSUPP` when it is compiled in but
//! disabled, a parse error, ...).

mod file;
#[cfg(target_os = "linux")]
mod process;
mod reading;
#[cfg(target_os = "linux")]
mod sys_probe;

pub use file::ProcFile;
#[cfg(target_os = "linux")]
pub use process::start_ticks;
pub use reading::{StatSnapshot, SysReading};
#[cfg(target_os = "linux")]
pub use sys_probe::{DEFAULT_USER_HZ, ReadStrategy, SysProbe, missing_kind};
