//! Reads kernel pseudo-files — procfs, cgroupfs, sysfs — the way a sampler
//! should: open once (relative to a held directory fd), then re-read with
//! `pread(fd, buf, 0)` until EOF into a buffer that is reused and only grows.
//!
//! Why: seq_file regenerates the content on every pass from offset 0, so a
//! held fd re-reads fresh values without `open`/`close` per sample (see the
//! benchmarks in `benches/`), and `pread` never moves the fd's offset, so one
//! fd can be read from any thread. Files larger than one `read` (e.g.
//! `/proc/stat` on big machines, `memory.stat`) are read to EOF.
//!
//! ```
//! # #[cfg(target_os = "linux")] {
//! use stepmon_fdread::{Dir, HeldFile};
//! let proc_dir = Dir::open("/proc")?;
//! let loadavg = HeldFile::open_at(&proc_dir, "loadavg")?;
//! let mut buf = Vec::new();
//! let first = loadavg.read(&mut buf)?.to_vec();
//! let again = loadavg.read(&mut buf)?; // same fd, fresh content
//! assert!(first.ends_with(b"\n") && again.ends_with(b"\n"));
//! # }
//! # Ok::<(), std::io::Error>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

#[cfg(unix)]
mod unix;

#[cfg(unix)]
pub use unix::{Dir, DirEntry, HeldFile, is_gone, is_unsupported, list_dir, read_once, read_path, retry_eintr};
