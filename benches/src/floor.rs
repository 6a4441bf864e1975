//! The I/O floors the probes are compared with: the same files read without
//! parsing, through held fds (`pread`) or with open/read/close, into one
//! reused buffer.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use stepmon_fdread::{Dir, read_once};

/// Size of the reused buffer. Every file read here is far smaller
/// (`/proc/stat` of a 2-CPU host is ~1.2 KiB, 64-CPU ~4.5 KiB).
const BUF: usize = 64 * 1024;

/// Reads into `buf` from offset 0 until a read returns 0, with `read(free,
/// offset)`; returns the length. Errors if the file does not fit.
fn read_to_end_with(buf: &mut [u8], mut read: impl FnMut(&mut [u8], u64) -> io::Result<usize>) -> io::Result<usize> {
    let mut len = 0;
    loop {
        let Some(free) = buf.get_mut(len..).filter(|free| !free.is_empty()) else {
            return Err(io::Error::new(io::ErrorKind::OutOfMemory, "file larger than the floor's buffer"));
        };
        match read(free, len as u64)? {
            0 => return Ok(len),
            n => len += n,
        }
    }
}

/// Files opened once, re-read from offset 0 with `pread` on every call: the
/// floor of a sampler that holds its fds (`stepmon_fdread::HeldFile` does
/// the same syscalls, plus buffer bookkeeping).
#[derive(Debug)]
pub struct HeldFiles {
    files: Vec<(String, File)>,
    buf: Vec<u8>,
}

impl HeldFiles {
    /// Opens every one of `names` below `dir`; fails if one cannot be opened.
    pub fn open(dir: &Path, names: &[String]) -> io::Result<HeldFiles> {
        let files = names
            .iter()
            .map(|name| File::open(dir.join(name)).map(|f| (name.clone(), f)))
            .collect::<io::Result<_>>()?;
        Ok(HeldFiles { files, buf: vec![0; BUF] })
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether there is no file.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// `pread` every file from offset 0 until EOF (a `pread` that returns 0,
    /// as a reader must do when it does not know the size: two `pread`s per
    /// small file) and hands each file's bytes to `each`.
    #[inline]
    pub fn for_each(&mut self, mut each: impl FnMut(&str, &[u8])) -> io::Result<()> {
        for (name, file) in &self.files {
            let len = read_to_end_with(&mut self.buf, |free, at| file.read_at(free, at))?;
            each(name, self.buf.get(..len).unwrap_or_default());
        }
        Ok(())
    }

    /// [`for_each`](Self::for_each) without parsing: total bytes read.
    #[inline]
    pub fn pread_all(&mut self) -> io::Result<usize> {
        let mut total = 0;
        self.for_each(|_, bytes| total += bytes.len())?;
        Ok(total)
    }

    /// One `pread` per file into the 64 KiB buffer, trusting a short read to
    /// be the whole file (true for seq_file and tmpfs files this small): the
    /// absolute floor, one syscall per file.
    #[inline]
    pub fn pread_once_all(&mut self) -> io::Result<usize> {
        let mut total = 0;
        for (_, file) in &self.files {
            let n = file.read_at(&mut self.buf, 0)?;
            if n == self.buf.len() {
                return Err(io::Error::new(io::ErrorKind::OutOfMemory, "file larger than the floor's buffer"));
            }
            total += n;
        }
        Ok(total)
    }
}

/// The same files opened, read until EOF and closed on every call,
/// `openat` relative to a held directory fd (what `ReadStrategy::OpenReadClose`
/// does, via `stepmon_fdread::read_once`).
#[derive(Debug)]
pub struct OpenReadClose {
    dir: Dir,
    names: Vec<String>,
    buf: Vec<u8>,
}

impl OpenReadClose {
    /// Holds `dir`; the files are opened on each call.
    pub fn new(dir: &Path, names: &[String]) -> io::Result<OpenReadClose> {
        Ok(OpenReadClose { dir: Dir::open(dir)?, names: names.to_vec(), buf: Vec::with_capacity(BUF) })
    }

    /// Opens, reads until EOF and closes every file, handing its bytes to `each`.
    #[inline]
    pub fn for_each(&mut self, mut each: impl FnMut(&str, &[u8])) -> io::Result<()> {
        for name in &self.names {
            let bytes = read_once(&self.dir, name, &mut self.buf)?;
            each(name, bytes);
        }
        Ok(())
    }

    /// [`for_each`](Self::for_each) without parsing: total bytes read.
    #[inline]
    pub fn read_all(&mut self) -> io::Result<usize> {
        let mut total = 0;
        self.for_each(|_, bytes| total += bytes.len())?;
        Ok(total)
    }
}

/// Which of `names` can be opened below `dir` (the probe reads the others
/// as absent, so the floor leaves them out).
pub fn present(dir: &Path, names: &[&str]) -> Vec<String> {
    names.iter().filter(|name| File::open(dir.join(name)).is_ok()).map(|name| (*name).to_owned()).collect()
}

/// A file opened and read whole into a reused buffer on each call (std
/// `File::open` + `read` until 0 + close): the way `ours_file` reads, as
/// in [`crate::inputs::Fixture::open_read`].
#[derive(Debug)]
pub struct PathReader {
    path: PathBuf,
    buf: Vec<u8>,
}

impl PathReader {
    /// Reads `path` on each [`read`](Self::read).
    pub fn new(path: PathBuf) -> PathReader {
        PathReader { path, buf: vec![0; BUF] }
    }

    /// Opens, reads whole, closes; hands the bytes to `parse`.
    #[inline]
    pub fn read<T>(&mut self, parse: impl FnOnce(&[u8]) -> T) -> io::Result<T> {
        let mut file = File::open(&self.path)?;
        let len = read_to_end_with(&mut self.buf, |free, _| file.read(free))?;
        Ok(parse(self.buf.get(..len).unwrap_or_default()))
    }
}

/// A file opened once and re-read with `pread` from 0 on each call.
#[derive(Debug)]
pub struct PreadReader {
    file: File,
    buf: Vec<u8>,
}

impl PreadReader {
    /// Opens `path` once.
    pub fn open(path: &Path) -> io::Result<PreadReader> {
        Ok(PreadReader { file: File::open(path)?, buf: vec![0; BUF] })
    }

    /// `pread` from 0 until EOF; hands the bytes to `parse`.
    #[inline]
    pub fn read<T>(&mut self, parse: impl FnOnce(&[u8]) -> T) -> io::Result<T> {
        let file = &self.file;
        let len = read_to_end_with(&mut self.buf, |free, at| file.read_at(free, at))?;
        Ok(parse(self.buf.get(..len).unwrap_or_default()))
    }
}
