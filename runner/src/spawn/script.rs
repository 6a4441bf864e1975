//! Executables without a `#!` line: `execve` fails with `ENOEXEC`, and
//! glibc's `execvp` then runs the file with `/bin/sh`, as shells do and as
//! POSIX asks of `execvp` ("the executed command shall be as if the process
//! invoked the sh utility", <https://pubs.opengroup.org/onlinepubs/9799919799/functions/exec.html>).
//! musl's `execvp` returns the error instead, so a static musl stepmon
//! would fail a step that a glibc one runs. Both ways of starting the step
//! (clone3 and fork) retry with [`ShellFallback`] on `ENOEXEC`,
//! so every build behaves like glibc; with glibc the retry is never reached.

use std::ffi::{CStr, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{Access, access};

use super::lookup::find_program;

/// The shell glibc's `execvp` falls back to (`_PATH_BSHELL`); a C string
/// because the clone3 child execs it without allocating.
pub const SHELL: &CStr = c"/bin/sh";

/// The command line that runs a `#!`-less executable with the shell:
/// `/bin/sh PATH-OF-PROGRAM ARGS...`, as glibc builds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellFallback {
    /// `argv` of the shell, `argv[0]` being [`SHELL`].
    pub argv: Vec<OsString>,
}

impl ShellFallback {
    /// The fallback for `command` (program first), with the program looked
    /// up in `path` (the `PATH` value; `None` for unset) by
    /// [`find_program`]: a name is the first file of that name this process
    /// may execute (`execvp` goes past `ENOENT`, `ENOTDIR` and `EACCES` and
    /// stops at any other error, such as `ENOEXEC`). `None` when nothing is
    /// found: then `execvp` cannot have failed with `ENOEXEC` either.
    #[must_use]
    pub fn for_command(command: &[OsString], path: Option<&OsStr>) -> Option<ShellFallback> {
        let (program, args) = command.split_first()?;
        let file = find_program(program, path, executable_file)?;
        let mut argv = Vec::with_capacity(command.len() + 1);
        argv.push(OsStr::from_bytes(SHELL.to_bytes()).to_owned());
        argv.push(file.into_os_string());
        argv.extend(args.iter().cloned());
        Some(ShellFallback { argv })
    }
}

fn executable_file(candidate: &Path) -> bool {
    candidate.is_file() && access(candidate, Access::EXEC_OK).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn a_path_is_used_as_is_and_arguments_follow_it() {
        let fallback = ShellFallback::for_command(&os(&["./job", "a", "b c"]), None).unwrap();
        assert_eq!(fallback.argv, os(&["/bin/sh", "./job", "a", "b c"]));
    }

    #[test]
    fn a_name_is_looked_up_like_execvp() {
        let scratch = tempfile::Builder::new().prefix("stepmon-script-test-").tempdir().unwrap();
        let dir = scratch.path();
        let (first, second) = (dir.join("first"), dir.join("second"));
        for d in [&first, &second] {
            std::fs::create_dir_all(d).unwrap();
        }
        // Not executable in the first directory (EACCES: execvp goes on),
        // executable in the second.
        std::fs::write(first.join("job"), "exit 3\n").unwrap();
        std::fs::set_permissions(first.join("job"), std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(second.join("job"), "exit 3\n").unwrap();
        std::fs::set_permissions(second.join("job"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([dir.join("missing"), first.clone(), second.clone()]).unwrap();
        let fallback = ShellFallback::for_command(&os(&["job", "x"]), Some(&path)).unwrap();
        let expected = vec![OsString::from("/bin/sh"), second.join("job").into_os_string(), OsString::from("x")];
        // root may execute a file without any x bit only if some x bit is
        // set, so the 0o644 file is skipped for root too.
        assert_eq!(fallback.argv, expected);
        assert_eq!(ShellFallback::for_command(&os(&["absent-program"]), Some(&path)), None);
        assert_eq!(ShellFallback::for_command(&[], Some(&path)), None);
        assert_eq!(ShellFallback::for_command(&os(&[""]), Some(&path)), None);
    }
}
