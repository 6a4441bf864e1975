//! Executables without a `#!` line: `execve` fails with `ENOEXEC`, and
//! glibc's `execvp` then runs the file with `/bin/sh`, as shells do and as
//! POSIX asks of `execvp` ("the executed command shall be as if the process
//! invoked the sh utility", <https://pubs.opengroup.org/onlinepubs/9799919799/functions/exec.html>).
//! musl's `execvp` returns the error instead, so a static musl stepmon
//! would fail a step that a glibc one runs. The step's child (clone3 or
//! fork) execs the file with [`SHELL`] on `ENOEXEC` (`/bin/sh PATH-OF-PROGRAM
//! ARGS...`, as glibc builds it), so every build behaves like glibc.

use std::ffi::CStr;

/// The shell glibc's `execvp` falls back to (`_PATH_BSHELL`); a C string
/// because the clone3 child execs it without allocating.
pub(crate) const SHELL: &CStr = c"/bin/sh";
