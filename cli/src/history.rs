//! `stepmon report BUILD.dockerbuild`: a `docker buildx history export`
//! bundle (or its unpacked OCI layout directory), told apart from other
//! inputs by [`crate::input`], whose builds `stepmon_import::history`
//! renders in every format.

use std::path::Path;

use stepmon_import::history::{self, Build};
use stepmon_report::job;

use crate::input::{self, Input};

/// The builds of `files` when it is one bundle or one unpacked layout
/// (a directory with `index.json` and `oci-layout`); `None` otherwise
/// (stdin is left unread: [`crate::input::read`] reads it once).
// `stepmon baseline` reads with it, which is Linux-only.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn load(files: &[std::path::PathBuf]) -> Result<Option<Vec<Build>>, crate::error::CliError> {
    let [path] = files else { return Ok(None) };
    let bundle =
        input::is_layout(path) || (path != Path::new("-") && path.is_file() && input::starts_like_bundle(path)?);
    if !bundle {
        return Ok(None);
    }
    match input::read(path)? {
        Input::Builds(builds) => Ok(Some(builds)),
        _ => Ok(None),
    }
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
