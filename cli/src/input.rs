//! Every file `stepmon report`, `diff`, `push` and `baseline` read: its
//! bytes (a file, `-` for stdin, an unpacked bundle's directory), told
//! apart by `stepmon_import::input::detect` in one place.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use stepmon_import::Import;
use stepmon_import::history::{self, Build, Layout};
pub use stepmon_import::input::Input;
use stepmon_import::input::{self, InputError};
use stepmon_report::Step;

use crate::error::CliError;

/// The most bytes read from stdin (`-`): a build history bundle's layout
/// may unpack to at most this much (so its gzip'd tar is smaller), and a run
/// file, provenance or job record of this size is far beyond any real one.
pub const MAX_STDIN_BYTES: u64 = history::bundle::MAX_LAYOUT_BYTES;

/// All of stdin, at most [`MAX_STDIN_BYTES`] (more is an error, not read).
fn read_stdin_bytes() -> Result<Vec<u8>, CliError> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_STDIN_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::io("cannot read stdin", &e))?;
    if bytes.len() as u64 > MAX_STDIN_BYTES {
        return Err(CliError::new(format!("stdin: more than {MAX_STDIN_BYTES} bytes (the most stepmon reads)")));
    }
    Ok(bytes)
}

fn io(path: &Path, e: &std::io::Error) -> CliError {
    CliError::input(&format!("cannot read {}", path.display()), e)
}

fn one_line(path: &Path, e: &dyn std::fmt::Display) -> CliError {
    CliError::new(format!("{}: {e}", path.display()))
}

/// Whether `path` is an unpacked bundle: a directory with `index.json` and
/// `oci-layout` (any other directory is a job's files).
pub fn is_layout(path: &Path) -> bool {
    path.is_dir() && path.join("index.json").is_file() && path.join("oci-layout").is_file()
}

/// Bytes enough to tell a gzip stream (2) or a tar archive (`ustar` at 257).
const SNIFF_BYTES: u64 = 262;

/// Whether the file `path` starts like a build history bundle (gzip or
/// tar magic), read from its first bytes only: a caller that handles only
/// bundles need not read and parse a large job record to learn it is none.
pub fn starts_like_bundle(path: &Path) -> Result<bool, CliError> {
    let mut head = Vec::new();
    let file = std::fs::File::open(path).map_err(|e| io(path, &e))?;
    file.take(SNIFF_BYTES).read_to_end(&mut head).map_err(|e| io(path, &e))?;
    Ok(history::looks_like_bundle(&head))
}

/// What `path` holds (`-`: stdin, read once; an unpacked bundle's
/// directory: its builds). Not for other directories.
pub fn read(path: &Path) -> Result<Input, CliError> {
    if is_layout(path) {
        return read_layout(path).map(Input::Builds);
    }
    let bytes =
        if path == Path::new("-") { read_stdin_bytes()? } else { std::fs::read(path).map_err(|e| io(path, &e))? };
    input::detect(&bytes).map_err(|e| match (&e, path == Path::new("-")) {
        (InputError::NotText(_), true) => CliError::new(format!("cannot read stdin: {e}")),
        (_, true) => CliError::new(format!("stdin: {e}")),
        (_, false) => one_line(path, &e),
    })
}

/// The recorded steps of `import`, read from `path`: the skipped ones are
/// named on stderr; none at all is an error.
pub fn steps(path: &Path, import: Import) -> Result<Vec<Step>, CliError> {
    for skipped in &import.skipped {
        eprintln!("stepmon: {}: skipped {} (`{}`): {}", path.display(), skipped.step_id, skipped.name, skipped.reason);
    }
    if import.steps.is_empty() {
        return Err(CliError::new(format!("{}: no step with recorded usage", path.display())));
    }
    Ok(import.steps)
}

/// The recorded steps of `path`: a run document or a provenance with
/// per-step usage; anything else is an error saying what it is.
pub fn load_steps(path: &Path) -> Result<Vec<Step>, CliError> {
    match read(path)? {
        Input::Steps(import) => steps(path, import),
        Input::Build { no_steps, .. } => Err(one_line(path, &no_steps)),
        Input::Job(_) => Err(CliError::new(format!(
            "{}: a job record: its steps are read by `stepmon report` and `stepmon diff`",
            path.display()
        ))),
        Input::Builds(_) => Err(CliError::new(format!(
            "{}: a build history bundle: its builds are read by `stepmon report` and `stepmon diff`",
            path.display()
        ))),
    }
}

/// An unpacked layout: `index.json`, `oci-layout` and `blobs/sha256/*`
/// (the only files an OCI layout's descriptors can name).
fn read_layout(dir: &Path) -> Result<Vec<Build>, CliError> {
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

/// The `*.json` and `*.jsonl` files of the job directory `dir`, by name.
pub fn job_files(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let read = std::fs::read_dir(dir).map_err(|e| io(dir, &e))?;
    let mut files: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json" || e == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}
