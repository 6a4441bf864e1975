//! The bytes every case parses: real captures from the hybrid 6.18 host and
//! hand-written files for what that host cannot show (see `data/README.md`).

use std::cell::RefCell;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// One input file, embedded in the binary so every run parses the same bytes.
#[derive(Debug, Clone, Copy)]
pub struct Input {
    /// File name under `benches/data/`.
    pub file: &'static str,
    /// Its content.
    pub bytes: &'static [u8],
}

macro_rules! input {
    ($name:ident, $file:literal, $doc:literal) => {
        #[doc = $doc]
        pub const $name: Input = Input { file: $file, bytes: include_bytes!(concat!("../data/", $file)) };
    };
}

input!(CPU_STAT_ROOT, "cgroup2_root_cpu.stat.txt", "Real root `cpu.stat` (4 keys: no cpu controller on v2 there).");
input!(CPU_STAT_FULL, "cpu.stat.full.txt", "Hand-written pure-v2 `cpu.stat` with all 10 keys.");
input!(MEMORY_STAT, "memory.stat.txt", "Hand-written 61-key `memory.stat` (6.8-like, ZSWAP + THP, no NUMA).");
input!(IO_STAT, "io.stat.txt", "Hand-written `io.stat`: 8 full lines, a bare `MAJ:MIN ` line, a `  cost.usage=` line.");
input!(PSI_CPU, "proc_pressure_cpu.txt", "Real `/proc/pressure/cpu`.");
input!(PSI_IO, "proc_pressure_io.txt", "Real `/proc/pressure/io`.");
input!(PSI_CGROUP_CPU, "cgroup2_child_cpu.pressure.txt", "Real cgroup `cpu.pressure` (all zero).");
input!(MEMORY_MAX_VALUE, "memory.max.value.txt", "Hand-written `memory.max` holding a number (8 GiB).");
input!(MEMORY_MAX_MAX, "memory.max.max.txt", "Hand-written `memory.max` holding `max`.");

/// Scratch buffer size for the open+read cases; every input is far smaller.
const SCRATCH: usize = 4096;

/// An input ready for the cases: its bytes, the same bytes as `&str` (the
/// peers take `&str`), and a copy on tmpfs for the peers that take a `File`.
#[derive(Debug)]
pub struct Fixture {
    /// The input.
    pub input: Input,
    /// The input as text (all inputs are ASCII).
    pub text: &'static str,
    /// The tmpfs copy.
    pub path: PathBuf,
    /// The tmpfs copy, kept open for the `pread` baseline.
    open: fs::File,
    scratch: RefCell<Vec<u8>>,
}

impl Fixture {
    /// Writes `input` to `dir` (normally a [`TmpDir`]).
    pub fn new(input: Input, dir: &Path) -> io::Result<Fixture> {
        let text = std::str::from_utf8(input.bytes).map_err(io::Error::other)?;
        let path = dir.join(input.file);
        fs::write(&path, input.bytes)?;
        let open = fs::File::open(&path)?;
        Ok(Fixture { input, text, path, open, scratch: RefCell::new(vec![0; SCRATCH]) })
    }

    /// The input bytes.
    #[inline]
    pub fn bytes(&self) -> &'static [u8] {
        self.input.bytes
    }

    /// Opens the tmpfs copy, reads it whole into a reused buffer (no
    /// allocation) and hands the bytes to `parse`: what stepmon's sampler
    /// does with a cgroup file, minus keeping the fd open.
    #[inline]
    pub fn open_read<T>(&self, parse: impl FnOnce(&[u8]) -> T) -> io::Result<T> {
        let mut file = fs::File::open(&self.path)?;
        self.read_with(|free, _| file.read(free), parse)
    }

    /// Reads the kept-open tmpfs copy from offset 0 with `pread` into the
    /// reused buffer and hands the bytes to `parse`: the I/O floor of a
    /// sampler that keeps its fds open.
    #[inline]
    pub fn pread<T>(&self, parse: impl FnOnce(&[u8]) -> T) -> io::Result<T> {
        self.read_with(|free, at| self.open.read_at(free, at), parse)
    }

    #[inline]
    fn read_with<T>(
        &self,
        mut read: impl FnMut(&mut [u8], u64) -> io::Result<usize>,
        parse: impl FnOnce(&[u8]) -> T,
    ) -> io::Result<T> {
        let mut buf = self.scratch.borrow_mut();
        let mut len = 0;
        loop {
            let Some(free) = buf.get_mut(len..).filter(|free| !free.is_empty()) else {
                return Err(io::Error::new(io::ErrorKind::OutOfMemory, "input larger than the scratch buffer"));
            };
            match read(free, len as u64)? {
                0 => break,
                n => len += n,
            }
        }
        Ok(parse(buf.get(..len).unwrap_or_default()))
    }
}

/// A directory on tmpfs (`/dev/shm`, else the temp dir), so the file-based
/// cases measure the syscalls and the copy, not a disk. Its name is unique
/// (`stepmon-benches-XXXXXX`, made with `O_EXCL`) and it is removed on drop,
/// also when a bench or test panics.
#[derive(Debug)]
pub struct TmpDir(tempfile::TempDir);

impl TmpDir {
    /// Creates `stepmon-benches-XXXXXX` under `/dev/shm` (or the temp dir).
    pub fn new() -> io::Result<TmpDir> {
        let mut builder = tempfile::Builder::new();
        builder.prefix("stepmon-benches-");
        let shm = Path::new("/dev/shm");
        let dir = if shm.is_dir() { builder.tempdir_in(shm)? } else { builder.tempdir()? };
        Ok(TmpDir(dir))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}
