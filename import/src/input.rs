//! What a file given to `stepmon report` or `stepmon diff` is, told from its
//! bytes (never from its name), in one place: a `docker buildx history
//! export` bundle, a job record, a run document or provenance with per-step
//! usage, or a bare provenance predicate without it.
//!
//! | bytes | [`Input`] |
//! |---|---|
//! | gzip (`1f 8b`) or tar (`ustar` at 257) magic | [`Input::Builds`]: the bundle's builds ([`history::read`]) |
//! | UTF-8 whose first line is a job record line (`{"kind":`) | [`Input::Job`] ([`job::read`]) |
//! | UTF-8 JSON with steps that have usage ([`super::read`]) | [`Input::Steps`] |
//! | a provenance predicate with steps but no per-step usage | [`Input::Build`] ([`history::of_predicate`]) |
//!
//! An unpacked bundle (a directory) and a directory of job files are the
//! caller's to read: no I/O here.

use super::history::{self, Build, HistoryError};
use super::{Import, ImportError};
use stepmon_report::job::{self, JobRecord};

/// What an input turned out to be, read. Exhaustive on purpose: a new
/// kind must be handled by every reader.
#[derive(Debug)]
pub enum Input {
    /// A build history bundle: its builds.
    Builds(Vec<Build>),
    /// A job record.
    Job(JobRecord),
    /// A run document or provenance with per-step usage.
    Steps(Import),
    /// A provenance whose steps have no usage: the build without it, and
    /// why it has no steps (for callers that need steps).
    Build {
        /// The build, from the predicate alone.
        build: Box<Build>,
        /// What [`super::read`] said.
        no_steps: ImportError,
    },
}

/// Why an input is none of the kinds.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// A bundle (by its magic) that cannot be read.
    #[error("{0}")]
    Bundle(HistoryError),
    /// Neither a bundle nor UTF-8 text.
    #[error("not UTF-8 text, nor a build history bundle ({0})")]
    NotText(std::str::Utf8Error),
    /// Text that holds no recorded steps.
    #[error("{0}")]
    Import(ImportError),
    /// A predicate with steps that cannot be read.
    #[error("{0}")]
    Predicate(HistoryError),
}

/// Tells what `bytes` are and reads them.
///
/// ```
/// use stepmon_import::input::{self, Input, InputError};
///
/// let job = br#"{"kind":"stepStart","step":"7.1","name":"build","command":["make"],"start":"2026-12-04T10:00:00Z"}"#;
/// assert!(matches!(input::detect(job), Ok(Input::Job(_))));
/// assert!(matches!(input::detect(b"\xff\xfe"), Err(InputError::NotText(_))));
/// assert!(matches!(input::detect(b"{}"), Err(InputError::Import(_))));
/// ```
///
/// # Errors
/// [`InputError`]: the kind's own reader's error.
pub fn detect(bytes: &[u8]) -> Result<Input, InputError> {
    if history::looks_like_bundle(bytes) {
        return history::read(bytes).map(Input::Builds).map_err(InputError::Bundle);
    }
    let text = std::str::from_utf8(bytes).map_err(InputError::NotText)?;
    if job::looks_like_record(text) {
        return Ok(Input::Job(job::read(text)));
    }
    match super::read(text) {
        Ok(import) => Ok(Input::Steps(import)),
        Err(no_steps) => match history::of_predicate(bytes) {
            Ok(Some(build)) => Ok(Input::Build { build: Box::new(build), no_steps }),
            Ok(None) => Err(InputError::Import(no_steps)),
            Err(e) => Err(InputError::Predicate(e)),
        },
    }
}
