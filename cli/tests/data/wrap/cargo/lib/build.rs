fn main() {
    println!("cargo:rustc-env=WRAP_FIXTURE_BUILT=by its build script");
    println!("cargo:rerun-if-changed=build.rs");
}
