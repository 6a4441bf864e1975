//! Output files replaced whole or not at all.
//!
//! [`OutFile::create`] makes a temporary file beside the target before any
//! work is done (so an unwritable place fails early, with nothing created or
//! truncated at the target); the result is written to it, and
//! [`OutFile::commit`] flushes it to disk and renames it over the target. An
//! `OutFile` dropped without a commit — any error path, a panic — removes
//! its temporary file, and an earlier target file is left byte for byte.
//! [`write()`] does all three for a result that is ready.
//!
//! [`Appender`] is the other way a file can be written without tearing
//! what readers rely on: whole lines appended with one `write(2)` each by
//! any number of writers (a job record).
//!
//! ```
//! let dir = tempfile::tempdir()?;
//! let target = dir.path().join("out.json");
//! stepmon_outfile::write(&target, b"{}\n")?;
//! assert_eq!(std::fs::read(&target)?, b"{}\n");
//! // A directory is no output file: refused, nothing touched.
//! assert!(stepmon_outfile::OutFile::create(dir.path()).is_err());
//! # Ok::<(), std::io::Error>(())
//! ```
#![deny(missing_docs)]

/// The workspace's one way for a test to skip (fails under
/// `STEPMON_REQUIRE_LIVE=1`).
#[cfg(all(test, unix))]
use stepmon_testsupport::skip as test_skip;

mod append;

pub use append::Appender;

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// A result file being written: a temporary file in the target's
/// directory, renamed over the target by [`OutFile::commit`]; removed, the
/// target untouched, when dropped without one.
///
/// A target that exists and is no regular file — a device such as
/// `/dev/null` or a terminal, a named pipe, `/dev/stdout` — is written
/// directly, as a shell's `>` would: it cannot be replaced (renaming over
/// `/dev/null` would put a regular file in its place) and holds no earlier
/// result to keep.
#[derive(Debug)]
pub struct OutFile {
    inner: Inner,
    target: PathBuf,
    replaces: bool,
}

#[derive(Debug)]
enum Inner {
    /// The temporary file beside a regular (or new) target.
    Temporary(NamedTempFile),
    /// A target that is no regular file, opened for writing.
    Direct(fs::File),
}

impl OutFile {
    /// Creates the temporary file for `target` in `target`'s directory (the
    /// current one for a bare file name). A `target` that is a symbolic link
    /// stands for the file it points to.
    ///
    /// # Errors
    ///
    /// `target` is a directory (`ErrorKind::IsADirectory` where the platform
    /// has it); its directory does not exist or cannot be written to; the
    /// temporary file cannot be created. Nothing is created at `target` then.
    pub fn create(target: impl AsRef<Path>) -> io::Result<OutFile> {
        let given = target.as_ref();
        if let Ok(meta) = fs::metadata(given)
            && !meta.is_file()
            && !meta.is_dir()
        {
            let file = fs::OpenOptions::new().write(true).open(given)?;
            return Ok(OutFile { inner: Inner::Direct(file), target: given.to_owned(), replaces: false });
        }
        // Follow a symlink (a dangling one is replaced as a link would be).
        let target = match fs::symlink_metadata(given) {
            Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(given).unwrap_or_else(|_| given.to_owned()),
            _ => given.to_owned(),
        };
        let existing = match fs::metadata(&target) {
            Ok(meta) if meta.is_dir() => {
                return Err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory, not a file"));
            }
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let dir = match target.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let prefix = format!(".{name}.");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            // What `File::create` gives a new file (less the umask); a
            // replaced file's own bits are set below.
            builder.permissions(fs::Permissions::from_mode(0o666));
        }
        let temp = builder.tempfile_in(dir).map_err(|e| without_temporary_path(dir, e))?;
        #[cfg(unix)]
        if let Some(meta) = &existing {
            temp.as_file().set_permissions(meta.permissions())?;
        }
        Ok(OutFile { inner: Inner::Temporary(temp), target, replaces: existing.is_some() })
    }

    /// The file that [`OutFile::commit`] replaces (a symbolic link given to
    /// [`OutFile::create`] resolved).
    #[must_use]
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Whether a regular file was at the target when this was created: an
    /// earlier result that a failure leaves as it was.
    #[must_use]
    pub fn replaces(&self) -> bool {
        self.replaces
    }

    /// Flushes what was written to disk and renames it over the target; on
    /// an error the temporary file is removed and the target left as it was.
    ///
    /// # Errors
    ///
    /// Flushing or syncing fails (e.g. `ENOSPC`, `EDQUOT`, `EIO`), or the
    /// rename does. (A target that is no regular file was written
    /// directly: only flushed here.)
    pub fn commit(mut self) -> io::Result<()> {
        match self.inner {
            Inner::Temporary(mut temp) => {
                temp.as_file_mut().flush()?;
                temp.as_file().sync_all()?;
                temp.persist(&self.target).map_err(|e| e.error)?;
                sync_dir(&self.target);
            }
            Inner::Direct(ref mut file) => file.flush()?,
        }
        Ok(())
    }

    fn file(&mut self) -> &mut fs::File {
        match &mut self.inner {
            Inner::Temporary(temp) => temp.as_file_mut(),
            Inner::Direct(file) => file,
        }
    }
}

impl Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file().write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}

/// Writes `bytes` to `target` whole or not at all: [`OutFile::create`],
/// the bytes, [`OutFile::commit`].
///
/// # Errors
///
/// As [`OutFile::create`], writing, and [`OutFile::commit`]; the target is
/// left as it was then.
pub fn write(target: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> io::Result<()> {
    let mut out = OutFile::create(target)?;
    out.write_all(bytes.as_ref())?;
    out.commit()
}

/// The error of creating the temporary file in `dir`, as the user can act
/// on it: the directory's own error when it is missing or no directory,
/// else the operating system's error without the temporary file's name
/// (tempfile appends ` at path "…"`: a name the user never gave).
fn without_temporary_path(dir: &Path, error: io::Error) -> io::Error {
    match fs::metadata(dir) {
        Err(e) => e,
        Ok(meta) if !meta.is_dir() => io::Error::new(io::ErrorKind::NotADirectory, "its directory is not a directory"),
        Ok(_) => {
            let text = error.to_string();
            match text.split_once(" at path ") {
                Some((reason, _)) => io::Error::new(error.kind(), reason.to_owned()),
                None => error,
            }
        }
    }
}

/// Syncs the directory of `target` so that the rename itself is on disk
/// (fsync(2): "Calling fsync() does not necessarily ensure that the entry in
/// the directory containing the file has also reached disk"). Best effort:
/// the rename is done either way, and not every platform opens directories.
fn sync_dir(target: &Path) {
    #[cfg(unix)]
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty())
        && let Ok(dir) = fs::File::open(dir)
    {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = target;
}

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn replaces_whole_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stepmon_x.prom");
        write(&path, "one\n").unwrap();
        write(&path, "two\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two\n");
        assert_eq!(names(dir.path()), ["stepmon_x.prom"]);
    }

    #[test]
    fn dropped_without_commit_leaves_the_earlier_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        fs::write(&path, "earlier\n").unwrap();
        let mut out = OutFile::create(&path).unwrap();
        assert!(out.replaces());
        out.write_all(b"half of a new").unwrap();
        assert_eq!(names(dir.path()).len(), 2, "the temporary beside the target");
        drop(out);
        assert_eq!(fs::read_to_string(&path).unwrap(), "earlier\n");
        assert_eq!(names(dir.path()), ["out.json"]);
        // None before: none after.
        let fresh = dir.path().join("fresh.json");
        let out = OutFile::create(&fresh).unwrap();
        assert!(!out.replaces());
        drop(out);
        assert_eq!(names(dir.path()), ["out.json"]);
    }

    #[test]
    fn unwritable_places_fail_at_create_touching_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let err = OutFile::create(dir.path().join("missing/x.json")).unwrap_err();
        assert_eq!((err.kind(), err.raw_os_error().is_some()), (io::ErrorKind::NotFound, true), "{err}");
        assert!(!err.to_string().contains(".tmp"), "{err}");
        let err = OutFile::create(dir.path()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
        assert!(names(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_written_through_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        match std::process::Command::new("mkfifo").arg(&fifo).status() {
            Ok(status) if status.success() => {}
            _ => {
                crate::test_skip::skip("a_named_pipe_is_written_through_not_replaced", "no mkfifo");
                return;
            }
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(fifo).unwrap())
        };
        write(&fifo, "through\n").unwrap();
        assert_eq!(reader.join().unwrap(), b"through\n");
        use std::os::unix::fs::FileTypeExt as _;
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "still the pipe, not a file");
        assert_eq!(names(dir.path()), ["pipe"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_mode_and_a_symlink_its_link() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        fs::write(&real, "earlier\n").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write(&link, "new\n").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "new\n");
        assert_eq!(fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640);
    }
}
