use std::process::Command;

fn main() {
    println!("cargo:rustc-env=WRAP_FIXTURE_BUILT=by its build script");
    println!("cargo:rerun-if-changed=build.rs");
    // A trial compile, as proc-macro2's and autocfg's build scripts make
    // them: through cargo's RUSTC_WRAPPER when there is one.
    let out = std::env::var("OUT_DIR").unwrap();
    let probe = format!("{out}/probe.rs");
    std::fs::write(&probe, "pub fn probe() {}\n").unwrap();
    let rustc = std::env::var("RUSTC").unwrap();
    let mut command = match std::env::var("RUSTC_WRAPPER").ok().filter(|w| !w.is_empty()) {
        Some(wrapper) => {
            let mut command = Command::new(wrapper);
            command.arg(rustc);
            command
        }
        None => Command::new(rustc),
    };
    let status = command.args(["--crate-type=lib", "--emit=metadata", "--out-dir", &out, &probe]).status().unwrap();
    assert!(status.success(), "the trial compile failed");
}
