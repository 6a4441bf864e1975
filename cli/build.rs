//! Links the `stepmon` binary with cli/hot-text.ld on Linux: the functions
//! every `stepmon run` executes side by side at the start of its code, so
//! that a start faults its code in 21 times instead of 53 (why, and how the
//! list is made: scripts/hot-text). `STEPMON_HOT_TEXT=0` links without it,
//! for a linker that takes no such script.

fn main() {
    println!("cargo::rerun-if-changed=hot-text.ld");
    println!("cargo::rerun-if-env-changed=STEPMON_HOT_TEXT");
    let wanted = std::env::var("STEPMON_HOT_TEXT").map_or(true, |v| v != "0");
    // GNU ld and LLD (both tried) take a script that ends in `INSERT` as an
    // addition to their default layout.
    if wanted && std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_owned());
        // Two arguments, not `-Wl,-T,PATH`: a comma in the path would split it.
        println!("cargo::rustc-link-arg-bins=-T");
        println!("cargo::rustc-link-arg-bins={manifest}/hot-text.ld");
    }
}
