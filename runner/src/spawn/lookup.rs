//! Finding a command's program as `execvp(3)` does: a name with a `/` is a
//! path, any other name is tried in each directory of `PATH` in turn. Used
//! by `stepmon run` to say "not found" before creating any cgroup, and by
//! the shell fallback ([`super::script`]) to name the file to run.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `PATH` when the variable is unset: musl's `execvp` default (glibc's,
/// `/bin:/usr/bin`, is a subset).
pub(crate) const DEFAULT_PATH: &str = "/usr/local/bin:/bin:/usr/bin";

/// `program` itself if it contains a `/` (whether or not it exists), else
/// the first `DIR/program` that `accept`s, `DIR` going through `path` (the
/// value of `PATH`; `None` when unset). `None` for an empty name.
pub(crate) fn find_program(program: &OsStr, path: Option<&OsStr>, accept: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(program));
    }
    let path = path.unwrap_or(OsStr::new(DEFAULT_PATH));
    std::env::split_paths(path).map(|dir| dir.join(program)).find(|candidate| accept(candidate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_names_and_the_default_path() {
        let accept_all = |_: &Path| true;
        assert_eq!(find_program(OsStr::new("./job"), None, |_| false), Some(PathBuf::from("./job")));
        assert_eq!(
            find_program(OsStr::new("job"), Some(OsStr::new("/a:/b")), |c| c.starts_with("/b")),
            Some("/b/job".into())
        );
        assert_eq!(find_program(OsStr::new("job"), None, accept_all), Some("/usr/local/bin/job".into()));
        assert_eq!(find_program(OsStr::new("job"), Some(OsStr::new("/a")), |_| false), None);
        assert_eq!(find_program(OsStr::new(""), None, accept_all), None);
    }
}
