//! What the two allocation benches (`allocs`, `system_allocs`) share: how
//! many calls they count, how a count is shown per call, and where criterion
//! keeps its results (their TSV files go next to them for `scripts/bench-table`).

use std::path::PathBuf;

/// Calls measured per case; counts are reported per call.
pub const CALLS: u64 = 16;

/// A total over [`CALLS`] calls, per call (two decimals when not whole).
#[must_use]
#[allow(clippy::cast_precision_loss)] // counts far below 2^53
pub fn per_call(total: u64) -> String {
    if total.is_multiple_of(CALLS) {
        (total / CALLS).to_string()
    } else {
        format!("{:.2}", total as f64 / CALLS as f64)
    }
}

/// Where criterion writes its results, by criterion's own rules:
/// `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`, else
/// `<target dir of this binary>/criterion` (the binary is
/// `<target>/<profile>/deps/<name>-<hash>`).
#[must_use]
pub fn criterion_dir() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return Some(home.into());
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return Some(PathBuf::from(target).join("criterion"));
    }
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.parent()?.join("criterion"))
}
