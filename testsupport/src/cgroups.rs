//! What a live test of steps checks at its end: that none of the cgroups
//! this process's steps had is left.

use std::path::PathBuf;

/// The cgroups of this process's steps still there, in any hierarchy
/// below `/sys/fs/cgroup` (the runner names them
/// `stepmon-run.<pid>.<start>[.<n>]`): another process's steps never show.
#[must_use]
pub fn left_of_this_process() -> Vec<PathBuf> {
    let mine = format!("stepmon-run.{}.", std::process::id());
    let mut left = Vec::new();
    let mut dirs = vec![PathBuf::from("/sys/fs/cgroup")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if entry.file_name().to_string_lossy().starts_with(&mine) {
                left.push(path);
            } else if path.components().count() < 12 {
                dirs.push(path);
            }
        }
    }
    left
}
