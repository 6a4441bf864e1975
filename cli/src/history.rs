//! `stepmon report BUILD.dockerbuild`: a `docker buildx history export`
//! bundle (or its unpacked OCI layout directory) read as bytes and handed
//! to `stepmon_report::import::history`, which renders them in every format.

use std::io::Read as _;
use std::path::Path;

use stepmon_report::import::history::{self, Build, Layout};
use stepmon_report::job;

use crate::error::CliError;
use crate::reports::{ReportArgs, write};

/// Bytes enough to tell a gzip stream (2) or a tar archive (`ustar` at 257).
const SNIFF_BYTES: u64 = 262;

fn io(path: &Path, e: &std::io::Error) -> CliError {
    CliError::input(&format!("cannot read {}", path.display()), e)
}

fn one_line(path: &Path, e: &history::HistoryError) -> CliError {
    CliError::new(format!("{}: {e}", path.display()))
}

/// The builds of `files` when it is one bundle or one unpacked layout
/// (a directory with `index.json` and `oci-layout`); `None` otherwise.
pub(crate) fn load(files: &[std::path::PathBuf]) -> Result<Option<Vec<Build>>, CliError> {
    let [path] = files else { return Ok(None) };
    if path.is_dir() {
        if !path.join("index.json").is_file() || !path.join("oci-layout").is_file() {
            return Ok(None);
        }
        return read_dir(path).map(Some);
    }
    if path == Path::new("-") || !path.is_file() {
        return Ok(None);
    }
    let mut head = Vec::new();
    let file = std::fs::File::open(path).map_err(|e| io(path, &e))?;
    file.take(SNIFF_BYTES).read_to_end(&mut head).map_err(|e| io(path, &e))?;
    if !history::looks_like_bundle(&head) {
        return Ok(None);
    }
    let bytes = std::fs::read(path).map_err(|e| io(path, &e))?;
    history::read(&bytes).map(Some).map_err(|e| one_line(path, &e))
}

/// The builds of stdin's `bytes` when they are a bundle (gzip or tar
/// magic); `None` otherwise.
pub(crate) fn of_stdin(bytes: &[u8]) -> Result<Option<Vec<Build>>, CliError> {
    if !history::looks_like_bundle(bytes) {
        return Ok(None);
    }
    history::read(bytes).map(Some).map_err(|e| CliError::new(format!("stdin: {e}")))
}

/// The build of `text` (the content of `path`) when it is a bare
/// provenance predicate with steps but no per-step usage
/// ([`history::of_predicate`]); `None` otherwise.
pub(crate) fn of_predicate(path: &Path, text: &str) -> Result<Option<Build>, CliError> {
    history::of_predicate(text.as_bytes()).map_err(|e| one_line(path, &e))
}

/// The steps of `builds` as one side of `stepmon diff`
/// ([`history::diff_entries`]); the steps that never completed are named
/// on stderr.
pub(crate) fn diff_entries(builds: &[Build], side: &str) -> Vec<job::Entry> {
    let (kept, left_out) = history::diff_entries(builds);
    for name in left_out {
        eprintln!("stepmon: {side}: `{name}` never completed: not compared");
    }
    kept
}

/// An unpacked layout: `index.json`, `oci-layout` and `blobs/sha256/*`
/// (the only files an OCI layout's descriptors can name).
fn read_dir(dir: &Path) -> Result<Vec<Build>, CliError> {
    let mut layout = Layout::default();
    for name in ["index.json", "oci-layout"] {
        let bytes = std::fs::read(dir.join(name)).map_err(|e| io(&dir.join(name), &e))?;
        layout.add(name, bytes).map_err(|e| one_line(dir, &e))?;
    }
    let blobs = dir.join("blobs/sha256");
    if blobs.is_dir() {
        for entry in std::fs::read_dir(&blobs).map_err(|e| io(&blobs, &e))? {
            let entry = entry.map_err(|e| io(&blobs, &e))?;
            let path = entry.path();
            let size = entry.metadata().map_err(|e| io(&path, &e))?.len();
            if size > history::bundle::MAX_BLOB_BYTES {
                return Err(CliError::new(format!(
                    "{}: {size} bytes (at most {} per blob)",
                    path.display(),
                    history::bundle::MAX_BLOB_BYTES
                )));
            }
            let name = format!("blobs/sha256/{}", entry.file_name().to_string_lossy());
            let bytes = std::fs::read(&path).map_err(|e| io(&path, &e))?;
            layout.add(&name, bytes).map_err(|e| one_line(dir, &e))?;
        }
    }
    history::read_layout(&layout).map_err(|e| one_line(dir, &e))
}

/// `stepmon report` of builds.
pub(crate) fn report(args: &ReportArgs, builds: &[Build]) -> Result<(), CliError> {
    write(args.output.as_deref(), &history::render_as(args.format, builds))
}
