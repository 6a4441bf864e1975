//! Lines appended whole to a file that several writers share (a job
//! record: the steps of one CI job, possibly running at once).
//!
//! What it relies on: the file is opened with `O_APPEND` and each line is
//! written with one `write(2)`, never retried in parts. On Linux local
//! filesystems (ext4, xfs, btrfs, tmpfs) a write to a regular file holds the
//! inode's lock while it moves the offset to the end and copies the bytes
//! (`generic_file_write_iter` under `inode_lock`), so lines of concurrent
//! writers never interleave, whatever their length — `PIPE_BUF` is a limit
//! of pipes, not of regular files. NFS and other network filesystems make
//! no such promise. A line reaches the page cache before `write(2)`
//! returns, so a killed writer loses nothing it wrote; a line is torn only
//! when the disk fills (or the host dies) mid-write, which the reader
//! must expect of a file's last line.

use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

/// A file opened for appending whole lines.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("job.jsonl");
/// let mut a = stepmon_outfile::Appender::open(&path)?;
/// let mut b = stepmon_outfile::Appender::open(&path)?;
/// a.append(b"{\"one\":1}\n")?;
/// b.append(b"{\"two\":2}\n")?;
/// a.sync()?;
/// assert_eq!(std::fs::read_to_string(&path)?, "{\"one\":1}\n{\"two\":2}\n");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Appender {
    file: File,
    path: PathBuf,
}

impl Appender {
    /// Opens `path` for appending, creating it when it does not exist.
    ///
    /// # Errors
    /// Those of `open(2)` with `O_WRONLY | O_APPEND | O_CREAT`.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Appender> {
        Appender::with(path.as_ref(), OpenOptions::new().append(true).create(true))
    }

    /// Opens `path`, which must exist, for appending.
    ///
    /// # Errors
    /// Those of `open(2)` with `O_WRONLY | O_APPEND`: `NotFound` when it
    /// does not exist.
    pub fn open_existing(path: impl AsRef<Path>) -> io::Result<Appender> {
        Appender::with(path.as_ref(), OpenOptions::new().append(true))
    }

    fn with(path: &Path, options: &OpenOptions) -> io::Result<Appender> {
        Ok(Appender { file: options.open(path)?, path: path.to_owned() })
    }

    /// The file's path, as given.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `line` (which should end in `\n`) with one `write(2)`.
    ///
    /// # Errors
    /// The write's error, or `WriteZero` when fewer bytes were written than
    /// given (a full disk): the rest is not written, as a second write could
    /// land after another writer's line. The file's last line is torn then;
    /// append nothing more.
    pub fn append(&mut self, line: &[u8]) -> io::Result<()> {
        match self.file.write(line) {
            Ok(n) if n == line.len() => Ok(()),
            Ok(n) => Err(io::Error::new(
                io::ErrorKind::WriteZero,
                format!("short write ({n} of {} bytes; is the disk full?)", line.len()),
            )),
            Err(e) => Err(e),
        }
    }

    /// Flushes what was appended to the disk (`fdatasync(2)`): it survives
    /// the machine going away.
    ///
    /// # Errors
    /// Those of `fdatasync(2)`.
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }
}

// The guarantee is Linux's (see the module docs).
#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn concurrent_writers_never_interleave_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shared.jsonl");
        // Lines longer than a pipe's PIPE_BUF (4096), from four threads.
        let writers: Vec<_> = (0..4u8)
            .map(|t| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let mut out = Appender::open(&path).unwrap();
                    let mut line = vec![b'a' + t; 10_000];
                    line.push(b'\n');
                    for _ in 0..25 {
                        out.append(&line).unwrap();
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 100);
        for line in text.lines() {
            assert_eq!(line.len(), 10_000);
            assert!(line.bytes().all(|b| b == line.as_bytes()[0]), "interleaved");
        }
        assert_eq!(Appender::open_existing(dir.path().join("none")).unwrap_err().kind(), io::ErrorKind::NotFound);
    }
}
