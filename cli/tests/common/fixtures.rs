//! The build fixtures of the launcher's and `stepmon build`'s tests
//! (`tests/data/wrap`): copied into a test's directory and built with an
//! environment cleared of what would change the build under test.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::skip;

/// The fixture `name`, under `tests/data/wrap`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/wrap").join(name)
}

/// `from`'s files copied under `to` (created).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// `program` with the test's environment less what would change the
/// build under test: the variables cargo sets for this test and for build
/// scripts, wrappers, flags, a jobserver, make's CC and CXX, and stepmon's
/// own (rustup's stay). The cargo builds get a CARGO_HOME of their test's
/// own: the path dependencies need nothing from it, and a cargo of another
/// test waiting for the shared package cache's lock would say so in the
/// stderr compared.
pub fn clean(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    let others =
        ["RUSTC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTFLAGS", "RUSTDOCFLAGS", "MAKEFLAGS", "CC", "CXX"];
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("CARGO") || others.contains(&&*name) || name.starts_with("STEPMON_") {
            command.env_remove(&*name);
        }
    }
    command
}

/// Whether `program --version` runs (else `SKIPPED`).
pub fn tool(name: &str, program: &str) -> bool {
    let found = clean(program).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok();
    if !found {
        skip::skip(name, format_args!("no {program} to build the fixtures"));
    }
    found
}

/// `bytes` as text, invalid UTF-8 replaced.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A wrapper of the caller's own (as a compiler cache is): it notes each
/// call in `calls.log` beside it and runs the rest of its command line.
pub fn fake_wrapper(dir: &Path) -> PathBuf {
    let path = dir.join("fake-wrapper");
    let log = dir.join("calls.log");
    super::write_executable(&path, format!("#!/bin/sh\necho \"$*\" >> '{}'\nexec \"$@\"\n", log.display()));
    path
}
