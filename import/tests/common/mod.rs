//! What the import tests share: the recorded and constructed build
//! history bundles, and the real consumers of the formats (a CommonMark
//! parser, Python's parsers).
#![allow(dead_code)] // each test file uses a part

pub(crate) mod bundle;
#[path = "../../../export/tests/common/markdown.rs"]
pub(crate) mod markdown;
#[allow(unused_imports)] // each test file uses a part
pub(crate) use stepmon_testsupport::skip;

/// A Python that can `import module`: `$STEPMON_PYTHON`, `python3`, then
/// `/usr/bin/python3` (a pyenv `python3` on PATH may lack Debian's packages).
pub(crate) fn python_with(module: &str) -> Option<String> {
    let candidates =
        std::env::var("STEPMON_PYTHON").into_iter().chain(["python3".to_owned(), "/usr/bin/python3".to_owned()]);
    candidates.into_iter().find(|python| {
        std::process::Command::new(python)
            .args(["-c", &format!("import {module}")])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// Feeds `text` to `program args` on stdin: (success, stdout, stderr) — how
/// the tests hand an export to its real consumer (promtool, a Python parser).
pub(crate) fn pipe(program: &str, args: &[&str], text: &str) -> (bool, Vec<u8>, String) {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
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
