//! Links the release `stepmon` binary with cli/hot-text.ld when the build
//! opts in (`STEPMON_HOT_TEXT=1`, which scripts/build-release sets): the
//! functions every `stepmon run` executes side by side at the start of its
//! code, so that a start faults its code in fewer times (why, and how the
//! list is made and checked: scripts/hot-text). Every other build — debug,
//! the tests, `cargo install` — links with the linker's default layout, so
//! a linker that takes no `INSERT` script (mold) or a stale list cannot
//! break or slow it.

fn main() {
    println!("cargo::rerun-if-changed=hot-text.ld");
    println!("cargo::rerun-if-env-changed=STEPMON_HOT_TEXT");
    let wanted = std::env::var("STEPMON_HOT_TEXT").is_ok_and(|v| v == "1");
    // GNU ld and LLD (both tried) take a script that ends in `INSERT` as an
    // addition to their default layout.
    if wanted && std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_owned());
        // Two arguments, not `-Wl,-T,PATH`: a comma in the path would split it.
        println!("cargo::rustc-link-arg-bins=-T");
        println!("cargo::rustc-link-arg-bins={manifest}/hot-text.ld");
    }
}
