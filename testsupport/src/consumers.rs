//! The real consumers an export is handed to in tests: a Python that has a
//! parser module, and any program fed on stdin (promtool, a Python parser).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::missing_panics_doc)]

use std::io::Write as _;
use std::process::{Command, Stdio};

/// A Python that can `import module`: `$STEPMON_PYTHON`, `python3`, then
/// `/usr/bin/python3` (a pyenv `python3` on PATH may lack Debian's packages).
#[must_use]
pub fn python_with(module: &str) -> Option<String> {
    let candidates =
        std::env::var("STEPMON_PYTHON").into_iter().chain(["python3".to_owned(), "/usr/bin/python3".to_owned()]);
    candidates.into_iter().find(|python| {
        Command::new(python)
            .args(["-c", &format!("import {module}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// A Python with prometheus_client's OpenMetrics parser ([`python_with`]),
/// or `None` after `SKIPPED test: …` saying what to install (a failure when
/// every test must run: [`crate::skip`]).
#[must_use]
pub fn openmetrics_python_or_skip(test: &str) -> Option<String> {
    let python = python_with("prometheus_client.openmetrics.parser");
    if python.is_none() {
        crate::skip::skip(
            test,
            "no python3 with prometheus_client.openmetrics.parser (tried $STEPMON_PYTHON, python3, /usr/bin/python3; \
             Debian: apt install python3-prometheus-client)",
        );
    }
    python
}

/// Feeds `text` to `program args` on stdin: (success, stdout, stderr).
/// Panics when the program cannot start (the caller checked it is there).
#[must_use]
pub fn pipe(program: &str, args: &[&str], text: &str) -> (bool, Vec<u8>, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.success(), out.stdout, String::from_utf8_lossy(&out.stderr).into())
}
