//! A release directory as the GitHub Action and install.sh fetch one:
//! this machine's asset (a link to the binary under test), SHA256SUMS and
//! install.sh, served over HTTP or read from a path by the tests.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The asset name of the static binary for `arch` (`x86_64`, `aarch64`:
/// as install.sh and scripts/dist name it) in a release.
pub fn asset_for(arch: &str) -> String {
    format!("stepmon-{}-{arch}-unknown-linux-musl", env!("CARGO_PKG_VERSION"))
}

/// The asset name of this machine's static binary.
pub fn asset() -> String {
    asset_for(std::env::consts::ARCH)
}

/// `path`'s SHA-256, as coreutils' `sha256sum` prints it.
pub fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_owned()
}

/// `dir` (created) as a release of `binary`: its asset a link to it, listed
/// in SHA256SUMS with `sum` (its own when `None`), and the repository's
/// install.sh.
pub fn release(dir: &Path, binary: &Path, sum: Option<&str>) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    std::os::unix::fs::symlink(binary, dir.join(asset())).unwrap();
    let sum = sum.map_or_else(|| sha256(binary), str::to_owned);
    fs::write(dir.join("SHA256SUMS"), format!("{sum}  {}\n", asset())).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    fs::copy(root.join("scripts/install.sh"), dir.join("install.sh")).unwrap();
    dir.to_owned()
}
